"""eigenvalue-augmentation: choose at most k of m PSD matrices to maximise lambda_min(M + sum A_i).

Lamperski, Yang and Prokopyev (ICML 2025) round the concave relaxation
``max lambda_min(M + sum_i x_i A_i)  s.t.  sum_i x_i <= k, 0 <= x <= 1`` by
sampling. Here every augmentation matrix is given by a factor,
``A_i = F_i F_i^T`` with ``F_i`` of shape ``(n, r)``, and instances are of
three kinds:

- ``design``: Bayesian E-optimal design, ``M = LAMBDA0 * I`` and ``F_i`` with
  N(0, 1/n) entries (rank ``r``, trace about ``r``);
- ``edges``: algebraic-connectivity augmentation, ``M = L + J`` with ``L`` the
  Laplacian of a random recursive tree on ``n`` nodes and ``J`` the all-ones
  matrix (it lifts the Laplacian's null space), and ``A_i`` the Laplacians of
  ``m`` candidate non-edges (``F_i = e_a - e_b``, ``r = 1``);
- ``stars``: the same base, with candidate stars of ``r`` new edges around one
  centre.

A method returns the chosen indices. The task recomputes
``lambda_min(M + sum_{i in I} A_i)`` with ``numpy.linalg.eigvalsh`` and
compares it with a *certified* upper bound on the optimum: the relaxation is
solved on the trusted side (cvxpy with SCS, cached per instance), and its dual
matrix ``Y`` gives ``OPT <= <Y, M> + (sum of the k largest <Y, A_i>)`` for any
``Y >= 0`` with unit trace, an inequality the task evaluates itself. See
``tasks/eigen_augment/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.solutions import as_int_vector
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    TaskMeta,
)

__all__ = [
    "CATALOG",
    "KINDS",
    "EigenvalueAugmentationTask",
    "augmented",
    "dual_bound",
    "generate",
    "lambda_min",
    "solve_relaxation",
]

KINDS = ("design", "subspace", "edges", "stars")
#: ``M = LAMBDA0 * I`` in the design instances (the prior precision).
LAMBDA0 = 0.1
#: ``subspace`` instances: the prior is weak (LAMBDA0) in WEAK_DIMS random directions
#: and strong (STRONG) in the rest, the "few directions to fix" regime where
#: ``OPT - lambda_min(M)`` can exceed ``R ln k`` (with ``M = LAMBDA0 * I`` and
#: ``k < n`` it cannot: ``OPT - lambda_min(M) <= k R / n < R``).
WEAK_DIMS = 3
STRONG = 10.0
#: Weight of the all-ones matrix added to a graph Laplacian. With ``J / n`` (the
#: card's choice) the constant vector keeps eigenvalue 1, which caps the
#: objective at 1 as soon as lambda_2 > 1; with ``J`` it sits at ``n``.
J_WEIGHT = 1.0
#: SCS tolerances of the task's relaxation solve (the bound is certified anyway).
SCS_EPS = 1e-7


def _check(fields: dict[str, Any]) -> None:
    n, m, k, r = fields["n"], fields["m"], fields["k"], fields["r"]
    if not 1 <= k < min(n, m):
        raise ValueError(f"{fields}: needs 1 <= k < min(n, m) (the paper's setting k < n)")
    if fields["kind"] == "edges" and r != 1:
        raise ValueError(f"{fields}: an edge Laplacian has rank 1 (r1)")
    if fields["kind"] == "edges" and m > n * (n - 1) // 2 - (n - 1):
        raise ValueError(f"{fields}: only {n * (n - 1) // 2 - (n - 1)} non-edges exist")
    if fields["kind"] == "stars" and not 1 <= r < n - 1:
        raise ValueError(f"{fields}: a star has 1 <= r < n - 1 leaves")


def _design(ns_ms_ks_rs, seeds, kind="design"):
    return [
        {"kind": kind, "n": n, "m": m, "k": k, "r": r, "seed": s}
        for (n, m, k, r) in ns_ms_ks_rs
        for s in seeds
    ]


#: Ids ``<kind>-n<size>-m<candidates>-k<budget>-r<rank>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "eigenvalue-augmentation",
        "{kind}-n{n}-m{m}-k{k}-r{r}-s{seed}",
        example="edges-n50-m200-k10-r1-s0",
        kind=Choice(KINDS, what="instance kind"),
        n=Int(label="matrix size", minimum=2),
        m=Int(label="candidates", minimum=2),
        k=Int(label="budget", minimum=1),
        r=Int(label="rank of each A_i", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": _design([(20, 60, 8, 4)], (0,))
        + _design([(20, 60, 8, 2)], (0,), "subspace")
        + grid(kind=("edges",), n=(30,), m=(100,), k=(8,), r=(1,), seed=(0,)),
        "standard": _design(
            [(30, 200, 10, 6), (30, 200, 20, 3), (60, 300, 20, 6), (60, 300, 40, 3)], (0,)
        )
        + _design(
            [(30, 200, 10, 3), (30, 200, 20, 3), (60, 300, 20, 3), (60, 300, 40, 3)],
            (0,),
            "subspace",
        )
        + grid(kind=("edges",), n=(50, 100), m=(200, 500), k=(10, 25), r=(1,), seed=(0,))
        + grid(kind=("stars",), n=(50, 100), m=(200,), k=(5, 15), r=(5,), seed=(0,)),
        "full": _design(
            [
                (30, 200, 10, 6),
                (30, 200, 20, 3),
                (60, 300, 20, 6),
                (60, 300, 40, 3),
                (100, 500, 50, 4),
                (100, 500, 80, 2),
            ],
            (0, 1, 2),
        )
        + _design(
            [
                (30, 200, 10, 3),
                (30, 200, 20, 3),
                (60, 300, 20, 3),
                (60, 300, 40, 3),
                (100, 500, 50, 3),
            ],
            (0, 1, 2),
            "subspace",
        )
        + grid(kind=("edges",), n=(100, 200), m=(500, 2000), k=(10, 25, 50), r=(1,), seed=(0, 1, 2))
        + grid(kind=("stars",), n=(100, 200), m=(500,), k=(5, 15, 40), r=(5,), seed=(0, 1, 2)),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- generation


def _tree_laplacian(n: int, rng: np.random.Generator) -> tuple[np.ndarray, set[tuple[int, int]]]:
    """Laplacian of a random recursive tree (node ``i`` joins a uniform earlier node) and its edges."""
    L = np.zeros((n, n))
    edges = set()
    for i in range(1, n):
        j = int(rng.integers(0, i))
        L[i, i] += 1
        L[j, j] += 1
        L[i, j] -= 1
        L[j, i] -= 1
        edges.add((j, i))
    return L, edges


def generate(kind: str, n: int, m: int, r: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, F)``: the base matrix ``(n, n)`` and the factors ``(m, n, r)``, ``A_i = F[i] @ F[i].T``.

    The stream is ``numpy.random.default_rng([seed, n, m, r, KINDS.index(kind)])``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown instance kind {kind!r}; kinds are {', '.join(KINDS)}")
    rng = np.random.default_rng([seed, n, m, r, KINDS.index(kind)])
    if kind in ("design", "subspace"):
        F = rng.standard_normal((m, n, r)) / math.sqrt(n)
        if kind == "design":
            return LAMBDA0 * np.eye(n), F
        Q, _ = np.linalg.qr(rng.standard_normal((n, WEAK_DIMS)))
        P = Q @ Q.T
        return LAMBDA0 * P + STRONG * (np.eye(n) - P), F
    L, edges = _tree_laplacian(n, rng)
    M = L + J_WEIGHT * np.ones((n, n))
    F = np.zeros((m, n, r))
    if kind == "edges":
        chosen: set[tuple[int, int]] = set()
        while len(chosen) < m:
            a, b = sorted(int(v) for v in rng.choice(n, 2, replace=False))
            if (a, b) not in edges:
                chosen.add((a, b))
        for i, (a, b) in enumerate(sorted(chosen)):
            F[i, a, 0], F[i, b, 0] = 1.0, -1.0
        return M, F
    for i in range(m):  # stars: a centre and r leaves it is not yet joined to
        c = int(rng.integers(0, n))
        free = [v for v in range(n) if v != c and (min(c, v), max(c, v)) not in edges]
        leaves = rng.choice(free, r, replace=False)
        for j, v in enumerate(leaves):
            F[i, c, j], F[i, int(v), j] = 1.0, -1.0
    return M, F


# ----------------------------------------------------------------------------- trusted computations


def augmented(M: np.ndarray, F: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``M + sum_i w_i F_i F_i^T`` (``weights`` of length m; a 0/1 vector for a set)."""
    G = F * np.sqrt(np.asarray(weights, dtype=float))[:, None, None]
    flat = G.transpose(1, 0, 2).reshape(M.shape[0], -1)
    return M + flat @ flat.T


