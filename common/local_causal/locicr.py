"""LocICR (Li et al., ICML 2025) and the MMB-by-MMB local learner it builds on (Xie et al., ICML 2024).

Written from the official code (github.com/zhengli0060/LocICR at 6c704b2: ``Loc_ICR.py``,
``Utils/MB_TC.py``, ``Utils/orient_rules.py``, ``Utils/find_condition_sets.py``), read, not
copied. The paper's PDF was not readable here; every step below follows the official code,
and the names of the sets (PA*, NE*, NE*_M, "alpha set" = non-descendants in MB) follow its
comments. The relation identified is that of the *treatment* X (the learner's target) to Y:
local structure is learned around X.

Steps (``LocalLearner.relation(y)``):

1. Markov blanket of a node by total conditioning (``MB_TC``): V is in MB(T) iff T and V
   are dependent given all other observed variables, at level ``alpha / (10 floor(q/10))``.
2. MMB-by-MMB (Xie et al. 2024): from T, learn the skeleton inside MB+(node) (PC-style, sets
   drawn from the smaller of N(a) ∪ N(b) and N(a) ∩ MB(b), up to ``max_k``), orient v-structures
   that contain the node or hang off it on a collider path, apply FCI's R1-R4 to the partial
   PAG, and expand along adjacencies until stop rule 1 or 3 holds.
3. The local characterisation: Y adjacent to X is read off the edge; otherwise PA* (MB members
   with an arrowhead at X, or joined by a collider path whose other nodes are known
   non-descendants), NE* and NE*_M (per maximal clique of X's circle neighbours) decide:
   Y in PA*, NE* or some NE*_M, or Y ⊥ X | PA* -> non-cause; Y not⊥ X | PA* ∪ NE* ->
   definite (explicit) cause; Y ⊥ X | PA* ∪ NE*_M for some M -> possible; else definite
   (implicit) cause.

Deviations from the official code (also in the README):

- MB_TC pre-selects each conditioning set with two Lasso fits on the data; here the method
  never sees data (the task answers CI tests), so the full set is used (Fisher z with up to
  q - 2 conditioning variables, n >= 1000).
- ``N(a) | N(b) - {a, b}`` in the official skeleton step includes b itself (operator
  precedence); here both a and b are excluded, as the comment intends.
- Edges are removed from a snapshot of the edge list (the official loop removes edges from the
  networkx view it iterates over).
- Collider paths are found by a depth-first search that only extends through colliders (the
  official code enumerates all simple paths of the skeleton, then filters): same set of paths.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from itertools import combinations

import numpy as np

from tasks.local_causal.graphs import ARROW, CAUSE, CIRCLE, NON_CAUSE, NONE, POSSIBLE, TAIL

__all__ = ["LocalLearner", "orient_rules"]

CI = Callable[[int, int, Iterable[int]], float]


def _min_disc_path(pag: np.ndarray, a: int, b: int, c: int) -> list[int]:
    """A minimal discriminating path for b on <.., a, b, c> (official ``minDiscPath``)."""
    visited = {a, b, c}
    ind = [
        int(i) for i in np.flatnonzero((pag[a] != NONE) & (pag[:, a] == ARROW)) if i not in visited
    ]
    paths = [[a, i] for i in ind]
    while paths:
        mpath = paths.pop(0)
        d = mpath[-1]
        if pag[c, d] == NONE and pag[d, c] == NONE:
            return mpath[::-1] + [b, c]
        pred = mpath[-2]
        visited.add(d)
        if pag[d, c] == ARROW and pag[c, d] == TAIL and pag[pred, d] == ARROW:
            nxt = [
                int(i)
                for i in np.flatnonzero((pag[d] != NONE) & (pag[:, d] == ARROW))
                if i not in visited
            ]
            paths.extend(mpath + [i] for i in nxt)
    return []


def orient_rules(pag: np.ndarray, sepset: dict[tuple[int, int], frozenset[int]]) -> np.ndarray:
    """FCI's R1-R4 on a partial PAG, as in the official ``orient_rules`` (sepsets must exist)."""

    def sep_has(i: int, k: int, j: int) -> bool:
        s = sepset.get((i, k))
        return s is not None and j in s

    old = None
    while old is None or not np.array_equal(pag, old):
        old = pag.copy()
        # R1: i *-> j o-* k, i and k non-adjacent, j in sepset(i, k) -> j -> k
        for i, j in np.argwhere((pag == ARROW) & (pag.T != NONE)):
            ks = np.flatnonzero(
                (pag[j] != NONE) & (pag[:, j] == CIRCLE) & (pag[i] == NONE) & (pag[:, i] == NONE)
            )
            for k in ks:
                if k != i and sep_has(int(i), int(k), int(j)):
                    pag[j, k] = ARROW
                    pag[k, j] = TAIL
        # R2: i -> j *-> k or i *-> j -> k, with i *-o k -> i *-> k
        for i, k in np.argwhere((pag == CIRCLE) & (pag.T != NONE)):
            js = np.flatnonzero(
                ((pag[i] == ARROW) & (pag[:, i] == TAIL) & (pag[:, k] == ARROW) & (pag[k] != NONE))
                | (
                    (pag[i] == ARROW)
                    & (pag[:, i] != NONE)
                    & (pag[:, k] == ARROW)
                    & (pag[k] == TAIL)
                )
            )
            if js.size:
                pag[i, k] = ARROW
        # R3: i *-> j <-* k, i *-o m o-* k, i, k non-adjacent, m *-o j, m in sepset(i, k) -> m *-> j
        for j, mm in np.argwhere((pag != NONE) & (pag.T == CIRCLE)):
            ik = np.flatnonzero(
                (pag[j] != NONE) & (pag[:, j] == ARROW) & (pag[:, mm] == CIRCLE) & (pag[mm] != NONE)
            )
            if ik.size >= 2:
                for u in range(ik.size - 1):
                    for w in range(u + 1, ik.size):
                        if pag[mm, j] == ARROW:
                            break
                        a, c = int(ik[u]), int(ik[w])
                        if pag[a, c] == NONE and pag[c, a] == NONE and sep_has(a, c, int(mm)):
                            pag[mm, j] = ARROW
        # R4: discriminating paths
        for j, k in np.argwhere((pag != NONE) & (pag.T == CIRCLE)):
            ind_i = list(
                np.flatnonzero(
                    (pag[j] == ARROW)
                    & (pag[:, j] != NONE)
                    & (pag[k] == TAIL)
                    & (pag[:, k] == ARROW)
                )
            )
            while ind_i and pag[k, j] == CIRCLE:
                i = int(ind_i.pop(0))
                if pag[i, j] == NONE or pag[i, k] == NONE or pag[j, k] == NONE:
                    continue
                path = _min_disc_path(pag, i, int(j), int(k))
                if path:
                    s = sepset.get((path[0], path[-1]))
                    if s is not None:
                        if int(j) in s:
                            pag[j, k] = ARROW
                            pag[k, j] = TAIL
                        else:
                            pag[i, j] = pag[j, k] = pag[k, j] = ARROW
    return pag


