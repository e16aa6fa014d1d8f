"""wasserstein-ball-center: the fixed-support Wasserstein ball center of N histograms.

Wang, Li, Yang and Ding (ICML 2025) define the Wasserstein ball center (WBC)
of histograms ``a_1, ..., a_N`` on a common support of ``m`` points as the
histogram ``w`` that minimises ``max_k W(w, a_k)``, with ``W`` the optimal
transport cost for the ground cost ``C`` (here squared Euclidean). With a
fixed support it is the linear program

    min r  s.t.  <C, pi_k> <= r,  pi_k 1 = w,  pi_k^T 1 = a_k,  pi_k >= 0,  1^T w = 1

(``pi_k`` is ``m x m``; row ``i`` is the centre's support point, column ``j``
the input's). A method returns ``w``; the task recomputes ``max_k W(w, a_k)``
and ``sum_k W(w, a_k)`` with exact OT (``ot.emd2`` from POT) and compares the
maximum with the LP's optimum, which it solves itself with HiGHS
(``scipy.optimize.linprog(method="highs-ipm")``, crossover on) once per
instance (cached). See
``tasks/wbc/README.md``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int
from bench.registry import register_task
from bench.solutions import as_float_array
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
    "NEG_TOL",
    "SUM_TOL",
    "UNIFORM_MIX",
    "WassersteinBallCenterTask",
    "build_lp",
    "cost_matrix",
    "distances",
    "generate",
    "import_ot",
    "solve_lp_highs",
    "support",
]

KINDS = ("blobs1d", "blobs2d", "minority1d", "minority2d")
#: Share of uniform mass mixed into every input histogram (no bin is empty; see the README).
UNIFORM_MIX = 0.01
#: A returned ``w`` may have entries down to ``-NEG_TOL`` ...
NEG_TOL = 1e-9
#: ... and may sum to 1 within ``SUM_TOL``; beyond either it is refused.
SUM_TOL = 1e-6


def _check(fields: dict[str, Any]) -> None:
    N, m, kind = fields["N"], fields["m"], fields["kind"]
    if N < 2:
        raise ValueError(f"{fields}: needs N >= 2 histograms")
    if m < 4:
        raise ValueError(f"{fields}: needs m >= 4 support points")
    if kind.endswith("2d") and math.isqrt(m) ** 2 != m:
        raise ValueError(f"{fields}: a 2-D grid needs a square m (25, 36, 49, ...)")


def _ids(kind: str, Nm: list[tuple[int, int]], seeds=(0,)) -> list[dict[str, Any]]:
    return [{"kind": kind, "N": N, "m": m, "seed": s} for (N, m) in Nm for s in seeds]


#: Ids ``<kind>-N<histograms>-m<support>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "wasserstein-ball-center",
        "{kind}-N{N}-m{m}-s{seed}",
        example="minority2d-N10-m36-s0",
        kind=Choice(KINDS, what="instance kind"),
        N=Int(label="histograms", minimum=2),
        m=Int(label="support points", minimum=4),
        seed=Int(),
    ),
    {
        "smoke": _ids("blobs1d", [(5, 16)]) + _ids("minority2d", [(6, 16)]),
        "standard": (
            # the m sweep at N = 10 (1-D) and the N sweep at m = 36 (2-D)
            _ids("blobs1d", [(10, 16), (10, 24), (10, 36), (10, 54), (10, 81)])
            + _ids("blobs2d", [(5, 36), (10, 36), (20, 36), (40, 36)])
            + _ids("minority1d", [(20, 36)])
            + _ids("minority2d", [(10, 25), (20, 49)])
        ),
        "full": (
            _ids(
                "blobs1d", [(10, 16), (10, 24), (10, 36), (10, 54), (10, 81), (10, 120)], (0, 1, 2)
            )
            + _ids(
                "blobs2d", [(5, 36), (10, 36), (20, 36), (40, 36), (50, 36), (10, 100)], (0, 1, 2)
            )
            + _ids("minority1d", [(20, 36), (50, 50)], (0, 1, 2))
            + _ids("minority2d", [(10, 25), (20, 49), (50, 64)], (0, 1, 2))
        ),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- generation


def support(kind: str, m: int) -> np.ndarray:
    """The ``(m, d)`` support: ``m`` evenly spaced points of [0, 1] (1-D) or a square grid of [0, 1]^2."""
    if kind.endswith("1d"):
        return np.linspace(0.0, 1.0, m)[:, None]
    side = math.isqrt(m)
    g = np.linspace(0.0, 1.0, side)
    X, Y = np.meshgrid(g, g, indexing="ij")
    return np.column_stack([X.ravel(), Y.ravel()])


def cost_matrix(points: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances between the support points, ``(m, m)``."""
    diff = points[:, None, :] - points[None, :, :]
    return np.einsum("ijd,ijd->ij", diff, diff)