def lambda_min(Z: np.ndarray) -> float:
    """The smallest eigenvalue of the symmetric ``Z`` (``numpy.linalg.eigvalsh``, LAPACK syevd)."""
    return float(np.linalg.eigvalsh(Z)[0])


def dual_bound(M: np.ndarray, F: np.ndarray, k: int, Y: np.ndarray) -> float:
    """``<Y, M> + (sum of the k largest <Y, A_i>)`` for ``Y`` projected to PSD with unit trace.

    For every such ``Y`` this bounds the relaxation's optimum, hence the
    optimum over sets, from above: ``lambda_min(Z) <= <Y, Z>``, and
    ``sum_i x_i <Y, A_i>`` over the relaxation's feasible set is at most the
    sum of the ``k`` largest (non-negative) ``<Y, A_i>``.
    """
    w, V = np.linalg.eigh((Y + Y.T) / 2)
    w = np.clip(w, 0.0, None)
    if w.sum() <= 0:
        raise ValueError("the dual matrix has no positive part")
    w /= w.sum()
    R = V * np.sqrt(w)  # Y = R R^T
    yA = np.einsum("mir,ij->mjr", F, R)  # F_i^T R, summed squares = <Y, A_i>
    scores = np.sort((yA**2).sum(axis=(1, 2)))[::-1]
    return float(np.sum(R * (M @ R)) + scores[:k].sum())


