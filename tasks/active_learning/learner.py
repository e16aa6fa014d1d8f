"""The learner the task fixes: a class-weighted linear (or small MLP) head on frozen features.

The trusted side owns it; methods never fit it. Inputs are the pool's
embedded features (standardised + PCA fitted on the unlabelled pool, see
:mod:`.construct`), so only the head is trained, as in LabelBench's
"selection via proxy" mode with a ``linear`` (or ``shallow``) head.

Class weights are inverse frequencies of the labelled set,
``w_c = n / (n_present * n_c)`` (LabelBench ``pytorch_passive`` and GALAXY's
``train_resnet18`` weight the loss by ``1 / n_c``; the constant factor does
not change the minimiser of the logistic loss except through the fixed
regularisation strength, and this normalisation keeps that strength
comparable across label counts).

A fit depends only on the *set* of labelled points and their labels: rows
are sorted by index before fitting, so the order of queries never changes
the model.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

__all__ = ["Fitted", "fit", "balanced_accuracy", "FitCache"]

#: Inverse regularisation strength of the logistic regression (fixed by the task).
C = 1.0
MLP_HIDDEN = 64


class Fitted:
    """A fitted head. ``predict_proba(X)`` has one column per task class (``n_classes``).

    Classes absent from the labelled set get probability 0; with a single
    labelled class every point gets that class with probability 1.
    """

    def __init__(self, model: Any, classes: np.ndarray, n_classes: int) -> None:
        self.model, self.classes, self.n_classes = model, classes, n_classes

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        out = np.zeros((X.shape[0], self.n_classes))
        if self.model is None:
            out[:, int(self.classes[0])] = 1.0
            return out
        out[:, self.classes] = self.model.predict_proba(X)
        return out

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.argmax(self.predict_proba(X), axis=1)


def fit(X: np.ndarray, y: np.ndarray, n_classes: int, head: str = "logreg") -> Fitted:
    """Fit the task's head on labelled rows ``X`` (``(n, d)``) with labels ``y`` (``(n,)``).

    ``head`` is ``"logreg"`` (multinomial logistic regression, lbfgs, C=1)
    or ``"mlp"`` (one hidden layer of 64 ReLU units, Adam, fixed seed, the
    task's ``full``-tier variant). Both weight samples by inverse class
    frequency.
    """
    classes, counts = np.unique(y, return_counts=True)
    if classes.size == 1:
        return Fitted(None, classes, n_classes)
    w_class = y.size / (classes.size * counts)
    sw = w_class[np.searchsorted(classes, y)]
    if head == "logreg":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=C, max_iter=1000)
        model.fit(X, y, sample_weight=sw)
    elif head == "mlp":
        from sklearn.neural_network import MLPClassifier

        model = MLPClassifier(hidden_layer_sizes=(MLP_HIDDEN,), alpha=1e-3, max_iter=300, random_state=0)
        model.fit(X, y, sample_weight=sw)
    else:
        raise ValueError(f"unknown head {head!r}; use 'logreg' or 'mlp'")
    return Fitted(model, model.classes_.astype(np.int64), n_classes)


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    """Mean per-class recall over the classes present in ``y_true`` (LabelBench's definition)."""
    recalls = []
    for c in range(n_classes):
        m = y_true == c
        if m.any():
            recalls.append(float(np.mean(y_pred[m] == c)))
    return float(np.mean(recalls))


class FitCache:
    """Fitted heads keyed by (pool fingerprint, head, labelled set with labels).

    The session and the verifier's replay of the same job run in the same
    trusted process and fit the same prefixes; the cache makes the replay
    reuse those fits. Keys hash the exact inputs, so a hit is the same model.
    """

    def __init__(self, size: int = 256) -> None:
        self._d: OrderedDict[tuple[str, str, bytes], Fitted] = OrderedDict()
        self.size = size
        self.hits = 0
        self.misses = 0

    def get(self, fp: str, head: str, idx: np.ndarray, labels: np.ndarray, X: np.ndarray, n_classes: int) -> Fitted:
        import hashlib

        order = np.argsort(idx, kind="stable")
        idx_s, lab_s = np.asarray(idx)[order], np.asarray(labels)[order]
        key = (fp, head, hashlib.sha256(idx_s.astype(np.int64).tobytes() + lab_s.astype(np.int64).tobytes()).digest())
        got = self._d.get(key)
        if got is not None:
            self.hits += 1
            self._d.move_to_end(key)
            return got
        self.misses += 1
        model = fit(X[idx_s], lab_s, n_classes, head)
        self._d[key] = model
        while len(self._d) > self.size:
            self._d.popitem(last=False)
        return model


#: One cache per trusted process.
CACHE = FitCache()