def _blob(points: np.ndarray, centre: np.ndarray, width: float) -> np.ndarray:
    z = ((points - centre) ** 2).sum(1) / (2.0 * width**2)
    h = np.exp(-(z - z.min()))
    return h / h.sum()


def generate(kind: str, N: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(C, A)``: the ``(m, m)`` cost and the ``(N, m)`` histograms (rows sum to 1).

    Each histogram is a mixture of one to three Gaussian blobs (widths 0.03 to
    0.15, so blobs of varied sizes) on the support, mixed with ``UNIFORM_MIX``
    of uniform mass. ``blobs*``: centres uniform in [0.15, 0.85]^d.
    ``minority*``: ``max(1, N // 5)`` histograms (the minority group, the last
    rows) have their centres in [0.8, 0.95]^d, far from the majority's
    [0.05, 0.4]^d. The stream is ``numpy.random.default_rng([seed, N, m, kind])``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown instance kind {kind!r}; kinds are {', '.join(KINDS)}")
    rng = np.random.default_rng([seed, N, m, KINDS.index(kind)])
    pts = support(kind, m)
    d = pts.shape[1]
    n_min = max(1, N // 5) if kind.startswith("minority") else 0
    A = np.empty((N, m))
    for k in range(N):
        if kind.startswith("minority"):
            lo, hi = (0.8, 0.95) if k >= N - n_min else (0.05, 0.4)
        else:
            lo, hi = 0.15, 0.85
        n_blobs = int(rng.integers(1, 4))
        weights = rng.dirichlet(np.ones(n_blobs))
        h = np.zeros(m)
        for b in range(n_blobs):
            h += weights[b] * _blob(pts, rng.uniform(lo, hi, d), float(rng.uniform(0.03, 0.15)))
        A[k] = (1.0 - UNIFORM_MIX) * h / h.sum() + UNIFORM_MIX / m
    A /= A.sum(1, keepdims=True)
    return cost_matrix(pts), A


# ----------------------------------------------------------------------------- trusted computations


def import_ot():
    """POT, imported without its optional torch/jax/tensorflow/cupy backends (numpy only).

    POT imports every installed backend at import time; torch alone costs
    seconds, which would be billed to a method's wall time.
    """
    import os

    for key in ("PYTORCH", "JAX", "CUPY", "TENSORFLOW"):
        os.environ.setdefault(f"POT_BACKEND_DISABLE_{key}", "1")
    import ot

    return ot


def distances(w: np.ndarray, A: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``W(w, a_k)`` for every ``k``: exact OT costs (``ot.emd2``, POT's network simplex)."""
    ot = import_ot()

    return np.array([float(ot.emd2(w, a, C, numItermax=10_000_000)) for a in A])


def build_lp(C: np.ndarray, A: np.ndarray):
    """The WBC LP in ``scipy.optimize.linprog`` form: ``(c, A_ub, b_ub, A_eq, b_eq)``.

    Variables: ``pi`` (``N * m * m``, ``pi[k, i, j]`` at ``k*m*m + i*m + j``),
    ``w`` (``m``), ``r`` (1), all ``>= 0``. Rows: ``pi_k 1 - w = 0`` (``N m``),
    ``pi_k^T 1 = a_k`` (``N m``), ``1^T w = 1`` (equalities) and
    ``<C, pi_k> - r <= 0`` (``N`` inequalities). The equalities hold ``N``
    redundant rows (HiGHS's presolve removes them).
    """
    import scipy.sparse as sp

    N, m = A.shape
    n_pi = N * m * m
    nv = n_pi + m + 1
    idx = np.arange(n_pi).reshape(N, m, m)
    k_of = np.repeat(np.arange(N), m * m)
    i_of = np.tile(np.repeat(np.arange(m), m), N)
    j_of = np.tile(np.arange(m), N * m)
    rows = np.concatenate(
        [k_of * m + i_of, np.arange(N * m), N * m + k_of * m + j_of, np.full(m, 2 * N * m)]
    )
    cols = np.concatenate(
        [idx.ravel(), n_pi + np.tile(np.arange(m), N), idx.ravel(), n_pi + np.arange(m)]
    )
    vals = np.concatenate([np.ones(n_pi), -np.ones(N * m), np.ones(n_pi), np.ones(m)])
    A_eq = sp.csr_matrix((vals, (rows, cols)), shape=(2 * N * m + 1, nv))
    b_eq = np.concatenate([np.zeros(N * m), A.ravel(), [1.0]])
    ub_rows = np.concatenate([k_of, np.arange(N)])
    ub_cols = np.concatenate([idx.ravel(), np.full(N, nv - 1)])
    ub_vals = np.concatenate([np.tile(C.ravel(), N), -np.ones(N)])
    A_ub = sp.csr_matrix((ub_vals, (ub_rows, ub_cols)), shape=(N, nv))
    c = np.zeros(nv)
    c[-1] = 1.0
    return c, A_ub, np.zeros(N), A_eq, b_eq


def solve_lp_highs(C: np.ndarray, A: np.ndarray, method: str = "highs-ipm") -> dict[str, Any]:
    """Solve the WBC LP with HiGHS through ``scipy.optimize.linprog``; HiGHS's default tolerances.

    Returns ``w`` (as HiGHS gives it), ``r`` (the optimal value), ``seconds``
    (wall time of the ``linprog`` call) and ``status``.

    Raises
    ------
    RuntimeError
        If HiGHS does not report an optimum (status != 0).
    """
    from scipy.optimize import linprog

    N, m = A.shape
    c, A_ub, b_ub, A_eq, b_eq = build_lp(C, A)
    t0 = time.perf_counter()
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method=method)
    seconds = time.perf_counter() - t0
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not solve the WBC LP: status {res.status} ({res.message})")
    n_pi = N * m * m
    return {
        "w": np.asarray(res.x[n_pi : n_pi + m], dtype=np.float64),
        "r": float(res.fun),
        "seconds": seconds,
        "status": int(res.status),
    }


_TEMPLATE = """\
    # a histogram w on the m support points of instance.data["A"] (rows are the
    # N inputs, instance.data["C"] the squared-Euclidean cost): finite, >= 0, sums to 1.
    A = instance.data["A"]
    return A.mean(axis=0)
"""


@register_task
class WassersteinBallCenterTask(CatalogTask):
    """Fixed-support Wasserstein ball center: return ``w`` minimising ``max_k W(w, a_k)``.

    A solution is a float64 array of shape ``(m,)``, finite, with entries
    ``>= -NEG_TOL`` and a sum within ``SUM_TOL`` of 1.
    """

    meta = TaskMeta(
        name="wasserstein-ball-center",
        version="1",
        family="wbc",
        area="optimal transport",
        paper=Paper(
            title="Finding Wasserstein Ball Center: Efficient Algorithm and The Applications in Fairness",
            authors=["Yuntao Wang", "Yuxuan Li", "Qingyuan Yang", "Hu Ding"],
            venue="ICML 2025",
        ),
        description=(
            "Find the histogram w on a fixed support that minimises the largest Wasserstein distance "
            "max_k W(w, a_k) to N input histograms (1-D and 2-D grids, blobs, far minority groups), "
            "scored by exact OT against the LP optimum solved by HiGHS."
        ),
        metrics=[
            Metric(
                name="max_w",
                direction="min",
                description="max_k W(w, a_k), exact OT (ot.emd2), squared-Euclidean cost",
            ),
            Metric(
                name="ratio",
                direction="min",
                description="max_w / the WBC LP's optimum (HiGHS); 1 is optimal. The optimum of HiGHS's interior "
                "point method (default tolerances) differs between CPUs (seen: 1.6e-9 relative on blobs2d-N5-m36-s0 "
                "between an AVX-512 and an AVX2 machine), so bench verify compares it to 1e-6",
                rtol=1e-6,
            ),
            Metric(
                name="sum_w",
                direction="min",
                description="sum_k W(w, a_k): the barycenter objective, for the fairness trade-off",
            ),
            Metric(
                name="spread",
                direction="min",
                description="max_k W(w, a_k) - min_k W(w, a_k): how unequal the distances are",
            ),
        ],
        primary="max_w",
        normalization=Normalization(
            kind="linear",
            zero="mean",
            one="opt",
            description="0 for the mean of the inputs (the trivial reference), 1 for the WBC optimum",
        ),
        budgets={"smoke": 30.0, "standard": 600.0, "full": 3600.0},
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
        """``data``: ``C`` (cost), ``A`` (histograms, rows) and ``points`` (the support). Nothing private."""
        C, A = generate(fields["kind"], fields["N"], fields["m"], fields["seed"])
        return {"C": C, "A": A, "points": support(fields["kind"], fields["m"])}, {}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The LP optimum (HiGHS), its time, and the trivial reference (the mean of the inputs)."""
        C, A = data["C"], data["A"]
        lp = solve_lp_highs(C, A)
        mean = A.mean(axis=0)
        return {
            "opt": Reference(
                value=lp["r"],
                source="optimum of the WBC LP, scipy.optimize.linprog(method='highs-ipm'), HiGHS default tolerances",
            ),
            "opt_exact": Reference(
                value=float(distances(lp["w"].clip(0) / lp["w"].clip(0).sum(), A, C).max()),
                source="max_k W(w*, a_k) by ot.emd2 at HiGHS's w* (clipped at 0, renormalised)",
            ),
            "highs_s": Reference(
                value=lp["seconds"],
                source="wall seconds of the reference HiGHS solve (task side, on the machine that built the cache)",
            ),
            "mean": Reference(
                value=float(distances(mean, A, C).max()),
                source="max_k W(mean of the a_k, a_k), ot.emd2: the trivial reference",
            ),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Check ``w`` and recompute the distances with exact OT.

        ``w`` within the tolerances (entries ``>= -NEG_TOL``, sum within
        ``SUM_TOL`` of 1) is evaluated as ``max(w, 0) / sum(max(w, 0))``, since
        exact OT needs equal masses; this moves ``max_w`` by at most about
        ``SUM_TOL`` times the largest cost.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is a finite float64 array of shape ``(m,)``
            inside the tolerances; the message names the first bad entry.
        """
        C, A = instance.data["C"], instance.data["A"]
        m = A.shape[1]
        w = as_float_array(solution, (m,), what=f"a histogram: float64 array of shape ({m},)")
        neg = np.flatnonzero(w < -NEG_TOL)
        if neg.size:
            i = int(neg[0])
            raise InvalidSolution(
                f"w[{i}] = {w[i]:.3g} is negative (below -{NEG_TOL:g}; {neg.size} such entries)"
            )
        total = float(w.sum())
        if abs(total - 1.0) > SUM_TOL:
            raise InvalidSolution(f"w sums to {total:.9g}, not 1 within {SUM_TOL:g}")
        wc = np.clip(w, 0.0, None)
        wc = wc / wc.sum()
        dist = distances(wc, A, C)
        opt = instance.references["opt"].value
        return {
            "max_w": float(dist.max()),
            "ratio": float(dist.max() / opt),
            "sum_w": float(dist.sum()),
            "spread": float(dist.max() - dist.min()),
        }
