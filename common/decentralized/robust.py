"""Method-side code of the ``robust-gossip`` task: robust-sum rules F and the F-RG node program.

Every method of the task is one instance of the F-RG framework of Gaucher,
Dieuleveut and Hendrikx (ICML 2025): at each round, node ``i`` receives its
neighbours' rows (those of Byzantine neighbours are replaced by the task's
attack), forms the differences ``x_j - x_i`` and moves by::

    x_i <- x_i + eta * F_i({w_ij, x_j - x_i})

where ``w_ij`` are its (public) Metropolis weights and ``F`` a robust
replacement of the weighted sum ``sum_j w_ij (x_j - x_i)``. The rules here
work on all nodes at once: ``diffs`` is ``(n, K, d)`` (``K`` the widest
neighbourhood, padded slots carry weight 0), ``weights`` is ``(n, K)``.

Rules
    :func:`cs_plus` (CS+, the paper's), :func:`clipped_sum_he` (the adaptive
    threshold of ClippedGossip), :func:`trimmed_sum` (GTS, which gives NNA),
    :func:`plain_sum` (no robustness). The coordinate-wise trimmed mean of
    BRIDGE is not a robust sum of differences; :func:`trimmed_mean_update`
    gives its whole update.

What a node knows (the task's public data): its neighbours and weights,
``byzantine_neighbours`` (``c``: a bound on the number of Byzantine neighbours
of any honest node) and ``byzantine_weight`` (a bound on their total weight).
Each rule is given a per-node Byzantine weight ``b_i`` (:func:`byzantine_bound`);
by default ``c`` times the node's largest weight, as in the paper's code
(``aggregators/robust_gossip.py`` with the weights of ``topology.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.decentralized.program import NodeProgram, Program, exchange, oracle

__all__ = [
    "RTOL",
    "byzantine_bound",
    "cs_plus_threshold",
    "cs_plus",
    "clipped_sum_he",
    "trimmed_sum",
    "plain_sum",
    "clip_rows",
    "trimmed_mean_update",
    "RobustGossip",
]

#: Relative tolerance on weight comparisons: Metropolis weights such as 1/5 do
#: not sum exactly in floating point, and "the clipped weight is exactly 2b" must
#: not flip on the last bit.
RTOL = 1e-9

#: A robust-sum rule: ``rule(diffs (n, K, d), weights (n, K), b (n,)) -> (n, d)``, ``b_i`` the
#: Byzantine weight node ``i`` guards against.
Rule = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def byzantine_bound(data: dict, mode: str = "local") -> np.ndarray:
    """The Byzantine weight ``b_i`` each node guards against, ``(n,)``, from the public data.

    ``local`` (default, the paper's code): ``c * max_j w_ij`` with ``c`` the
    public bound on the number of Byzantine neighbours (the code gives each
    Byzantine edge the largest weight of the row, ``f`` of them per node).
    ``global``: the public ``byzantine_weight``, the largest Byzantine weight
    at any honest node, the same for every node (the ``b`` of the paper's theorems).
    """
    w = np.asarray(data["neighbour_weights"], dtype=np.float64)
    if mode == "global":
        return np.full(w.shape[0], float(data["byzantine_weight"]))
    if mode != "local":
        raise ValueError(f"bound must be 'local' or 'global', got {mode!r}")
    return float(data["byzantine_neighbours"]) * w.max(axis=1)


def _sorted_by_norm(diffs: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Norms ``(n, K)``, and per node the order of its slots by increasing norm (padded slots last)."""
    norms = np.linalg.norm(diffs, axis=2)
    key = np.where(weights > 0, norms, np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    return norms, order, np.take_along_axis(key, order, axis=1)


def clip_rows(diffs: np.ndarray, norms: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """Each difference scaled to norm at most ``tau`` (per node, ``(n,)``; ``inf``: no clipping)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(norms > tau[:, None], tau[:, None] / norms, 1.0)
    return diffs * np.nan_to_num(scale, nan=0.0, posinf=1.0)[:, :, None]


def cs_plus_threshold(norms: np.ndarray, weights: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """The CS+ clipping threshold of every node, ``(n,)``.

    The smallest set of largest differences whose weight reaches ``2 b`` is
    clipped: ``tau_i`` is the norm of the largest difference left below it,
    i.e. with the neighbours sorted by norm, ``tau_i = ||d_(k)||`` for the
    largest ``k`` such that the weight strictly after position ``k`` is at
    least ``2 b`` (``tau_i = 0`` when even all neighbours weigh less than
    ``2 b``; ``inf`` when ``b = 0``). This is the rule of ``cs_plus`` in the
    paper's code (where the node's own zero difference and its weight come
    first in the sorted list, which changes nothing).
    """
    n, K = norms.shape
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (n,))
    key = np.where(weights > 0, norms, np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    w = np.take_along_axis(weights, order, axis=1)
    d = np.take_along_axis(key, order, axis=1)
    total = w.sum(axis=1, keepdims=True)
    # weight strictly after position k, for k = 0 (nothing kept) .. K
    after = total - np.concatenate([np.zeros((n, 1)), np.cumsum(w, axis=1)], axis=1)
    ok = after >= 2.0 * b[:, None] * (1.0 - RTOL)
    kstar = ok.sum(axis=1) - 1  # ``after`` does not increase, so ok is a prefix
    padded = np.concatenate([np.zeros((n, 1)), d], axis=1)
    tau = padded[np.arange(n), np.maximum(kstar, 0)]
    tau = np.where(kstar < 0, 0.0, tau)
    return np.where(b > 0, tau, np.inf)


def cs_plus(diffs: np.ndarray, weights: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """CS+: the weighted sum of the differences clipped at :func:`cs_plus_threshold`."""
    norms = np.linalg.norm(diffs, axis=2)
    tau = cs_plus_threshold(norms, weights, b)
    return np.einsum("ik,ikd->id", weights, clip_rows(diffs, norms, tau))


def clipped_sum_he(diffs: np.ndarray, weights: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """ClippedGossip's adaptive clipping (He, Karimireddy and Jaggi, 2022, their practical rule).

    ``tau_i^2 = (1 / b) * sum_j w_ij ||x_j - x_i||^2`` over the neighbours
    sorted by norm that lie strictly below the weight level ``total - b``
    (the largest weight-``b`` part is left out of the estimate); then the
    clipped weighted sum. Follows ``cs_he`` of the paper's code.
    """
    n = diffs.shape[0]
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (n,))
    norms, order, d = _sorted_by_norm(diffs, weights)
    w = np.take_along_axis(weights, order, axis=1)
    cum = np.cumsum(w, axis=1)
    total = cum[:, -1:]
    below = cum < (total - b[:, None]) * (1.0 - RTOL)  # strictly before the entry that crosses total - b
    sq = np.where(below & np.isfinite(d), w * np.where(np.isfinite(d), d, 0.0) ** 2, 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = np.where(b > 0, np.sqrt(sq / np.where(b > 0, b, 1.0)), np.inf)
    return np.einsum("ik,ikd->id", weights, clip_rows(diffs, norms, tau))


def trimmed_sum(diffs: np.ndarray, weights: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """GTS: drop the largest differences of total weight ``b`` (the crossing one in part); sum the rest.

    With Metropolis weights this is NNA (nearest-neighbour averaging,
    Farhadkhani et al., 2023) in the F-RG framework, as the paper says.
    """
    n = diffs.shape[0]
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (n,))
    norms, order, d = _sorted_by_norm(diffs, weights)
    w = np.take_along_axis(weights, order, axis=1)
    total = w.sum(axis=1, keepdims=True)
    keep_level = np.maximum(total - b[:, None], 0.0)
    before = np.concatenate([np.zeros((n, 1)), np.cumsum(w, axis=1)[:, :-1]], axis=1)
    kept = np.clip(keep_level - before, 0.0, w)  # weight kept of each sorted entry
    kept = np.where(kept <= RTOL * np.maximum(w, 1e-300), 0.0, kept)
    sorted_diffs = np.take_along_axis(diffs, order[:, :, None], axis=1)
    return np.einsum("ik,ikd->id", kept, sorted_diffs)


def plain_sum(diffs: np.ndarray, weights: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    """The weighted sum itself: F-RG with it is plain gossip ``x <- x + eta (W - I) x``."""
    return np.einsum("ik,ikd->id", weights, diffs)


def trimmed_mean_update(x: np.ndarray, got: np.ndarray, mask: np.ndarray, trim: int) -> np.ndarray:
    """BRIDGE's update: per coordinate, the mean of the node's own value and its neighbours'
    values after dropping the ``trim`` largest and ``trim`` smallest (at most all but one
    middle value, which keeps the median)."""
    vals = np.concatenate([x[:, None, :], got], axis=1)  # (n, 1+K, d)
    ok = np.concatenate([np.ones((x.shape[0], 1), dtype=bool), mask], axis=1)
    big = np.where(ok[:, :, None], vals, np.inf)
    srt = np.sort(big, axis=1)
    count = ok.sum(axis=1)  # values per node
    t = np.minimum(trim, (count - 1) // 2)
    idx = np.arange(srt.shape[1])[None, :]
    keep = (idx >= t[:, None]) & (idx < (count - t)[:, None])
    s = np.where(keep[:, :, None], np.where(np.isfinite(srt), srt, 0.0), 0.0).sum(axis=1)
    return s / keep.sum(axis=1)[:, None]


class RobustGossip(NodeProgram):
    """The F-RG node program for both workloads of ``robust-gossip``; a method sets :attr:`rule`.

    ``consensus``: read each node's value (oracle ``value``), then ``rounds``
    robust gossip steps. ``dsgd``: start at 0; each round, a stochastic
    gradient step of size ``lr / L`` (oracle ``grad``, ``L`` the public
    smoothness bound, decaying as ``1 / (1 + decay t)``) and then one robust gossip step, as D-SGD with F-RG
    as its communication step.

    Parameters (every method): ``eta``, the communication step as a multiple
    of ``1 / mu_max`` (``mu_max`` the public largest eigenvalue of the
    weighted Laplacian ``I - W``; the paper's code uses ``1 / mu_max``); and
    ``lr`` and ``decay`` (the D-SGD step at round ``t`` is
    ``lr / (L (1 + decay t))``); and ``bound`` (:func:`byzantine_bound`: ``local``, the paper's
    code, or ``global``).
    """

    rule: Rule = staticmethod(plain_sum)

    def step(self, x: np.ndarray, got: np.ndarray) -> np.ndarray:
        """One robust gossip step from the received rows ``got`` (``(n, K, d)``)."""
        w = np.asarray(self.data["neighbour_weights"], dtype=np.float64)
        eta = float(self.params.get("eta", 1.0)) / float(self.data["laplacian_max_eig"])
        b = byzantine_bound(self.data, str(self.params.get("bound", "local")))
        return x + eta * type(self).rule(got - x[:, None, :], w, b)

    def program(self) -> Program:
        workload = self.data["workload"]
        if workload == "consensus":
            x = yield oracle("value")
            while self.rounds_left > 0:
                got = yield exchange(x)
                x = self.step(x, got)
            return x
        x = np.zeros((self.n, int(self.data["dim"])))
        lr = float(self.params.get("lr", 1.0)) / float(self.data["smoothness"])
        decay = float(self.params.get("decay", 0.05))
        t = 0
        while self.rounds_left > 0:
            g = yield oracle("grad", x)
            y = x - lr / (1.0 + decay * t) * g
            t += 1
            got = yield exchange(y)
            x = self.step(y, got)
        return x