def solve_relaxation(
    M: np.ndarray, F: np.ndarray, k: int, *, eps: float = SCS_EPS
) -> dict[str, Any]:
    """Solve ``max lambda_min(M + sum x_i A_i) s.t. sum x <= k, 0 <= x <= 1`` with cvxpy and SCS.

    Returns
    -------
    dict with ``x`` (clipped to ``[0, 1]`` and scaled so ``sum x <= k``),
    ``lower`` (``lambda_min`` at that ``x``, exact: a feasible value),
    ``upper`` (:func:`dual_bound` at the solver's dual matrix: a certified
    bound) and ``Y`` (that dual matrix).
    """
    import cvxpy as cp
    import scipy.sparse as sp

    m, n, r = F.shape
    # vec(A_i) as the columns of a (n^2, m) matrix, sparse when the factors are.
    cols = []
    for i in range(m):
        Ai = F[i] @ F[i].T
        cols.append(sp.csc_matrix(Ai.reshape(-1, 1)))
    Avec = sp.hstack(cols).tocsr()
    x = cp.Variable(m)
    t = cp.Variable()
    Z = cp.Variable((n, n), symmetric=True)
    psd = Z - t * np.eye(n) >> 0
    cons = [cp.vec(Z, order="C") == M.ravel() + Avec @ x, psd, cp.sum(x) <= k, x >= 0, x <= 1]
    prob = cp.Problem(cp.Maximize(t), cons)
    prob.solve(solver="SCS", eps_abs=eps, eps_rel=eps, max_iters=200_000)
    if x.value is None:
        raise RuntimeError(f"SCS failed on the relaxation: status {prob.status}")
    xv = np.clip(np.asarray(x.value, dtype=float), 0.0, 1.0)
    if xv.sum() > k:
        xv *= k / xv.sum()
    Y = np.asarray(psd.dual_value, dtype=float)
    return {
        "x": xv,
        "lower": lambda_min(augmented(M, F, xv)),
        "upper": dual_bound(M, F, k, Y),
        "Y": Y,
    }


_TEMPLATE = """\
    # at most k distinct indices of the candidates instance.data["F"] (A_i = F[i] @ F[i].T);
    # the first k are always valid.
    return np.arange(int(instance.data["k"]), dtype=np.int64)
"""