def _is_collider_path(pag: np.ndarray, path: list[int]) -> bool:
    if len(path) == 2:
        return False
    return all(
        pag[path[i - 1], path[i]] == ARROW and pag[path[i + 1], path[i]] == ARROW
        for i in range(1, len(path) - 1)
    )


class LocalLearner:
    """MMB-by-MMB around one treatment X, then LocICR's identification of X's relation to a Y."""

    def __init__(
        self,
        ci: CI,
        q: int,
        target: int,
        alpha: float = 0.01,
        max_k: int = 3,
        max_paths: int = 10000,
    ) -> None:
        self.ci = ci
        self.q = q
        self.target = target
        self.alpha = alpha
        decades = math.floor(q / 10)
        self.mb_alpha = alpha / (decades * 10) if decades > 0 else alpha
        self.max_k = max_k
        self.max_paths = max_paths
        self.pag = np.zeros((q, q), dtype=np.int64)
        self.sepset: dict[tuple[int, int], frozenset[int] | str] = {}
        self.mb: dict[int, set[int]] = {}
        self.adj: dict[int, set[int]] = {}
        self.waitlist = [target]
        self.done: list[int] = []

    # --- bookkeeping (official _add_edge, _add_separation, _add_arrow_in_edge)
    def indep(self, a: int, b: int, s: Iterable[int]) -> bool:
        return self.ci(a, b, sorted(s)) > self.alpha

    def _add_edge(self, i: int, j: int) -> None:
        self.sepset[(i, j)] = self.sepset[(j, i)] = "adj"
        if self.pag[i, j] == NONE and self.pag[j, i] == NONE:
            self.pag[i, j] = self.pag[j, i] = CIRCLE

    def _add_sep(self, i: int, j: int, s: Iterable[int]) -> None:
        fs = frozenset(s)
        self.sepset[(i, j)] = self.sepset[(j, i)] = fs
        if self.pag[i, j] != NONE and self.pag[j, i] != NONE:
            self.pag[i, j] = self.pag[j, i] = NONE

    def _add_arrow(self, i: int, j: int) -> None:
        self.pag[i, j] = ARROW
        if self.pag[j, i] == NONE:
            self.pag[j, i] = CIRCLE

    def is_adj(self, i: int, j: int) -> bool:
        return self.sepset.get((i, j)) == "adj"

    def is_not_adj(self, i: int, j: int) -> bool:
        s = self.sepset.get((i, j))
        return s is not None and s != "adj"

    # --- step 1: Markov blanket by total conditioning
    def learn_mb(self, node: int) -> None:
        if node in self.mb:
            return
        others = [v for v in range(self.q) if v != node]
        mb = []
        for v in others:
            cond = [u for u in others if u != v]
            if self.ci(node, v, cond) <= self.mb_alpha:
                mb.append(v)
        self.mb[node] = set(mb)
        for v in set(others) - set(mb):
            self._add_sep(node, v, mb)

    # --- step 2: MMB-by-MMB
    def _learn_mb_structure(self, node: int) -> None:
        mbp = self.mb[node] | {node}
        self.adj.setdefault(node, set())
        nbrs = {a: set(mbp) - {a} for a in mbp}  # complete graph on MB+(node)
        size = 0
        while size <= self.max_k:
            cont = False
            for a, b in [(a, b) for a in sorted(mbp) for b in sorted(mbp) if a < b]:
                if b not in nbrs[a]:
                    continue
                if self.is_not_adj(a, b):
                    nbrs[a].discard(b)
                    nbrs[b].discard(a)
                    continue
                if self.is_adj(a, b):
                    continue
                self.learn_mb(b)
                cands = [(nbrs[a] | nbrs[b]) - {a, b}, (nbrs[a] & self.mb[b]) - {a, b}]
                if len(mbp) > 10:
                    cands += [nbrs[a] - {a, b}, nbrs[b] - {a, b}]
                cand = min(cands, key=len)
                if len(cand) >= size:
                    cont = True
                    for s in combinations(sorted(cand), size):
                        if self.indep(a, b, s):
                            self._add_sep(a, b, s)
                            nbrs[a].discard(b)
                            nbrs[b].discard(a)
                            break
            if not cont:
                break
            size += 1
        local = np.zeros((self.q, self.q), dtype=np.int64)
        for a in mbp:
            for b in nbrs[a]:
                local[a, b] = CIRCLE
        for a in self.mb[node]:
            if local[a, node] != NONE:
                self._add_edge(node, a)
                self.adj[node].add(a)
        # v-structures inside MB+(node)
        vs = []
        for b in sorted(mbp):
            for a, c in combinations(sorted(mbp - {b}), 2):
                if local[a, c] != NONE:
                    continue
                s = self.sepset.get((a, c))
                if isinstance(s, frozenset) and b in s:
                    continue
                if local[a, b] == NONE or local[b, c] == NONE:
                    continue
                local[a, b] = ARROW
                local[c, b] = ARROW
                vs.append((a, b, c))
        cands = []
        for a, b, c in vs:
            if node in (a, b, c):
                self._add_arrow(a, b)
                self._add_arrow(c, b)
            else:
                cands.append((a, b, c))
        for a, b, c in cands:
            for first, last in ((a, c), (c, a)):
                for path in self._collider_paths(local, nbrs, node, first, b, last):
                    for i in range(len(path) - 2):
                        u, v, w = path[i], path[i + 1], path[i + 2]
                        self._add_arrow(u, v)
                        self._add_arrow(w, v)

    def _collider_paths(
        self, local: np.ndarray, nbrs: dict[int, set[int]], start: int, a: int, b: int, c: int
    ) -> list[list[int]]:
        """Simple paths start, ..., a, b, c of length > 3 in the skeleton that are collider paths in ``local``."""
        out: list[list[int]] = []
        stack: list[list[int]] = [[start, v] for v in sorted(nbrs.get(start, ()))]
        while stack and len(out) < self.max_paths:
            path = stack.pop()
            u = path[-1]
            if u == c:
                if len(path) > 3 and path[-2] == b and path[-3] == a:
                    out.append(path)
                continue
            for w in sorted(nbrs.get(u, ())):
                if w in path:
                    continue
                # u becomes interior: it must be a collider
                if local[path[-2], u] == ARROW and local[w, u] == ARROW:
                    stack.append(path + [w])
        return [p for p in out if _is_collider_path(local, p)]

    def _orient(self) -> None:
        seps = {k: v for k, v in self.sepset.items() if isinstance(v, frozenset)}
        self.pag = orient_rules(self.pag, seps)

    def learn_local(self) -> np.ndarray:
        """MMB-by-MMB from the target until stop rule 1 or 3 (official ``_mb_strcuture_learner``)."""
        while self.waitlist:
            node = self.waitlist.pop(0)
            self.learn_mb(node)
            self._learn_mb_structure(node)
            self._orient()
            self.done.append(node)
            for n in sorted(self.adj[node]):
                if n not in self.done and n not in self.waitlist:
                    self.waitlist.append(n)
            if all(v in self.done for v in self.adj[self.target]):
                if self._stop_one() or self._stop_three():
                    break
        return self.pag

    def _stop_one(self) -> bool:
        mbp = self.mb[self.target] | {self.target}
        for a, b in combinations(sorted(mbp), 2):
            if (a, b) not in self.sepset:
                return False
            if self.is_adj(a, b) and (self.pag[a, b] == CIRCLE or self.pag[b, a] == CIRCLE):
                return False
        return True

    def _stop_three(self) -> bool:
        def cond(t: int, done: set[int], depth: int = 1, maxdepth: int = 5) -> bool:
            if depth > maxdepth:
                return True
            done.add(t)
            adj_t = [int(v) for v in np.flatnonzero(self.pag[t] != NONE) if int(v) not in done]
            if not adj_t:
                return t in self.done
            for v in adj_t:
                if self.pag[t, v] != ARROW and not cond(v, done, depth + 1, maxdepth):
                    return False
            return True

        mbp = self.mb[self.target] | {self.target}
        pairs = list(combinations(sorted(mbp), 2))
        if any((a, b) not in self.sepset for a, b in pairs):
            return False
        for a, b in pairs:
            if self.is_not_adj(a, b) or (
                self.is_adj(a, b) and self.pag[a, b] != CIRCLE and self.pag[b, a] != CIRCLE
            ):
                continue
            if self.pag[a, b] == CIRCLE and self.pag[b, a] == ARROW:
                ok = cond(b, {a})
            elif self.pag[a, b] == ARROW and self.pag[b, a] == CIRCLE:
                ok = cond(a, {b})
            else:
                ok = cond(a, set())
            if not ok:
                return False
        return True

    # --- step 3: LocICR's characterisation
    def _alpha_set(self) -> set[int]:
        x = self.target
        alpha = {int(v) for v in np.flatnonzero(self.pag[:, x] == ARROW)}
        cand = sorted(self.mb[x] - self.adj[x])
        updated = True
        while updated:
            updated = False
            for v in list(cand):
                found = False
                for size in range(min(len(alpha) + 1, self.max_k + 1)):
                    for z in combinations(sorted(alpha), size):
                        if self.indep(x, v, z):
                            alpha.add(v)
                            cand.remove(v)
                            updated = found = True
                            break
                    if found:
                        break
        return alpha

    def _paths(
        self, pag: np.ndarray, start: int, end: int, first_ok: Callable[[int], bool]
    ) -> list[list[int]]:
        """Simple paths start, v1, ..., end with a first edge accepted by ``first_ok`` and colliders at v1..(end's predecessor)."""
        out = []
        stack = [[start, int(v)] for v in np.flatnonzero(pag[start] != NONE) if first_ok(int(v))]
        while stack and len(out) < self.max_paths:
            path = stack.pop()
            u = path[-1]
            if u == end:
                out.append(path)
                continue
            for w in np.flatnonzero(pag[u] != NONE):
                w = int(w)
                if w in path:
                    continue
                if pag[path[-2], u] == ARROW and pag[w, u] == ARROW:
                    stack.append(path + [w])
        return out

    def condition_sets(self) -> tuple[set[int], set[int], list[set[int]]]:
        """PA*, NE* and the NE*_M of each maximal clique M (official ``_find_condition_sets``)."""
        x = self.target
        alpha = self._alpha_set()
        mbp = sorted(self.mb[x] | {x})
        pag = np.zeros_like(self.pag)
        pag[np.ix_(mbp, mbp)] = self.pag[np.ix_(mbp, mbp)]

        pa: set[int] = set()
        for v in sorted(self.mb[x]):
            for path in self._paths(pag, x, v, lambda u: bool(pag[u, x] == ARROW)):
                if len(path) > 2 and not (
                    pag[path[0], path[1]] == ARROW and pag[path[-1], path[-2]] == ARROW
                ):
                    continue
                if len(path) > 2 and not _is_collider_path(pag, path):
                    continue
                if all(u in alpha for u in path[2:]):
                    pa.add(v)
                    break

        def circle_paths(v: int) -> list[list[int]]:
            res = []
            for path in self._paths(pag, x, v, lambda u: bool(pag[u, x] == CIRCLE)):
                if len(path) > 2:
                    if not (pag[path[-1], path[-2]] == ARROW and pag[path[-3], path[-2]] == ARROW):
                        continue
                    if not _is_collider_path(pag, path):
                        continue
                res.append(path)
            return res

        poss_ne = sorted(self.mb[x] - pa)
        ne: set[int] = set()
        for v in poss_ne:
            if any(all(u in alpha for u in path[2:]) for path in circle_paths(v)):
                ne.add(v)

        und = [int(v) for v in np.flatnonzero((pag[x] != NONE) & (pag[:, x] == CIRCLE))]
        cliques = _maximal_cliques(und, lambda a, b: pag[a, b] != NONE or pag[b, a] != NONE)
        ne_m = []
        for clique in cliques:
            cs = set(clique)
            s = set(clique)
            for v in poss_ne:
                if v in s:
                    continue
                for path in circle_paths(v):
                    if path[1] in cs and all(u in alpha for u in path[2:]):
                        s.add(v)
                        break
            ne_m.append(s)
        return pa, ne, ne_m

    def relation(self, y: int) -> int:
        """X's relation to ``y``: NON_CAUSE, POSSIBLE or CAUSE (explicit and implicit ancestors merged)."""
        x = self.target
        self.learn_local()
        if y in self.adj[x]:
            if self.pag[y, x] == ARROW:
                return NON_CAUSE
            if self.pag[y, x] == TAIL and self.pag[x, y] == ARROW:
                return CAUSE
            return POSSIBLE
        pa, ne, ne_m = self.condition_sets()
        if y in pa or y in ne or any(y in s for s in ne_m):
            return NON_CAUSE
        if self.indep(y, x, pa):
            return NON_CAUSE
        if not self.indep(y, x, pa | ne):
            return CAUSE
        for s in ne_m:
            if self.indep(y, x, pa | s):
                return POSSIBLE
        return CAUSE


def _maximal_cliques(nodes: list[int], adjacent: Callable[[int, int], bool]) -> list[list[int]]:
    """Maximal cliques of the graph on ``nodes`` (Bron–Kerbosch with pivoting), in a fixed order."""
    nb = {u: {v for v in nodes if v != u and adjacent(u, v)} for u in nodes}
    out: list[list[int]] = []

    def bk(r: set[int], p: set[int], x: set[int]) -> None:
        if not p and not x:
            out.append(sorted(r))
            return
        pivot = max(p | x, key=lambda u: (len(nb[u] & p), -u))
        for v in sorted(p - nb[pivot]):
            bk(r | {v}, p & nb[v], x & nb[v])
            p = p - {v}
            x = x | {v}

    if nodes:
        bk(set(), set(nodes), set())
    return sorted(out)
