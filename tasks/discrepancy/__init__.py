"""discrepancy: colour the columns of A with signs to make every row sum small, ``min ||A x||_inf``.

Deng, Li, Song and Weinstein (ICML 2025) run Larsen's iterated partial
colouring in ``O~(nnz(A) + n^3)`` time (combinatorial; ``n^2.53`` with fast
matrix multiplication) with a JL sketch of the row norms and a lazy batched
projection. Instances are ``A in R^{m x n}`` of three kinds:

- ``gaussian``: i.i.d. N(0, 1) entries (dense);
- ``rademacher``: i.i.d. +-1 entries (dense);
- ``sparse``: ``SPARSE_S`` = 8 nonzeros of value +-1 per column, in distinct
  uniformly random rows (``nnz = 8 n`` whatever ``m``: ``nnz/n`` is fixed across
  sizes, as the paper's ``nnz(A) + n^3`` scaling test needs); sent as CSR.

and two shapes: ``square`` (``m = n``) and ``tall`` (``m = TALL * n``, 4).

A method returns ``x in {-1, +1}^n``. The task recomputes ``||A x||_inf``
(``disc``, primary) and normalises it by references computed on the task side:
the random-colouring scale ``max_i ||a_i||_2 sqrt(2 ln(2m))`` (Hoeffding and a
union bound: uniform random signs stay below it with probability >= 1/2), the
median of ``||A x||_inf`` over ``RANDOM_DRAWS`` task-side random colourings,
and a certified lower bound on ``min_x ||A x||_inf``. See
``tasks/discrepancy/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
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
    "SHAPES",
    "DiscrepancyTask",
    "check_signs",
    "generate",
    "lower_bound",
    "matrix",
    "random_scale",
]

KINDS = ("gaussian", "rademacher", "sparse")
SHAPES = ("square", "tall")
#: ``m = TALL * n`` for tall instances.
TALL = 4
#: Nonzeros per column of the sparse instances.
SPARSE_S = 8
#: Task-side random colourings behind the ``random_median`` reference.
RANDOM_DRAWS = 201


def rows_of(shape: str, n: int) -> int:
    """``m`` for a shape and ``n``."""
    return n if shape == "square" else TALL * n


def _check(fields: dict[str, Any]) -> None:
    if fields["kind"] == "sparse" and rows_of(fields["shape"], fields["n"]) < SPARSE_S:
        raise ValueError(f"{fields}: a sparse instance needs m >= {SPARSE_S}")


def _ids(kinds, shapes, ns, seeds):
    return grid(kind=kinds, shape=shapes, n=ns, seed=seeds)


#: Ids ``<kind>-<shape>-n<columns>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "discrepancy",
        "{kind}-{shape}-n{n}-s{seed}",
        example="gaussian-tall-n64-s0",
        kind=Choice(KINDS, what="matrix kind"),
        shape=Choice(SHAPES, what="shape"),
        n=Int(label="columns", minimum=2),
        seed=Int(),
    ),
    {
        "smoke": _ids(("gaussian", "sparse"), ("tall",), (64,), (0,))
        + _ids(("rademacher",), ("square",), (64,), (0,)),
        "standard": _ids(KINDS, SHAPES, (64, 128, 256, 512), (0,))
        + _ids(("sparse",), SHAPES, (1024,), (0,)),
        "full": _ids(KINDS, SHAPES, (64, 128, 256, 512, 1024), (0, 1, 2)),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- generation


def generate(kind: str, shape: str, n: int, seed: int) -> np.ndarray | sp.csr_matrix:
    """The matrix ``A`` (dense for gaussian and rademacher, CSR for sparse).

    The stream is ``numpy.random.default_rng([seed, n, SHAPES.index(shape), KINDS.index(kind)])``.
    """
    if kind not in KINDS or shape not in SHAPES:
        raise ValueError(f"unknown kind/shape {kind!r}/{shape!r}; kinds {KINDS}, shapes {SHAPES}")
    m = rows_of(shape, n)
    rng = np.random.default_rng([seed, n, SHAPES.index(shape), KINDS.index(kind)])
    if kind == "gaussian":
        return rng.standard_normal((m, n))
    if kind == "rademacher":
        return rng.choice(np.array([-1.0, 1.0]), size=(m, n))
    rows = np.concatenate([rng.choice(m, SPARSE_S, replace=False) for _ in range(n)])
    cols = np.repeat(np.arange(n), SPARSE_S)
    vals = rng.choice(np.array([-1.0, 1.0]), size=n * SPARSE_S)
    return sp.csr_matrix((vals, (rows, cols)), shape=(m, n))


def to_data(A: np.ndarray | sp.csr_matrix) -> dict[str, Any]:
    """What a method sees: ``{"A": dense}`` or the CSR arrays ``indptr, indices, values, shape``."""
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        return {
            "indptr": A.indptr.astype(np.int64),
            "indices": A.indices.astype(np.int64),
            "values": A.data.astype(float),
            "shape": np.asarray(A.shape, dtype=np.int64),
        }
    return {"A": np.asarray(A, dtype=float)}


def matrix(data: dict[str, Any]) -> np.ndarray | sp.csr_matrix:
    """The instance's ``A`` from its data: a dense array or a ``scipy.sparse.csr_matrix``."""
    if "A" in data:
        return np.asarray(data["A"], dtype=float)
    m, n = (int(v) for v in data["shape"])
    return sp.csr_matrix(
        (
            np.asarray(data["values"], float),
            np.asarray(data["indices"]),
            np.asarray(data["indptr"]),
        ),
        shape=(m, n),
    )