@register_task
class EigenvalueAugmentationTask(CatalogTask):
    """Max-min eigenvalue augmentation: pick ``|I| <= k`` candidates, scored by ``lambda_min``.

    A solution is an integer array of at most ``k`` distinct indices in ``[0, m)``.
    """

    meta = TaskMeta(
        name="eigenvalue-augmentation",
        version="1",
        family="eigen_augment",
        area="combinatorial optimization",
        paper=Paper(
            title="Simple Randomized Rounding for Max-Min Eigenvalue Augmentation",
            authors=["Jourdain Lamperski", "Haeseong Yang", "Oleg A. Prokopyev"],
            venue="ICML 2025",
        ),
        description=(
            "Choose at most k of m PSD matrices A_i to maximise lambda_min(M + sum A_i): Bayesian E-optimal "
            "design and algebraic-connectivity augmentation (edges, stars), against a certified relaxation bound."
        ),
        metrics=[
            Metric(
                name="lambda_min",
                direction="max",
                description="lambda_min(M + sum_{i in I} A_i), numpy eigvalsh",
            ),
            Metric(
                name="ratio",
                direction="max",
                description="lambda_min / the certified upper bound on the relaxation's optimum (<= OPT's ratio); "
                "the bound comes out of SCS (a first-order solver, eps 1e-7) whose iterates differ between CPUs: "
                "still certified, but tight only to the solve (seen: 1e-8 relative between an AVX-512 and an AVX2 "
                "machine, 2e-6 under OpenBLAS's oldest kernels), so bench verify compares it to 1e-4",
                rtol=1e-4,
            ),
            Metric(
                name="gain_ratio",
                direction="max",
                description="(lambda_min - lambda_min(M)) / (bound - lambda_min(M)): the share of the possible increase "
                "(compared to 1e-4 by bench verify, as ratio)",
                rtol=1e-4,
            ),
            Metric(
                name="size",
                direction="min",
                description="|I|, the number of matrices chosen (<= k)",
            ),
        ],
        primary="lambda_min",
        normalization=Normalization(
            kind="linear",
            zero="base",
            one="bound",
            description="gain_ratio: 0 for lambda_min(M) (nothing added), 1 for the relaxation's certified bound",
        ),
        budgets={"smoke": 30.0, "standard": 120.0, "full": 900.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields as filterable parameters, and the kind as a tag."""
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=dict(fields),
            tags=("generated", fields["kind"]),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: ``M``, ``F`` (factors), ``k``. Nothing is private: the bound is a reference."""
        M, F = generate(fields["kind"], fields["n"], fields["m"], fields["r"], fields["seed"])
        return {"M": M, "F": F, "k": int(fields["k"])}, {}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """lambda_min(M), the relaxation's certified bound and feasible value, and the regime quantity."""
        M, F, k = data["M"], data["F"], int(data["k"])
        relax = solve_relaxation(M, F, k)
        base = lambda_min(M)
        R = float(np.max(np.einsum("mir,mir->m", F, F)))  # max trace of an A_i
        return {
            "base": Reference(value=base, source="lambda_min(M), numpy eigvalsh"),
            "bound": Reference(
                value=relax["upper"],
                source=(
                    "certified upper bound <Y,M> + top-k <Y,A_i> at the dual matrix Y of the relaxation "
                    f"(cvxpy + SCS, eps {SCS_EPS:g})"
                ),
            ),
            "relaxation": Reference(
                value=relax["lower"],
                source="lambda_min at the relaxation's (fractional) solution: a feasible value",
            ),
            "regime": Reference(
                value=(relax["upper"] - base) / (R * math.log(k)) if k > 1 else float("inf"),
                source="(bound - lambda_min(M)) / (R ln k), R = max_i trace(A_i): the paper's condition is Omega(1)",
            ),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute ``lambda_min`` from the indices and compare it with the bound.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is an integer array of at most ``k`` distinct indices in ``[0, m)``.
        """
        M, F, k = instance.data["M"], instance.data["F"], int(instance.data["k"])
        m = len(F)
        size = (
            len(solution)
            if isinstance(solution, (list, tuple, np.ndarray)) and np.ndim(solution) == 1
            else k
        )
        if size > k:
            raise InvalidSolution(f"{size} indices chosen; the budget is k={k}")
        idx = as_int_vector(
            solution,
            size,
            low=0,
            high=m,
            item="position",
            value="index",
            expected=f"an integer array of at most k={k} distinct indices in [0, {m})",
            float_hint="e.g. np.asarray(indices, dtype=np.int64)",
        )
        uniq, counts = np.unique(idx, return_counts=True)
        if len(uniq) < len(idx):
            j = int(np.flatnonzero(counts > 1)[0])
            raise InvalidSolution(
                f"indices must be distinct: index {int(uniq[j])} appears {int(counts[j])} times"
            )
        w = np.zeros(m)
        w[idx] = 1.0
        lam = lambda_min(augmented(M, F, w))
        refs = instance.references
        base, bound = refs["base"].value, refs["bound"].value
        return {
            "lambda_min": lam,
            "ratio": lam / bound,
            "gain_ratio": (lam - base) / (bound - base),
            "size": float(len(idx)),
        }
