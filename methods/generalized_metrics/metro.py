"""metro: METRO (Metric Optimization) of Mao, Mohri and Zhong (ICML 2025), our reading.

The target metric is a ratio ``M(h) = (a . c(h)) / (b . c(h))`` of two linear
functions of the confusion fractions ``c = (TP, FP, FN, TN) / n``
(:func:`tasks.generalized_metrics.coefficients`). For a fixed ``lam``,
maximising ``a . c(h) - lam * b . c(h)`` is a cost-sensitive classification
problem: a positive point gains ``g1 = (a - lam b)_TP - (a - lam b)_FN`` when
labelled 1, a negative one ``g0 = (a - lam b)_FP - (a - lam b)_TN``. At
``lam* = max_h M(h)`` its maximiser is the metric's maximiser (the paper's
Thm 3.1, as a loss minimisation). METRO alternates the two steps:

1. ``h <- argmin`` of a cost-sensitive surrogate at ``lam`` (here the
   logistic loss weighted by ``|g_y|``, on the relabelled target ``g_y > 0``,
   over the track's model);
2. ``lam <- M(h)``, the empirical metric (Dinkelbach's update; with an exact
   step 1 it increases monotonically to ``lam*``: see :func:`dinkelbach`).

Reference: Mao, Mohri and Zhong, Principled Algorithms for Optimizing
Generalized Metrics in Binary Classification (ICML 2025, PMLR 267 mao25d;
arXiv 2512.23133). No official code was found.

Deviations from the reference
-----------------------------
- The paper's surrogate for the cost-sensitive step could not be read (only
  its abstract and a third-party summary were reachable): we use the
  cost-weighted logistic loss, an H-consistent choice for label-dependent
  costs (UNVERIFIED as the paper's).
- The paper's search for ``lam`` could not be read: we use Dinkelbach's
  update with ``M(h)`` measured on out-of-fold predictions of the training
  set (``folds`` stratified folds shuffled by the seed), keep the ``lam``
  whose out-of-fold metric was best, and refit on the whole training set at
  that ``lam`` (UNVERIFIED).
- The hypothesis classes are the baselines' (scikit-learn's ``LogisticRegression``
  and a one-hidden-layer ``MLPClassifier``, L-BFGS, both with sample weights),
  not the paper's (UNVERIFIED).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from bench import method
from tasks.generalized_metrics import coefficients, confusion

__all__ = ["cost_sensitive_problem", "dinkelbach", "solve"]


def cost_sensitive_problem(a: np.ndarray, b: np.ndarray, lam: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Targets and weights of the cost-sensitive problem at ``lam``.

    Maximising ``(a - lam b) . c(h)`` over predictions ``h`` is minimising
    ``sum_i w_i [h(x_i) != t_i]``: a point of label ``y`` gains ``g_y`` from the
    prediction 1 over 0, so its target is ``t = [g_y > 0]`` and its weight
    ``|g_y|``. Returns ``(t, w)``, int64 and float64 arrays of ``y``'s length.
    """
    g = np.asarray(a, dtype=np.float64) - lam * np.asarray(b, dtype=np.float64)
    gain = np.where(np.asarray(y) == 1, g[0] - g[2], g[1] - g[3])
    return (gain > 0).astype(np.int64), np.abs(gain)


def dinkelbach(
    fit: Callable[[float], np.ndarray],
    value: Callable[[np.ndarray], float],
    *,
    lam0: float = 0.0,
    iters: int = 10,
    tol: float = 1e-6,
) -> tuple[float, float, np.ndarray, list[float]]:
    """Dinkelbach's iteration ``h_k = fit(lam_k)``, ``lam_{k+1} = value(h_k)``.

    ``fit(lam)`` returns predictions (what ``value`` scores) of the maximiser,
    exact or by a surrogate, of ``a . c - lam b . c``. Stops after ``iters``
    steps or when ``lam`` gains less than ``tol``. Returns the best
    ``(lam used, value, predictions)`` seen and the trace of values.
    """
    lam, best, trace = lam0, (lam0, -np.inf, None), []
    for _ in range(iters):
        pred = fit(lam)
        v = float(value(pred))
        trace.append(v)
        if v > best[1]:
            best = (lam, v, pred)
        if v < lam + tol:
            break
        lam = v
    return best[0], best[1], best[2], trace


