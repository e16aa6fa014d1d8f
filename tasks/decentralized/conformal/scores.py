"""Calibration and test scores of the ``conformal-decentralized`` task, and split CP on them.

Every data set gives LAC nonconformity scores ``s(x, y) = 1 - p_y(x)`` of one
shared pre-trained classifier (Sadinle et al., 2019; the paper's score):

``digits``
    scikit-learn's bundled 8x8 digits (1,797 images, 10 classes); a
    multinomial logistic regression trained on 300 of them.
``cancer``
    scikit-learn's bundled breast-cancer set (569 points, 2 classes); the same
    classifier on 169 of them.
``synth``
    a ``make_classification`` draw (6,000 points, 20 features, 10 classes);
    the same classifier on 2,000 of them.
``dirichlet``
    no classifier: the softmax vector of each point is drawn from a
    Dirichlet whose concentration is 1 on every class and ``1 + 4`` on the
    true one (an overconfident-but-informative model, 10 classes).

Calibration points are split over ``K`` devices of equal size: ``iid``
draws them at random; ``noniid`` sorts them by label and cuts the sorted list
into ``K`` contiguous shards (label-sorted shards: each device sees about
``C / K`` classes, or a part of one class when ``K > C``; the paper's split
gives each device its own classes). The test set is the rest of the points,
drawn from the pooled distribution.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DATASETS", "SPLITS", "Scores", "make_scores", "split_cp_quantile", "split_cp_rank", "coverage_and_size", "TestScores"]

DATASETS = ("digits", "cancer", "synth", "dirichlet")
SPLITS = ("iid", "noniid")
#: (training points, calibration points) per data set; the rest is the test set.
SIZES = {"digits": (300, 600), "cancer": (169, 200), "synth": (2000, 2000), "dirichlet": (0, 2000)}
DIRICHLET_POINTS, DIRICHLET_CLASSES, DIRICHLET_BOOST = 6000, 10, 4.0


class Scores:
    """Scores of one draw.

    Attributes
    ----------
    calib
        ``float64 (K, n)``: device ``k``'s calibration scores ``s(x_i, y_i)`` (row ``k``).
    calib_labels
        ``int64 (K, n)``: their labels (trusted side only; kept for the records).
    test
        ``float64 (n_test, C)``: ``s(x, y)`` of every test point and class.
    test_labels
        ``int64 (n_test,)``.
    calib_probs
        ``float64 (K, n, C)``: the softmax vectors behind ``calib``
        (``calib = 1 - calib_probs[..., label]``), for the side-by-side with
        the official code, which takes softmax matrices; never instance data.
    """

    def __init__(self, calib: np.ndarray, calib_labels: np.ndarray, test: np.ndarray, test_labels: np.ndarray, calib_probs: np.ndarray) -> None:
        self.calib, self.calib_labels, self.test, self.test_labels = calib, calib_labels, test, test_labels
        self.calib_probs = calib_probs

    @property
    def n_classes(self) -> int:
        return int(self.test.shape[1])


def _classifier_probs(name: str, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Softmax outputs and labels of the points not used for training, and the training count."""
    from sklearn.datasets import load_breast_cancer, load_digits, make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    if name == "digits":
        X, y = load_digits(return_X_y=True)
    elif name == "cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = make_classification(
            n_samples=6000, n_features=20, n_informative=10, n_redundant=4, n_classes=10,
            n_clusters_per_class=1, class_sep=1.0, flip_y=0.02, random_state=seed,
        )
    rng = np.random.default_rng([seed, DATASETS.index(name), 11])
    perm = rng.permutation(len(y))
    n_train = SIZES[name][0]
    tr, rest = perm[:n_train], perm[n_train:]
    scaler = StandardScaler().fit(X[tr])
    clf = LogisticRegression(C=0.05, max_iter=2000).fit(scaler.transform(X[tr]), y[tr])
    probs = clf.predict_proba(scaler.transform(X[rest]))
    return probs, y[rest].astype(np.int64), n_train


def _dirichlet_probs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, DATASETS.index("dirichlet"), 13])
    y = rng.integers(0, DIRICHLET_CLASSES, DIRICHLET_POINTS)
    conc = np.ones((DIRICHLET_POINTS, DIRICHLET_CLASSES))
    conc[np.arange(DIRICHLET_POINTS), y] += DIRICHLET_BOOST
    g = rng.standard_gamma(conc)  # a Dirichlet(conc_i) row each, via normalised gammas
    return g / g.sum(axis=1, keepdims=True), y


def make_scores(data: str, split: str, k: int, seed: int) -> Scores:
    """The scores of one instance: ``K`` devices of ``floor(n_cal / K)`` calibration points each.

    The calibration points left over by the equal split join the test set.
    Deterministic in its arguments (numpy ``default_rng`` streams keyed by them).
    """
    if data not in DATASETS:
        raise ValueError(f"unknown data set {data!r}; expected one of {DATASETS}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if data == "dirichlet":
        probs, y = _dirichlet_probs(seed)
    else:
        probs, y, _ = _classifier_probs(data, seed)
    n_cal = SIZES[data][1]
    per = n_cal // k
    if per < 1:
        raise ValueError(f"{data}: {n_cal} calibration points cannot be split over K={k} devices")
    rng = np.random.default_rng([seed, DATASETS.index(data), SPLITS.index(split), k, 17])
    perm = rng.permutation(len(y))
    cal, test = perm[: per * k], perm[per * k :]
    if split == "noniid":
        cal = cal[np.argsort(y[cal], kind="stable")]
    s = 1.0 - probs
    calib = s[cal, y[cal]].reshape(k, per)
    return Scores(calib, y[cal].reshape(k, per), s[test], y[test], probs[cal].reshape(k, per, -1))


def split_cp_rank(n: int, alpha: float) -> int:
    """``ceil((n + 1)(1 - alpha))``: the rank (1-based) of split CP's threshold among ``n`` scores.

    Above ``n``, the threshold is ``+inf`` (every label is in the set). The
    product is rounded to 9 decimals first, so that ``(n+1)(1-alpha)`` that is
    an integer in exact arithmetic is not pushed up by a float error.
    """
    return int(math.ceil(round((n + 1) * (1.0 - alpha), 9)))


def split_cp_quantile(scores: np.ndarray, alpha: float) -> float:
    """Split CP's threshold on pooled ``scores``: the ``ceil((N+1)(1-alpha))``-th smallest, or ``inf``."""
    v = np.sort(np.asarray(scores, dtype=np.float64).ravel())
    r = split_cp_rank(v.size, alpha)
    return float(v[r - 1]) if r <= v.size else math.inf


def coverage_and_size(test: np.ndarray, labels: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-threshold coverage and mean set size of the sets ``{y : s(x, y) <= q_k}`` on the test set.

    ``test`` is ``(n_test, C)``, ``labels`` ``(n_test,)``, ``q`` ``(K,)``;
    returns two ``(K,)`` arrays. Sets may be empty (the paper's notebooks set
    ``allow_empty_sets = True``).
    """
    return TestScores(test, labels).coverage_and_size(q)


class TestScores:
    """The test set, sorted once, for many thresholds (the session scores a report every round)."""

    def __init__(self, test: np.ndarray, labels: np.ndarray) -> None:
        self.n = test.shape[0]
        self.true = np.sort(test[np.arange(self.n), labels])
        self.every = np.sort(test.ravel())

    def coverage_and_size(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As :func:`coverage_and_size`."""
        q = np.asarray(q, dtype=np.float64)
        cov = np.searchsorted(self.true, q, side="right") / self.n
        size = np.searchsorted(self.every, q, side="right") / self.n
        return cov, size
