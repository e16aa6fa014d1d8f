"""Classic active-learning strategies: random, uncertainty (confidence, margin, entropy), Coreset, BADGE.

All are native numpy on the state the task sends (features and predicted
probabilities of the pool). Each spends a round's batch in one ``select``.
scikit-activeml (1.0.1) is the cross-check in tests, not a runtime
dependency (research note §5).

Ties are broken by the lowest pool index (stable sorts), so a seed fixes
every selection.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench import method
from common.active_learning.driver import unlabeled_mask

__all__ = [
    "uncertainty_scores",
    "kcenter_greedy",
    "badge_embedding",
    "kmeanspp_seeding",
    "badge_seeding",
    "Random",
    "Confidence",
    "Margin",
    "Entropy",
    "Coreset",
    "Badge",
]


def uncertainty_scores(proba: np.ndarray, kind: str) -> np.ndarray:
    """Higher is more uncertain. ``kind``: ``confidence`` (1 - max p), ``margin`` (-(p1 - p2)), ``entropy``."""
    if kind == "confidence":
        return 1.0 - proba.max(axis=1)
    if kind == "margin":
        s = np.sort(proba, axis=1)
        return -(s[:, -1] - s[:, -2])
    if kind == "entropy":
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = np.where(proba > 0, np.log(proba), 0.0)
        return -np.sum(proba * lp, axis=1)
    raise ValueError(f"unknown uncertainty {kind!r}")


def top_unlabeled(scores: np.ndarray, labeled: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` unlabelled points with the highest score (lowest index first on ties)."""
    cand = np.flatnonzero(unlabeled_mask(scores.size, labeled))
    order = np.argsort(-scores[cand], kind="stable")
    return cand[order[:count]].astype(np.int64)


def _min_dist(X: np.ndarray, sq: np.ndarray, centers: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``min(d, distance to the nearest of centers)`` for every row of ``X``, in blocks of 256 centers."""
    for s in range(0, centers.size, 256):
        C = X[centers[s : s + 256]]
        D = sq[:, None] - 2 * X @ C.T + np.einsum("ij,ij->i", C, C)[None, :]
        d = np.minimum(d, np.sqrt(np.maximum(D, 0.0)).min(axis=1))
    return d


def kcenter_greedy(X: np.ndarray, labeled: np.ndarray, count: int, d: np.ndarray | None = None) -> np.ndarray:
    """Sener & Savarese's k-center greedy: repeatedly take the point farthest from every chosen/labelled point.

    Euclidean distances on ``X`` (``(n, d)``); ties go to the lowest index.
    ``d`` may carry each point's distance to the labelled set already (the
    strategy keeps it between rounds); it is recomputed when omitted.
    """
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    if d is None:
        d = _min_dist(X, sq, labeled, np.full(n, np.inf)) if labeled.size else np.full(n, np.inf)
    d = d.copy()
    d[labeled] = -1.0
    out = []
    for _ in range(count):
        i = int(np.argmax(d))
        out.append(i)
        d = np.minimum(d, np.sqrt(np.maximum(sq - 2 * X @ X[i] + sq[i], 0.0)))
        d[i] = -1.0
    return np.asarray(out, dtype=np.int64)


def badge_embedding(features: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """BADGE's gradient embedding for a linear softmax head: ``(p - onehot(argmax p)) ⊗ x``, shape ``(n, K*d)``.

    For logits ``W x``, the gradient of the cross-entropy at the predicted
    label ``ŷ`` with respect to ``W`` is ``(p - e_ŷ) x^T``; with a linear
    learner this is exact, and ``x`` is the task's feature vector.
    """
    g = proba.copy()
    g[np.arange(g.shape[0]), np.argmax(proba, axis=1)] -= 1.0
    return (g[:, :, None] * features[:, None, :]).reshape(features.shape[0], -1)


def _d2_sample(d2: np.ndarray, taken: np.ndarray, rng: np.random.Generator) -> int:
    """One draw with probability ∝ ``d2`` (uniform over untaken rows when ``d2`` is all zero)."""
    c = np.cumsum(d2)
    if c[-1] > 0:
        i = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
        return min(i, d2.size - 1)
    return int(rng.choice(np.flatnonzero(~taken)))


def kmeanspp_seeding(E: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """BADGE's k-means++ seeding: first the largest-norm row, then rows drawn with probability ∝ D².

    Returns row indices of ``E`` (``(m, D)``). When every remaining distance
    is 0 (duplicates), the rest are drawn uniformly from unchosen rows.
    """
    sq = np.einsum("ij,ij->i", E, E)
    return _seeding(sq, lambda i: E @ E[i], count, rng)


def badge_seeding(G: np.ndarray, X: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`kmeanspp_seeding` on ``badge_embedding(X, P)`` without forming it.

    With ``G = p - onehot`` (``(m, K)``) and features ``X`` (``(m, d)``),
    ``<g_i ⊗ x_i, g_j ⊗ x_j> = (g_i · g_j)(x_i · x_j)``: each distance update
    costs ``O(m (K + d))`` instead of ``O(m K d)``.
    """
    sq = np.einsum("ij,ij->i", G, G) * np.einsum("ij,ij->i", X, X)
    return _seeding(sq, lambda i: (G @ G[i]) * (X @ X[i]), count, rng)