def _ratio(a: np.ndarray, b: np.ndarray, y: np.ndarray, yhat: np.ndarray) -> float:
    c = confusion(y, yhat)
    den = float(b @ c)
    return float(a @ c) / den if den > 0 else 0.0


def _fit_predict(track: str, X, t, w, X_new, *, seed: int, C: float, hidden: int, mlp_iters: int) -> np.ndarray:
    """Fit the track's model to targets ``t`` with weights ``w`` (the cost-weighted logistic
    surrogate) and label ``X_new`` by the sign of its score.

    ``linear``: ``LogisticRegression(C)``; ``mlp``: ``MLPClassifier`` with one hidden ReLU
    layer, L-BFGS, ``alpha = 1 / C``: the models of the baselines, with sample weights.
    """
    if t.min() == t.max():  # every point wants the same label: no classifier to fit
        return np.full(len(X_new), int(t[0]), dtype=np.int64)
    if track == "linear":
        model = LogisticRegression(C=C, max_iter=2000)
    else:
        model = MLPClassifier(
            hidden_layer_sizes=(hidden,), solver="lbfgs", alpha=1.0 / C, max_iter=mlp_iters, random_state=seed
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, t, sample_weight=w / w.mean())
    return model.predict(X_new).astype(np.int64)


@method(
    name="metro",
    kind="method",
    tasks=["generalized-metrics"],
    reference=(
        "Mao, Mohri and Zhong, Principled Algorithms for Optimizing Generalized Metrics in Binary "
        "Classification (ICML 2025); no official code found"
    ),
    version="1",
    params={"iters": 8, "folds": 3, "C": 1.0, "hidden": 16, "mlp_iters": 150},
    deterministic=True,
    deviations=(
        "cost-weighted logistic surrogate for the cost-sensitive step (the paper's surrogate is UNVERIFIED); "
        "lambda by Dinkelbach on out-of-fold training predictions, refit at the best lambda (UNVERIFIED); "
        "the baselines' scikit-learn models (LogisticRegression, one-hidden-layer MLPClassifier) as hypothesis classes"
    ),
)
def solve(instance, *, seed: int, budget: float, iters: int, folds: int, C: float, hidden: int, mlp_iters: int):
    """Test labels (int64 0/1) from METRO at the ``lam`` Dinkelbach's search found.

    Stops on work (``iters`` Dinkelbach steps, ``mlp_iters`` L-BFGS steps),
    never on the clock.
    """
    data = instance.data
    scaler = StandardScaler().fit(data["X_train"])
    X, y, X_test = scaler.transform(data["X_train"]), np.asarray(data["y_train"]), scaler.transform(data["X_test"])
    a, b = coefficients(data["metric"], float(y.mean()))
    opts = {"seed": seed, "C": C, "hidden": hidden, "mlp_iters": mlp_iters}
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y))

    def out_of_fold(lam: float) -> np.ndarray:
        pred = np.zeros(len(y), dtype=np.int64)
        for train, held in splits:
            t, w = cost_sensitive_problem(a, b, lam, y[train])
            pred[held] = _fit_predict(data["track"], X[train], t, w, X[held], **opts)
        return pred

    lam, _, _, _ = dinkelbach(out_of_fold, lambda pred: _ratio(a, b, y, pred), iters=iters)
    t, w = cost_sensitive_problem(a, b, lam, y)
    return _fit_predict(data["track"], X, t, w, X_test, **opts)
