"""GALAXY (Zhang, Katz-Samuels & Nowak, ICML 2022), as LabelBench implements it.

Reference: ``LabelBench/strategy/strategy_impl/galaxy.py`` (EfficientTraining/LabelBench),
re-implemented in numpy from a reading of it; no code is copied.

Each query of a round (one at a time, since each uses the labels before it):

1. pick a class ``k`` uniformly (``K = 2``: the single graph of class 0);
2. sort the pool by the margin score of ``k`` (DIRECT's scores, a linear graph);
3. among the runs of unlabelled points between two consecutive labelled
   points with different labels (a "cut"), query the middle of the shortest
   (the first on ties): bisection;
4. without such a run, find adjacent labelled pairs ``(not-k, k)`` (the
   wrong way round) and query the nearest unlabelled point to their left or
   right (left scan first, later pairs win its ties; the right scan replaces
   it only when strictly nearer);
5. otherwise a uniformly random unlabelled point.
"""

from __future__ import annotations

import numpy as np

from bench import method
from common.active_learning.driver import Plan, RoundContext, RoundStrategy
from common.active_learning.margins import direct_margins

__all__ = ["Galaxy", "galaxy_pick"]


def galaxy_pick(lab_sorted_k: np.ndarray, rng: np.random.Generator) -> int:
    """Position (in score order) of GALAXY's next query on one linear graph.

    ``lab_sorted_k`` is ``1`` (labelled ``k``), ``0`` (labelled other) or
    ``-1`` (unlabelled), in score order.
    """
    L = lab_sorted_k
    pos = np.flatnonzero(L >= 0)
    if pos.size >= 2:
        y = L[pos]
        gaps = np.diff(pos) - 1  # unlabelled points between consecutive labelled ones
        cut = (y[1:] != y[:-1]) & (gaps > 0)
        if cut.any():
            j = np.flatnonzero(cut)
            best = j[np.argmin(gaps[j])]  # argmin: first on ties, as the strict comparison of the official scan
            a, b = pos[best] + 1, pos[best + 1] - 1
            return int((a + b) // 2)
        adj = np.flatnonzero((np.diff(pos) == 1) & (y[:-1] == 0) & (y[1:] == 1))
        if adj.size:
            unl = np.flatnonzero(L < 0)
            if unl.size:
                nearest, dist = None, L.size + 1
                left0 = pos[adj]  # the 'not k' node of each pair
                k_left = np.searchsorted(unl, left0) - 1  # last unlabelled before it
                for p, kl in zip(left0.tolist(), k_left.tolist(), strict=True):
                    if kl >= 0 and dist >= p - unl[kl]:
                        dist, nearest = p - int(unl[kl]), int(unl[kl])
                right1 = pos[adj + 1]  # the 'k' node of each pair
                k_right = np.searchsorted(unl, right1)  # first unlabelled after it
                for p, kr in zip(right1[::-1].tolist(), k_right[::-1].tolist(), strict=True):
                    if kr < unl.size and dist > int(unl[kr]) - p:
                        dist, nearest = int(unl[kr]) - p, int(unl[kr])
                if nearest is not None:
                    return nearest
    unl = np.flatnonzero(L < 0)
    return int(rng.choice(unl))


def galaxy_plan(ctx: RoundContext, rng: np.random.Generator) -> Plan:
    """One GALAXY round: ``ctx.budget`` single queries."""
    n, K = ctx.n_pool, ctx.n_classes
    lab = np.full(n, -1, dtype=np.int64)
    lab[ctx.labeled] = ctx.labels
    if K > 2:
        scores = direct_margins(ctx.proba)
        graphs = [np.argsort(-scores[:, k], kind="stable") for k in range(K)]
    else:
        graphs = [np.argsort(-ctx.proba[:, 0], kind="stable")]
    for _ in range(ctx.budget):
        if not (lab < 0).any():
            return
        k = int(rng.integers(K)) if K > 2 else 0
        order = graphs[k]
        L = lab[order]
        Lk = np.where(L < 0, -1, (L == k).astype(np.int64))
        p = galaxy_pick(Lk, rng)
        got = yield np.asarray([order[p]], dtype=np.int64)
        lab[order[p]] = int(got[0])


@method(
    name="galaxy",
    kind="baseline",
    tasks=["active-learning"],
    reference="Zhang, Katz-Samuels & Nowak, GALAXY: Graph-based Active Learning at the Extreme, ICML 2022; LabelBench strategy_impl/galaxy.py",
    version="1",
    deterministic=True,
    deviations=(
        "Vectorised scans over the labelled points instead of node-by-node loops (same choices, including tie "
        "rules); stable sorts. Binary tasks sort by p_0 as the official code does (its operator precedence makes "
        "the margin preds[:, 0] when K = 2). Labels come from the task's oracle (noisy by default)."
    ),
)
class Galaxy(RoundStrategy):
    """Graph-based bisection on one-vs-rest margin orderings, one query at a time."""

    def plan(self, ctx: RoundContext) -> Plan:
        return galaxy_plan(ctx, self.rng)