def _seeding(sq: np.ndarray, dots: Any, count: int, rng: np.random.Generator) -> np.ndarray:
    m = sq.size
    first = int(np.argmax(sq))
    chosen = [first]
    d2 = np.maximum(sq - 2 * dots(first) + sq[first], 0.0)
    taken = np.zeros(m, dtype=bool)
    taken[first] = True
    d2[taken] = 0.0
    while len(chosen) < count:
        i = _d2_sample(d2, taken, rng)
        chosen.append(i)
        taken[i] = True
        d2 = np.minimum(d2, np.maximum(sq - 2 * dots(i) + sq[i], 0.0))
        d2[taken] = 0.0
    return np.asarray(chosen, dtype=np.int64)


class _OneShot:
    """Spends the whole round in one call."""

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        self.rng = np.random.default_rng(seed)
        self.params = params

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def select(self, state: dict[str, Any]) -> np.ndarray:
        return self.pick(state, int(state["remaining"]))


_COMMON = dict(tasks=["active-learning"], version="1", deterministic=True)


@method(name="random-sampling", kind="baseline", reference="uniform sampling from the unlabelled pool", **_COMMON)
class Random(_OneShot):
    """Uniformly random unlabelled points (passive learning)."""

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:
        n = int(state["proba"].shape[0])
        cand = np.flatnonzero(unlabeled_mask(n, np.asarray(state["labeled"])))
        return np.sort(self.rng.choice(cand, size=count, replace=False)).astype(np.int64)


@method(name="confidence", kind="baseline", reference="least-confidence sampling (Settles 2009; LabelBench 'confidence')", **_COMMON)
class Confidence(_OneShot):
    """The points whose top predicted probability is lowest."""

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:
        return top_unlabeled(uncertainty_scores(state["proba"], "confidence"), np.asarray(state["labeled"]), count)


@method(name="margin", kind="baseline", reference="margin sampling (Scheffer et al. 2001; LabelBench 'margin')", **_COMMON)
class Margin(_OneShot):
    """The points with the smallest gap between the two top probabilities."""

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:
        return top_unlabeled(uncertainty_scores(state["proba"], "margin"), np.asarray(state["labeled"]), count)


@method(name="entropy", kind="baseline", reference="entropy sampling (Settles 2009; LabelBench 'entropy')", **_COMMON)
class Entropy(_OneShot):
    """The points with the highest predictive entropy."""

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:
        return top_unlabeled(uncertainty_scores(state["proba"], "entropy"), np.asarray(state["labeled"]), count)


@method(
    name="coreset",
    kind="baseline",
    reference="Sener & Savarese, Active Learning for CNNs: A Core-Set Approach, ICLR 2018 (k-center greedy)",
    deviations="k-center greedy on the task's features (standardised PCA), the analogue of the penultimate-layer embedding; no robust (MIP) variant.",
    **_COMMON,
)
class Coreset(_OneShot):
    """k-center greedy on the pool features (distances to the labelled set are kept between rounds)."""

    _d: np.ndarray | None = None
    _seen = 0

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:
        X = np.asarray(state["features"], dtype=np.float64)
        labeled = np.asarray(state["labeled"], dtype=np.int64)
        if self._d is None:
            self._d = np.full(X.shape[0], np.inf)
        sq = np.einsum("ij,ij->i", X, X)
        self._d = _min_dist(X, sq, labeled[self._seen :], self._d)  # only the points labelled since last time
        self._seen = labeled.size
        return kcenter_greedy(X, labeled, count, d=self._d)


@method(
    name="badge",
    kind="baseline",
    reference="Ash et al., Deep Batch Active Learning by Diverse, Uncertain Gradient Lower Bounds (BADGE), ICLR 2020",
    deviations=(
        "Gradient embeddings are computed from the state's features and probabilities: for the task's linear head "
        "they are exactly the last-layer gradients BADGE uses. k-means++ seeding as in the official code (largest "
        "norm first, then D^2 sampling), drawn with numpy's Generator instead of scipy.stats.rv_discrete."
    ),
    **_COMMON,
)
class Badge(_OneShot):
    """k-means++ seeding on gradient embeddings of the unlabelled points."""

    def pick(self, state: dict[str, Any], count: int) -> np.ndarray:
        X = np.asarray(state["features"], dtype=np.float64)
        P = np.asarray(state["proba"], dtype=np.float64)
        cand = np.flatnonzero(unlabeled_mask(X.shape[0], np.asarray(state["labeled"])))
        G = P[cand].copy()
        G[np.arange(cand.size), np.argmax(G, axis=1)] -= 1.0
        rows = badge_seeding(G, X[cand], count, self.rng)
        return cand[rows].astype(np.int64)