# ----------------------------------------------------------------------------- trusted computations


def discrepancy(A: np.ndarray | sp.csr_matrix, x: np.ndarray) -> float:
    """``||A x||_inf``."""
    return float(np.max(np.abs(A @ np.asarray(x, dtype=float))))


def random_scale(A: np.ndarray | sp.csr_matrix) -> float:
    """``max_i ||a_i||_2 sqrt(2 ln(2m))``: uniform random signs stay below it with probability >= 1/2."""
    sq = (
        np.asarray(A.multiply(A).sum(axis=1)).ravel()
        if sp.issparse(A)
        else np.einsum("ij,ij->i", A, A)
    )
    return float(math.sqrt(sq.max()) * math.sqrt(2.0 * math.log(2.0 * A.shape[0])))


def lower_bound(A: np.ndarray | sp.csr_matrix) -> tuple[float, str]:
    """A certified lower bound on ``min_{x in {+-1}^n} ||A x||_inf`` and what gave it.

    Two bounds, the larger kept:

    - spectral: ``||A x||_inf >= ||A x||_2 / sqrt(m) >= sigma_min(A) sqrt(n / m)``
      for ``m >= n`` (``||x||_2 = sqrt(n)``; numpy ``svd``, dense);
    - parity: if ``A`` is integer and some row has an odd sum, that row's
      ``<a, x>`` is odd for every sign vector, so ``||A x||_inf >= 1``.

    Both are weak (the spectral one is about ``sqrt(n)/2`` for tall Gaussian
    and Rademacher matrices, near 0 for square ones); there is no tight
    certified lower bound at these sizes.
    """
    dense = A.toarray() if sp.issparse(A) else np.asarray(A)
    m, n = dense.shape
    spectral = 0.0
    if m >= n:
        sig = np.linalg.svd(dense, compute_uv=False)
        spectral = float(sig[-1] * math.sqrt(n / m))
    parity = 0.0
    if np.all(dense == np.round(dense)):
        sums = np.round(dense.sum(axis=1)).astype(np.int64)
        parity = 1.0 if np.any(sums % 2 == 1) else 0.0
    if parity > spectral:
        return parity, "parity: an integer row with an odd sum has |<a, x>| >= 1"
    return (
        spectral,
        "spectral: sigma_min(A) sqrt(n/m) <= ||Ax||_2 / sqrt(m) <= ||Ax||_inf (numpy svd)",
    )


def random_median(
    A: np.ndarray | sp.csr_matrix, draws: int = RANDOM_DRAWS, seed: int = 12345
) -> float:
    """The median of ``||A x||_inf`` over ``draws`` uniform random sign vectors (a fixed task-side stream)."""
    rng = np.random.default_rng(seed)
    X = rng.choice(np.array([-1.0, 1.0]), size=(A.shape[1], draws))
    return float(np.median(np.max(np.abs(A @ X), axis=0)))


