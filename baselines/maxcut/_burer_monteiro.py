"""Low-rank (Burer-Monteiro) solver of the Max-Cut / Max-k-Cut SDP relaxations, and their roundings.

The SDPs, for an undirected graph with edge weights ``w_e`` (any sign)::

    GW (k = 2):  max  sum_e w_e (1 - X_uv) / 2
    FJ (k >= 3): max  sum_e w_e (k-1)/k (1 - X_uv)
                 s.t. X PSD, X_ii = 1            (both)
                      X_ij >= -1/(k-1), i != j   (FJ only: n(n-1)/2 constraints)

Burer-Monteiro writes ``X = V V^T`` with ``V`` (n x r) of unit rows, so the
PSD and diagonal constraints hold by construction and the objective needs
only the m edge inner products ``rho_e = <v_u, v_v>`` and one sparse product
``W V`` per evaluation: O(m r) time, O(n r) memory, never n x n.

FJ's pair constraints: we impose ``rho_e >= -1/(k-1)`` on the **edges only**
(by an augmented Lagrangian) and drop them for non-adjacent pairs. Why that
is enough for the rounding: Frieze and Jerrum's analysis bounds, edge by
edge, the probability that the endpoints get different labels by
``alpha_k * (k-1)/k * (1 - rho_e)`` for ``rho_e`` in ``[-1/(k-1), 1]``; only
the edges' inner products enter, so any unit vectors feasible on the edges
round to an expected cut >= alpha_k times their SDP value (for non-negative
weights). What changes: the relaxation is weaker (its optimum is >= the full
FJ SDP's), so the SDP value is a looser upper bound. On the small graphs of
random 36-60 node graphs the edge-only optimum was 0.02% to 1% above
the full one (larger with +-1 weights); ``constraints="all"`` solves the full
SDP (it matches cvxpy to ~1e-7, see ``tests/test_maxcut_baselines.py``).

Optimisation: L-BFGS (our own, :func:`lbfgs`) on an unconstrained
``U`` with ``V = rows of U normalised`` (the gradient is projected on the
tangent space of each sphere and divided by the row norm). BM is a local
method: for r(r+1)/2 larger than the number of constraints, second-order
critical points of generic instances are global optima (Boumal, Voroninski
and Bandeira, NeurIPS 2016); L-BFGS finds first-order points, so the value is
a (usually tight) lower bound on the SDP optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
import scipy.sparse as sp

from baselines.maxcut._graph import Deadline, Graph

__all__ = ["BMResult", "solve_sdp", "default_rank", "round_labels", "lbfgs", "row_dots"]


@numba.njit("void(int64[::1], int64[::1], float64[:, ::1], float64[::1])", cache=True)
def row_dots(a, b, V, out):  # pragma: no cover - compiled
    """``out[p] = <V[a[p]], V[b[p]]>`` without the (len(a), r) temporaries of a gather."""
    r = V.shape[1]
    for p in range(a.shape[0]):
        s = 0.0
        i = a[p]
        j = b[p]
        for d in range(r):
            s += V[i, d] * V[j, d]
        out[p] = s


class _OutOfTime(Exception):
    pass


class BMResult:
    """A Burer-Monteiro solution.

    ``V`` (n x r, unit rows); ``value``: the SDP objective at ``V`` (cut units);
    ``violation``: the largest edge constraint violation (0 for k = 2);
    ``converged``: False if the deadline stopped it early.
    """

    def __init__(self, V: np.ndarray, value: float, violation: float, converged: bool, evaluations: int) -> None:
        self.V = V
        self.value = value
        self.violation = violation
        self.converged = converged
        self.evaluations = evaluations


def default_rank(n: int, m: int, k: int, max_rank: int = 64) -> int:
    """``ceil(sqrt(2 c))`` for c constraints (n diagonal ones, plus the m edge ones if k >= 3), capped.

    That is the Barvinok-Pataki rank above which the SDP has an optimal
    solution of that rank; ``max_rank`` keeps the memory O(n * 64).
    """
    c = n + (m if k >= 3 else 0)
    return int(max(2, min(n, max_rank, math.ceil(math.sqrt(2 * c)))))


def _normalize(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norms = np.linalg.norm(U, axis=1)
    norms = np.where(norms > 0, norms, 1.0)
    return U / norms[:, None], norms


class _PairOperator:
    """``C(coef) @ V`` for the symmetric sparse matrix with ``coef_p`` at (a_p, b_p) and (b_p, a_p).

    The CSR structure is built once; each product only permutes ``coef``.
    """

    def __init__(self, n: int, a: np.ndarray, b: np.ndarray) -> None:
        rows = np.concatenate([a, b])
        cols = np.concatenate([b, a])
        self.order = np.argsort(rows, kind="stable")
        self.indices = cols[self.order]
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=self.indptr[1:])
        self.n = n

    def matmul(self, coef: np.ndarray, V: np.ndarray) -> np.ndarray:
        data = np.concatenate([coef, coef])[self.order]
        return sp.csr_matrix((data, self.indices, self.indptr), shape=(self.n, self.n)) @ V


def _violated_pairs(V: np.ndarray, lo: float, tol: float, block: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """All pairs i < j with <v_i, v_j> < lo - tol (blocks of rows: O(n^2 r) time, O(block n) memory)."""
    n = V.shape[0]
    out_a, out_b = [], []
    for s in range(0, n, block):
        P = V[s : s + block] @ V.T
        ii, jj = np.nonzero(P < lo - tol)
        ii = ii + s
        keep = ii < jj
        out_a.append(ii[keep])
        out_b.append(jj[keep])
    return np.concatenate(out_a).astype(np.int64), np.concatenate(out_b).astype(np.int64)


def solve_sdp(
    g: Graph,
    k: int,
    rank: int,
    seed: int,
    deadline: Deadline | None = None,
    constraints: str = "edges",
    tol: float = 1e-6,
    max_outer: int = 50,
) -> BMResult:
    """Solve the GW (k = 2) or FJ (k >= 3) SDP by Burer-Monteiro.

    For k >= 3 the constraints ``<v_i, v_j> >= -1/(k-1)`` are imposed by an
    augmented Lagrangian on a working set of pairs, which starts as the
    edges. ``constraints="edges"`` keeps it there (the relaxation of the
    module docstring); ``constraints="all"`` also checks all n(n-1)/2 pairs
    after every round (O(n^2 r)) and adds those violated or within 0.02 of
    the bound, until none is violated: that solves FJ's full SDP, and costs
    many more pairs on sparse graphs (G11: 25,000 for 1,600 edges).

    ``tol``: largest violation accepted, in inner-product units; the inner
    L-BFGS solves start loose (relative ``ftol`` 1e-6) and tighten tenfold per
    round down to 1e-12. ``max_outer`` bounds the rounds. The starting ``V``
    is Gaussian from ``numpy.random.default_rng(seed)``. If ``deadline``
    expires, the current iterate is returned with ``converged=False``.
    """
    if constraints not in ("edges", "all"):
        raise ValueError(f"constraints must be 'edges' or 'all', got {constraints!r}")
    n, r = g.n, int(rank)
    rng = np.random.default_rng(seed)
    u, v, w = np.ascontiguousarray(g.edges[:, 0]), np.ascontiguousarray(g.edges[:, 1]), g.weights
    W = sp.csr_matrix((g.adj_w, g.indices, g.indptr), shape=(n, n))
    lo = -1.0 / (k - 1) if k >= 3 else -np.inf
    scale = max(float(np.abs(w).sum()), 1e-12)  # keeps the objective O(1) for L-BFGS's tolerances
    evals = 0
    last_x = rng.standard_normal((n, r)).ravel()

    def objective(x: np.ndarray, pairs: tuple[np.ndarray, np.ndarray, _PairOperator] | None, lam: np.ndarray, mu: float) -> tuple[float, np.ndarray]:
        nonlocal evals, last_x
        if deadline is not None and deadline.expired():
            raise _OutOfTime
        evals += 1
        last_x = x
        V, norms = _normalize(x.reshape(n, r))
        G = W @ V  # d f / d V for f = sum_e w_e rho_e = <V, W V> / 2
        f = 0.5 * float(np.einsum("ij,ij->", V, G))
        if pairs is not None:
            a, b, op = pairs
            rho = np.empty(len(a))
            row_dots(a, b, V, rho)
            # rho_p >= lo, i.e. g_p = lo - rho_p <= 0: Rockafellar's penalty
            # (1 / 2mu) sum_p (max(0, lam_p + mu g_p)^2 - lam_p^2)
            t = np.maximum(0.0, lam + mu * (lo - rho))
            f += float((t @ t - lam @ lam) / (2 * mu))
            G -= op.matmul(t, V)  # d/drho_p = -t_p and d rho_p / d v_a = v_b
        # Project on the tangent space of each sphere, then chain through the normalisation.
        G -= np.einsum("ij,ij->i", G, V)[:, None] * V
        G /= norms[:, None]
        return f / scale, G.ravel() / scale

    def minimize(x0: np.ndarray, pairs, lam: np.ndarray, mu: float, ftol: float) -> tuple[np.ndarray, bool]:
        try:
            return lbfgs(lambda x: objective(x, pairs, lam, mu), x0, ftol=ftol), True
        except _OutOfTime:
            return last_x, False

    x = last_x.copy()
    if k < 3:
        x, converged = minimize(x, None, np.zeros(0), 0.0, 1e-9)
    else:
        x, converged = _augmented_lagrangian(x, n, r, u, v, lo, constraints == "all", tol, max_outer, minimize)
    V = _normalize(x.reshape(n, r))[0]
    rho = np.empty(len(u))
    row_dots(u, v, V, rho)
    violation = 0.0
    if k >= 3:
        if constraints == "all":
            va, vb = _violated_pairs(V, lo, 0.0)
            violation = float(max((lo - np.einsum("ij,ij->i", V[va], V[vb])).max(initial=0.0), 0.0))
        else:
            violation = float(max((lo - rho).max(initial=0.0), 0.0))
    value = float(w @ (1.0 - rho)) * ((k - 1) / k if k >= 3 else 0.5)
    return BMResult(V, value, violation, converged, evals)


def lbfgs(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x: np.ndarray,
    ftol: float = 1e-9,
    gtol: float = 1e-10,
    maxiter: int = 20000,
    memory: int = 10,
) -> np.ndarray:
    """Minimise ``fun`` (returns value and gradient) by L-BFGS with Armijo backtracking.

    Stops when an iteration lowers ``f`` by at most ``ftol * max(|f|, 1)``
    (scipy's L-BFGS-B criterion), when the largest gradient entry is below
    ``gtol``, or after ``maxiter`` iterations. Plain numpy: scipy's L-BFGS-B
    spends most of its time on bound-constraint bookkeeping we do not need
    (70% of the run time on G11 with k=3).
    """
    f, gr = fun(x)
    S: list[np.ndarray] = []
    Y: list[np.ndarray] = []
    RHO: list[float] = []
    for _ in range(maxiter):
        if np.abs(gr).max(initial=0.0) <= gtol:
            break
        # Two-loop recursion: d = -H gr.
        q = gr.copy()
        alphas = []
        for s_i, y_i, rho_i in zip(reversed(S), reversed(Y), reversed(RHO), strict=True):
            a_i = rho_i * float(s_i @ q)
            q -= a_i * y_i
            alphas.append(a_i)
        if S:
            q *= float(S[-1] @ Y[-1]) / float(Y[-1] @ Y[-1])
        else:
            q *= 1.0 / max(float(np.linalg.norm(gr)), 1e-300)
        for (s_i, y_i, rho_i), a_i in zip(zip(S, Y, RHO, strict=True), reversed(alphas), strict=True):
            q += (a_i - rho_i * float(y_i @ q)) * s_i
        d = -q
        slope = float(gr @ d)
        if slope >= 0:  # not a descent direction: restart from steepest descent
            S.clear(), Y.clear(), RHO.clear()
            d = -gr / max(float(np.linalg.norm(gr)), 1e-300)
            slope = float(gr @ d)
        step = 1.0
        while True:
            x_new = x + step * d
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * step * slope or step < 1e-12:
                break
            step *= 0.5
        s_k, y_k = x_new - x, g_new - gr
        sy = float(s_k @ y_k)
        if sy > 1e-12 * float(np.linalg.norm(s_k)) * float(np.linalg.norm(y_k)):
            S.append(s_k), Y.append(y_k), RHO.append(1.0 / sy)
            if len(S) > memory:
                S.pop(0), Y.pop(0), RHO.pop(0)
        done = f - f_new <= ftol * max(abs(f), abs(f_new), 1.0)
        x, f, gr = x_new, f_new, g_new
        if done:
            break
    return x


def _augmented_lagrangian(x, n, r, u, v, lo, check_all, tol, max_outer, minimize) -> tuple[np.ndarray, bool]:
    """Rounds of: minimise the augmented Lagrangian, update the multipliers, grow the working set."""
    a, b = u.copy(), v.copy()
    lam = np.zeros(len(a))
    mu, prev, ftol = 10.0, np.inf, 1e-6
    for _ in range(max_outer):
        x, ok = minimize(x, (a, b, _PairOperator(n, a, b)), lam, mu, ftol)
        x = _normalize(x.reshape(n, r))[0].ravel()  # keep the row norms near 1 between rounds
        if not ok:
            return x, False
        V = x.reshape(n, r)
        rho = np.empty(len(a))
        row_dots(a, b, V, rho)
        lam = np.maximum(0.0, lam + mu * (lo - rho))
        violation = float(max((lo - rho).max(initial=0.0), 0.0))
        added = 0
        if check_all:
            na, nb = _violated_pairs(V, lo, -0.02)
            if len(na):
                known = set((a * n + b).tolist())
                fresh = np.array([p not in known for p in (na * n + nb).tolist()], dtype=bool)
                na, nb = na[fresh], nb[fresh]
                added = len(na)
            if added:
                a, b = np.concatenate([a, na]), np.concatenate([b, nb])
                lam = np.concatenate([lam, np.zeros(added)])
                prev = np.inf  # a new set: judge progress afresh
                continue
        if violation <= tol and ftol <= 1e-10:
            return x, True
        ftol = max(ftol * 0.1, 1e-12)
        if violation > 0.25 * prev:
            mu = min(mu * 10.0, 1e4)
        prev = violation
    return x, False


def round_labels(
    V: np.ndarray, k: int, rng: np.random.Generator, count: int
) -> np.ndarray:
    """``count`` random roundings of the rows of ``V``: int64 labels of shape (count, n).

    k = 2: Goemans-Williamson, label = [<g, v_i> >= 0] for a Gaussian ``g``
    (a uniformly random hyperplane). k >= 3: Frieze-Jerrum, ``k`` Gaussian
    vectors ``g_1..g_k`` and label = argmax_j <g_j, v_i>.
    """
    n, r = V.shape
    if k == 2:
        G = rng.standard_normal((r, count))
        return np.ascontiguousarray((V @ G >= 0).T.astype(np.int64))
    G = rng.standard_normal((r, count * k))
    P = (V @ G).reshape(n, count, k)
    return np.ascontiguousarray(P.argmax(axis=2).T.astype(np.int64))
