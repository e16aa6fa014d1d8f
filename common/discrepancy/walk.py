"""Iterated partial colouring (Larsen's walk, as Deng, Li, Song and Weinstein build on it).

One *round* works on the coordinates ``S`` that are not yet coloured
(``|x_i| < 1``), with ``n' = |S|``:

1. **ProjectToSmallRows.** Choose ``d = floor(n'/4)`` rows of ``A[:, S]`` (the
   most that the paper's Theorem 1.5 allows), in ``BATCHES`` batches, each
   batch the rows whose part orthogonal to the rows chosen so far is longest;
   ``Q`` is an orthonormal basis of their span. The row norms are either
   *sketched* (``rows="sketch"``: ``||A_S (I - Q^T Q) R||`` with a Gaussian
   ``R`` of ``k`` columns, the paper's JL sketch, cost ``O(k nnz(A) + k n'^2)``)
   or *exact* (``rows="exact"``: ``||A_S (I - Q^T Q)||``, Larsen's
   ``O(m n'^2)``).
2. **Walk.** From the current ``x_S``, repeat: draw ``g ~ N(0, I)``, project it
   orthogonally to ``Q``'s rows and to ``e_i`` for every coordinate frozen so
   far, and move ``x <- x + t u`` with the largest ``t`` that keeps every free
   coordinate in ``[-1, 1]`` (boundary seeking): exactly one coordinate
   reaches ``+-1`` and is frozen. The round stops when half of ``S`` (rounded
   up) is frozen. Rows are not checked during the walk (the paper drops
   Larsen's verification step; the heavy rows are in ``Q`` and do not move).
3. The frozen coordinates are coloured ``+-1``; the next round runs on the rest.
   Rounds continue until nothing is left, so no final rounding is needed.

The projection in step 2 is done by one of two engines that compute the same
vectors (up to floating point) from the same Gaussians:

- :class:`LazyProjector`, the paper's data structure: at each restart a batch
  of ``K`` Gaussians is projected with the current basis by one matrix
  product; each query corrects its precomputed projection by the unit vectors
  ``w`` added to the basis since (``u = Pg - W^T (W g)``), and each frozen
  coordinate adds ``w = (I - P) e_i / ||.||`` (an incremental basis update);
  after ``K`` queries or ``K`` updates the basis absorbs ``W`` and a new batch
  is drawn. ``K = ceil(n'^a)`` with ``a = 1/2`` (the combinatorial choice).
- :class:`QRProjector`, the plain walk: a pivoted QR of ``Q[:, free]^T`` from
  scratch every time the constraint set changes (every step).

Both draw the Gaussians row by row from the same per-round stream
(``numpy.random.default_rng([seed, round])``: a ``(K, n')`` batch is the same
numbers as ``K`` draws of ``n'``), so with the same row mode they take the
same path; ``tests/test_discrepancy.py`` checks it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

__all__ = [
    "BATCHES",
    "LazyProjector",
    "QRProjector",
    "implicit_leverage_sample",
    "iterated_colouring",
    "partial_colouring",
    "project_to_small_rows",
    "sketch_size",
]

#: Batches in which ProjectToSmallRows picks its rows (ours).
BATCHES = 4
#: With ``basis="svd"`` or ``"lss"``, a batch that adds ``b`` directions looks at the
#: ``CANDIDATES * b`` heaviest residual rows (Larsen's "m_t largest rows"; the factor is ours).
CANDIDATES = 2
#: Leverage-score samples per unit of ``r ln(r + 1)`` (``r`` the rank): the usual ``O(eps^-2 r log r)``
#: with ``eps = Theta(1)``; the paper's count is ``O(eps_B^-2 n)`` up to logs (the constant is ours).
LSS_SAMPLES = 4
#: Relative size below which a residual direction counts as already spanned.
TOL = 1e-10


def sketch_size(m: int) -> int:
    """Columns of the JL sketch: ``ceil(4 ln(2m))`` (ours; the paper's ``eps0^-2 log(1/delta0)`` with eps0 = Theta(1))."""
    return int(math.ceil(4.0 * math.log(2.0 * m)))


def _orth_append(Q: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``Q`` (orthonormal rows) extended by an orthonormal basis of ``rows``' part orthogonal to it."""
    if rows.shape[0] == 0:
        return Q
    R = rows - (rows @ Q.T) @ Q
    R -= (R @ Q.T) @ Q  # twice is enough (Kahan-Parlett)
    scale = max(float(np.abs(rows).max()), 1e-300)
    B, Rr, _ = sla.qr(R.T, mode="economic", pivoting=True)
    diag = np.abs(np.diag(Rr))
    keep = diag > TOL * scale * math.sqrt(rows.shape[1])
    return np.vstack([Q, B[:, keep].T])


def implicit_leverage_sample(
    A_C: np.ndarray, Q: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``B = A_C (I - Q^T Q)`` sampled by approximate leverage scores, without forming ``B``.

    The paper's IMPLICITLEVERAGESCORE as its main body describes it: a sparse
    embedding ``S_1`` (CountSketch) gives ``M = S_1 B``, whose factorisation
    gives ``R`` (here a thin SVD, since ``B`` is rank-deficient by
    construction: its rows are orthogonal to ``Q``); a Gaussian ``S_2`` with
    ``k`` columns gives ``N = B R^{-1} S_2``, whose squared row norms estimate
    the leverage scores; ``s = LSS_SAMPLES * r ln(r + 1)`` rows (``r`` the rank) are drawn with those
    probabilities. Returns the distinct rows drawn and their weights
    ``sqrt(count / (s p_i))``, so that ``(D B)^T (D B)`` approximates
    ``B^T B`` spectrally (Drineas et al. 2012). The sizes ``s_1 = min(|C|, 4 n')``,
    ``k`` and ``s`` are ours (the appendix with Algorithm 9 was unreadable).
    """
    c, n1 = A_C.shape
    s1 = min(c, 4 * n1)
    S1 = sp.csr_matrix(
        (rng.choice([-1.0, 1.0], c), (rng.integers(0, s1, c), np.arange(c))), shape=(s1, c)
    )
    M = np.asarray(S1 @ A_C)
    M -= (M @ Q.T) @ Q
    _, sv, Wt = np.linalg.svd(M, full_matrices=False)
    keep = sv > TOL * max(float(sv.max(initial=0.0)), 1e-300) * math.sqrt(n1)
    r = int(keep.sum())
    if r == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    k = sketch_size(c)
    Z = (Wt[keep].T / sv[keep]) @ (rng.standard_normal((r, k)) / math.sqrt(k))
    Z -= Q.T @ (Q @ Z)
    lev = np.einsum("ij,ij->i", A_C @ Z, A_C @ Z)
    p = lev / lev.sum()
    s = int(math.ceil(LSS_SAMPLES * r * math.log(r + 1.0)))
    counts = np.bincount(rng.choice(c, size=s, p=p), minlength=c)
    idx = np.flatnonzero(counts)
    return idx, np.sqrt(counts[idx] / (s * p[idx]))


def _top_directions(Bbar: np.ndarray, b: int) -> np.ndarray:
    """The top ``b`` right singular vectors of ``Bbar`` (rows), those with a nonzero singular value."""
    if Bbar.shape[0] == 0:
        return np.zeros((0, Bbar.shape[1]))
    _, sv, Wt = np.linalg.svd(Bbar, full_matrices=False)
    keep = sv > TOL * max(float(sv.max(initial=0.0)), 1e-300) * math.sqrt(Bbar.shape[1])
    return Wt[keep][:b]


def project_to_small_rows(
    A_S: np.ndarray | sp.csc_matrix,
    A_rows: Any,
    d: int,
    *,
    rows: str,
    rng: np.random.Generator,
    basis: str = "rows",
) -> np.ndarray:
    """An orthonormal basis ``Q`` (at most ``d`` rows) that covers the heaviest rows of ``A_S``.

    ``A_rows(idx)`` returns the dense rows ``idx`` of ``A_S``. ``rows`` is
    ``"sketch"`` (JL-sketched norms) or ``"exact"``. Each of ``BATCHES``
    batches adds ``b`` directions: with ``basis="rows"`` the span of the ``b``
    heaviest residual rows (version 1 of both walks); with ``"svd"`` the top
    ``b`` eigenvectors of ``B^T B`` for the ``CANDIDATES * b`` heaviest
    residual rows ``B`` (Larsen, exact); with ``"lss"`` the same from the
    leverage-score sample of :func:`implicit_leverage_sample` (the paper).
    """
    if basis not in ("rows", "svd", "lss"):
        raise ValueError(f"basis must be 'rows', 'svd' or 'lss', not {basis!r}")
    m, n1 = A_S.shape
    Q = np.zeros((0, n1))
    if d <= 0:
        return Q
    chosen = np.zeros(m, dtype=bool)
    per = int(math.ceil(d / BATCHES))
    k = sketch_size(m)
    while Q.shape[0] < d and not chosen.all():
        b = min(per, d - Q.shape[0], int((~chosen).sum()))
        if rows == "sketch":
            R = rng.standard_normal((n1, k)) / math.sqrt(k)
            R -= Q.T @ (Q @ R)
            B = A_S @ R
            norms = np.einsum("ij,ij->i", B, B)
        elif rows == "exact":
            AQ = A_S @ Q.T
            full = (A_S.toarray() if sp.issparse(A_S) else A_S) - AQ @ Q
            norms = np.einsum("ij,ij->i", full, full)
        else:
            raise ValueError(f"rows must be 'sketch' or 'exact', not {rows!r}")
        norms[chosen] = -np.inf
        width = b if basis == "rows" else min(CANDIDATES * b, int((~chosen).sum()))
        pick = np.argsort(-norms, kind="stable")[:width]
        pick = pick[norms[pick] > 0]
        if not len(pick):
            break
        before = Q.shape[0]
        if basis == "rows":
            chosen[pick] = True
            Q = _orth_append(Q, A_rows(pick))[:d]
        else:
            A_C = A_rows(pick)
            if basis == "lss":
                idx, wts = implicit_leverage_sample(A_C, Q, rng)
                A_C = A_C[idx] * wts[:, None]
            Bbar = A_C - (A_C @ Q.T) @ Q
            chosen[pick[:b]] = True  # the b heaviest count as covered
            Q = _orth_append(Q, _top_directions(Bbar, b))[:d]
        if Q.shape[0] == before:
            break
    return Q


class QRProjector:
    """Projection orthogonally to ``Q``'s rows and the frozen ``e_i``, recomputed by QR at every change."""

    def __init__(self, Q: np.ndarray, rng: np.random.Generator, K: int):
        self.Q, self.rng = Q, rng
        self.free = np.ones(Q.shape[1], dtype=bool)
        self._basis: np.ndarray | None = None

    def _refresh(self) -> np.ndarray:
        Vf = self.Q[:, self.free]
        if Vf.shape[0] == 0:
            return np.zeros((Vf.shape[1], 0))
        B, Rr, _ = sla.qr(Vf.T, mode="economic", pivoting=True)
        diag = np.abs(np.diag(Rr))
        keep = diag > TOL * max(float(diag.max(initial=0.0)), 1e-300)
        return B[:, keep]

    def query(self) -> np.ndarray:
        g = self.rng.standard_normal(self.Q.shape[1])
        if self._basis is None:
            self._basis = self._refresh()
        B = self._basis
        u = np.zeros_like(g)
        gf = g[self.free]
        u[self.free] = gf - B @ (B.T @ gf)
        return u

    def freeze(self, i: int) -> None:
        self.free[i] = False
        self._basis = None  # the constraint set changed: from scratch next time


class LazyProjector:
    """The paper's lazy batched projection ("guess and correct") with incremental basis updates."""

    def __init__(self, Q: np.ndarray, rng: np.random.Generator, K: int):
        self.n = Q.shape[1]
        self.rng, self.K = rng, int(K)
        self.Q0 = Q  # the basis at the last restart (orthonormal rows)
        self.W: list[np.ndarray] = []  # unit vectors added since
        self.restarts = 0
        self._restart()

    def _restart(self) -> None:
        if self.W:
            self.Q0 = np.vstack([self.Q0, np.asarray(self.W)])
            self.W = []
        self.G = self.rng.standard_normal((self.K, self.n))
        self.PG = self.G - (self.G @ self.Q0.T) @ self.Q0  # one matrix product for the batch
        self.kq = 0
        self.restarts += 1

    def query(self) -> np.ndarray:
        if self.kq >= self.K or len(self.W) >= self.K:
            self._restart()
        g, u = self.G[self.kq], self.PG[self.kq].copy()
        self.kq += 1
        if self.W:
            W = np.asarray(self.W)
            u -= W.T @ (W @ g)
        return u

    def _residual(self, v: np.ndarray) -> np.ndarray:
        v = v - self.Q0.T @ (self.Q0 @ v)
        if self.W:
            W = np.asarray(self.W)
            v -= W.T @ (W @ v)
        return v

    def freeze(self, i: int) -> None:
        e = np.zeros(self.n)
        e[i] = 1.0
        w = self._residual(self._residual(e))
        nrm = float(np.linalg.norm(w))
        if nrm > TOL:
            self.W.append(w / nrm)


ENGINES = {"lazy": LazyProjector, "qr": QRProjector}


def partial_colouring(
    x: np.ndarray, Q: np.ndarray, rng: np.random.Generator, *, engine: str, K: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Walk from ``x`` until half the coordinates (rounded up) are at ``+-1``.

    Returns ``(x, frozen mask, steps)``. The frozen coordinates are exactly ``+-1``.
    """
    x = np.array(x, dtype=float)
    n1 = len(x)
    proj = ENGINES[engine](Q, rng, K)
    frozen = np.zeros(n1, dtype=bool)
    target = (n1 + 1) // 2
    steps = 0
    while frozen.sum() < target:
        u = proj.query()
        u[frozen] = 0.0
        free = ~frozen & (np.abs(u) > TOL * max(float(np.abs(u).max(initial=0.0)), 1e-300))
        if not free.any():  # the walk's subspace is empty (cannot happen while |free| > d)
            break
        idx = np.flatnonzero(free)
        ui = u[idx]
        t_all = (np.sign(ui) - x[idx]) / ui
        j = int(np.argmin(t_all))
        t = max(float(t_all[j]), 0.0)
        i = int(idx[j])
        x += t * u
        x[i] = 1.0 if ui[j] > 0 else -1.0
        np.clip(x, -1.0, 1.0, out=x)
        frozen[i] = True
        proj.freeze(i)
        steps += 1
    return x, frozen, steps


def iterated_colouring(
    A: np.ndarray | sp.csr_matrix,
    seed: int,
    *,
    rows: str,
    engine: str,
    batch_exponent: float = 0.5,
    basis: str = "rows",
) -> tuple[np.ndarray, dict[str, Any]]:
    """A full colouring ``x in {-1, +1}^n`` by rounds of :func:`partial_colouring`.

    ``rows``: ``"sketch"`` or ``"exact"`` (ProjectToSmallRows); ``engine``:
    ``"lazy"`` or ``"qr"``; ``basis``: how ProjectToSmallRows turns the heavy
    rows into directions (see :func:`project_to_small_rows`). The round-``r`` streams are
    ``default_rng([seed, r, 0])`` (walk) and ``default_rng([seed, r, 1])``
    (sketch). Returns ``x`` and counters (rounds, steps).
    """
    m, n = A.shape
    sparse = sp.issparse(A)
    if sparse:
        A_csr, A_csc = sp.csr_matrix(A), sp.csc_matrix(A)
    x = np.zeros(n)
    S = np.arange(n)
    rounds = steps = 0
    while len(S):
        n1 = len(S)
        if sparse:
            A_S = A_csc[:, S]
            A_Sr = A_csr[:, S].tocsr()

            def A_rows(idx, A_Sr=A_Sr):
                return A_Sr[idx].toarray()
        else:
            A_S = A[:, S]

            def A_rows(idx, A_S=A_S):
                return A_S[idx]

        Q = project_to_small_rows(
            A_S,
            A_rows,
            n1 // 4,
            rows=rows,
            rng=np.random.default_rng([seed, rounds, 1]),
            basis=basis,
        )
        K = max(1, int(math.ceil(n1**batch_exponent)))
        xs, frozen, k = partial_colouring(
            x[S], Q, np.random.default_rng([seed, rounds, 0]), engine=engine, K=K
        )
        x[S] = xs
        S = S[~frozen]
        rounds += 1
        steps += k
        if k == 0:  # no progress: colour the rest by sign (never seen; kept for safety)
            x[S] = np.where(x[S] >= 0, 1.0, -1.0)
            break
    return np.where(x >= 0, 1, -1).astype(np.int64), {"rounds": rounds, "steps": steps}