def check_signs(solution: Any, n: int) -> np.ndarray:
    """``solution`` as a float array of ``n`` entries in ``{-1, +1}``, or InvalidSolution naming the entry."""
    expected = f"an integer or float array of exactly n={n} values, each -1 or +1"
    if not isinstance(solution, (np.ndarray, list, tuple)):
        raise InvalidSolution(f"the solution must be {expected}, got {type(solution).__name__}")
    try:
        x = np.asarray(solution)
    except (ValueError, TypeError) as exc:
        raise InvalidSolution(
            f"the solution must be {expected}; cannot read it as an array: {exc}"
        ) from None
    if x.dtype.kind not in "iuf":
        raise InvalidSolution(f"the solution must be {expected}, got dtype {x.dtype}")
    if x.ndim != 1 or x.shape[0] != n:
        raise InvalidSolution(f"the solution must be {expected}, got shape {x.shape}")
    bad = np.flatnonzero(~((x == 1) | (x == -1)))
    if len(bad):
        i = int(bad[0])
        raise InvalidSolution(
            f"entry {i} is {x[i]!r}, not -1 or +1 (a full colouring; {len(bad)} bad entries)"
        )
    return x.astype(float)


_TEMPLATE = """\
    # signs for the n columns of A (tasks.discrepancy.matrix(instance.data) gives A,
    # dense or scipy CSR); all +1 is always valid.
    from tasks.discrepancy import matrix

    return np.ones(matrix(instance.data).shape[1], dtype=np.int64)
"""


@register_task
class DiscrepancyTask(CatalogTask):
    """Discrepancy minimisation: signs ``x in {-1, +1}^n`` minimising ``||A x||_inf``.

    A solution is an integer or float array of ``n`` entries, each exactly -1 or +1.
    """

    meta = TaskMeta(
        name="discrepancy",
        version="1",
        family="discrepancy",
        area="combinatorial optimization",
        paper=Paper(
            title="Discrepancy Minimization in Input-Sparsity Time",
            authors=["Yichuan Deng", "Xiaoyu Li", "Zhao Song", "Omri Weinstein"],
            venue="ICML 2025",
        ),
        description=(
            "Choose signs x in {-1,+1}^n minimising ||Ax||_inf for Gaussian, Rademacher and sparse A "
            "(square and tall), against random-colouring references and a certified lower bound."
        ),
        metrics=[
            Metric(name="disc", direction="min", description="||A x||_inf, recomputed by the task"),
            Metric(
                name="ratio",
                direction="min",
                description="disc / (max_i ||a_i||_2 sqrt(2 ln(2m))), the random-colouring scale",
            ),
            Metric(
                name="vs_random",
                direction="min",
                description="disc / the median ||Ax||_inf of 201 task-side random colourings",
            ),
            Metric(
                name="over_lower",
                direction="min",
                description="disc / the certified lower bound (NaN where the bound is 0)",
            ),
        ],
        primary="disc",
        normalization=Normalization(
            kind="linear",
            zero="random_median",
            one="lower",
            description="0 for the median random colouring, 1 for the certified lower bound",
        ),
        budgets={"smoke": 30.0, "standard": 300.0, "full": 900.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields and ``m`` as filterable parameters; the kind and shape as tags."""
        params = dict(fields)
        params["m"] = rows_of(fields["shape"], fields["n"])
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=params,
            tags=("generated", fields["kind"], fields["shape"]),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the matrix (dense ``A`` or CSR arrays). Nothing is private."""
        A = generate(fields["kind"], fields["shape"], fields["n"], fields["seed"])
        return to_data(A), {}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The random-colouring scale, the median random colouring, and the certified lower bound."""
        A = matrix(data)
        low, how = lower_bound(A)
        return {
            "random_scale": Reference(
                value=random_scale(A),
                source="max_i ||a_i||_2 sqrt(2 ln(2m)) (Hoeffding + union bound over the m rows)",
            ),
            "random_median": Reference(
                value=random_median(A),
                source=f"median ||Ax||_inf over {RANDOM_DRAWS} task-side uniform random sign vectors",
            ),
            "lower": Reference(value=low, source="certified lower bound, " + how),
            "nnz": Reference(
                value=float(A.nnz if sp.issparse(A) else np.count_nonzero(A)),
                source="number of nonzeros of A",
            ),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute ``||A x||_inf`` from the signs and normalise it.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is an array of exactly ``n`` values, each -1 or +1.
        """
        A = matrix(instance.data)
        x = check_signs(solution, A.shape[1])
        d = discrepancy(A, x)
        refs = instance.references
        low = refs["lower"].value
        return {
            "disc": d,
            "ratio": d / refs["random_scale"].value,
            "vs_random": d / refs["random_median"].value,
            "over_lower": d / low if low > 0 else math.nan,
        }
