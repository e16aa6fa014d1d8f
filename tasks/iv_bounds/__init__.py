"""iv-bounds: bounds on a conditional average treatment effect from a high-dimensional instrument.

Schweisthal, Frauen, Schröder, Hess, Kilbertus and Feuerriegel (ICML 2025)
bound the CATE ``tau(x) = E[Y(1) - Y(0) | X = x]`` of a binary treatment when
an unobserved confounder ``U`` makes it unidentified, using a continuous,
high-dimensional instrument ``Z``: they learn a discrete representation
``phi(Z)`` and take the closed-form intersection of the per-partition IV bounds.

An instance is a synthetic structural causal model (only the task sees it):
covariates ``X`` (2-dim), a confounder ``U``, an instrument ``Z`` of 20-100
Gaussian coordinates of which the first quarter moves the treatment through a
one-dimensional index ``s = w . z`` (monotone ``mono`` or oscillating ``wave``
in ``s``), a binary treatment ``A`` and an outcome ``Y`` in ``[0, 1]`` with a
known ``tau(x)``. A method sees ``(X, Z, A, Y)`` training data, the outcome's
range and the test covariates, and returns a lower and an upper bound per test
point; the task holds ``tau`` at the test points and recomputes coverage and
width. See ``tasks/iv_bounds/README.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

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
    "D_X",
    "K_ORACLE",
    "N_TEST",
    "SHAPES",
    "Y_RANGE",
    "IvBoundsTask",
    "closed_form_bounds",
    "interval_metrics",
    "oracle_bounds",
    "propensity",
    "sample",
    "tau",
]

#: How the instrument index ``s`` moves the treatment: ``mono`` (``2.5 s``) or ``wave`` (``2.5 sin(2 s)``).
SHAPES = ("mono", "wave")
#: Covariate dimension (X uniform on [-1, 1]^D_X).
D_X = 2
#: Test points per instance (fresh covariate draws).
N_TEST = 500
#: The outcome's known range: Y lies in [0, 1] by construction.
Y_RANGE = (0.0, 1.0)
#: Partitions of the oracle reference (equal-mass bins of the true instrument index).
K_ORACLE = 4
#: Confounding: weight of U in the treatment's logit and in the outcome.
U_LOGIT, U_OUTCOME = 2.0, 0.2


def tau(x: np.ndarray) -> np.ndarray:
    """The CATE ``0.04 + 0.14 cos(2.5 mean(x))`` (in [-0.073, 0.18]); ``x`` is ``(n, D_X)``."""
    return 0.04 + 0.14 * np.cos(2.5 * np.asarray(x).mean(axis=1))


def _y0(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``E[Y(0) | x, u] = 0.45 + 0.12 sin(pi mean(x)) + 0.2 u``, broadcasting ``x``'s rows against ``u``."""
    return 0.45 + 0.12 * np.sin(np.pi * x.mean(axis=1)) + U_OUTCOME * u


def _g(s: np.ndarray, shape: str) -> np.ndarray:
    return 2.5 * s if shape == "mono" else 2.5 * np.sin(2.0 * s)


def propensity(xbar: np.ndarray, u: np.ndarray, s: np.ndarray, shape: str) -> np.ndarray:
    """``P(A = 1 | x, u, z) = 0.02 + 0.96 sigmoid(g(s) + 0.5 mean(x) + 2 u)``, broadcasting;
    ``xbar`` is ``mean(x)`` and ``s = w . z`` the instrument's index."""
    logit = _g(s, shape) + 0.5 * xbar + U_LOGIT * u
    return 0.02 + 0.96 / (1.0 + np.exp(-logit))


def _weights(dz: int, rng: np.random.Generator) -> np.ndarray:
    """The instrument's direction: random signs on the first ``dz // 4`` coordinates, unit norm."""
    r = max(1, dz // 4)
    w = np.zeros(dz)
    w[:r] = rng.choice([-1.0, 1.0], size=r) / np.sqrt(r)
    return w


def sample(shape: str, dz: int, n: int, seed: int) -> dict[str, np.ndarray]:
    """Draw one data set from the SCM; the stream is ``default_rng([seed, dz, n, SHAPES.index(shape)])``.

    Returns ``X (n, D_X)``, ``Z (n, dz)``, ``A (n,) int64``, ``Y (n,)`` (training
    data) and ``X_test (N_TEST, D_X)``, plus the SCM's ``w (dz,)`` (private).
    ``Y = Y(0) + A tau(X)`` with ``Y(0) = 0.45 + 0.12 sin(pi mean X) + 0.2 U + 0.05 E``,
    ``U, E ~ U(-1, 1)``: ``Y`` stays in ``[0, 1]`` by construction.
    """
    rng = np.random.default_rng([seed, dz, n, SHAPES.index(shape)])
    w = _weights(dz, rng)
    X = rng.uniform(-1.0, 1.0, size=(n, D_X))
    U = rng.uniform(-1.0, 1.0, size=n)
    Z = rng.standard_normal((n, dz))
    A = (rng.uniform(size=n) < propensity(X.mean(axis=1), U, Z @ w, shape)).astype(np.int64)
    E = rng.uniform(-1.0, 1.0, size=n)
    Y = _y0(X, U) + 0.05 * E + A * tau(X)
    X_test = rng.uniform(-1.0, 1.0, size=(N_TEST, D_X))
    return {"X": X, "Z": Z, "A": A, "Y": np.clip(Y, *Y_RANGE), "X_test": X_test, "w": w}


def closed_form_bounds(
    pimu: np.ndarray, pi: np.ndarray, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray]:
    """Intersection of the per-partition bounds on ``E[Y(1) - Y(0) | x]`` (mean-independent IV).

    ``pimu[i, k, a] = E[Y 1{A = a} | x_i, phi = k]`` and ``pi[i, k, a] = P(A = a | x_i, phi = k)``,
    shapes ``(m, K, 2)``. For each arm, every partition gives Manski's no-assumption
    interval ``[pimu + (1 - pi) lo, pimu + (1 - pi) hi]`` for ``E[Y(a) | x]``; the
    instrument's independence lets one intersect them over ``k``. Returns
    ``(lower, upper)`` of shape ``(m,)``; with estimated inputs ``lower > upper`` can happen.
    """
    low_arm = (pimu + (1.0 - pi) * lo).max(axis=1)  # (m, 2)
    up_arm = (pimu + (1.0 - pi) * hi).min(axis=1)
    return low_arm[:, 1] - up_arm[:, 0], up_arm[:, 1] - low_arm[:, 0]


def oracle_bounds(
    shape: str, x: np.ndarray, k: int = K_ORACLE, n_s: int = 400, n_u: int = 41
) -> tuple[np.ndarray, np.ndarray]:
    """Population bounds at ``x`` for ``k`` equal-mass bins of the true index ``g(s)``.

    The true nuisances by quadrature: ``s ~ N(0, 1)`` at ``n_s`` quantile midpoints,
    ``U ~ U(-1, 1)`` at ``n_u`` midpoints; the outcome noise has mean 0. These are
    the bounds of a ``k``-partition with exact nuisances (what a perfect estimator
    of the partition-level nuisances would report), valid by construction.
    """
    from scipy.stats import norm

    s = norm.ppf((np.arange(n_s) + 0.5) / n_s)
    u = (np.arange(n_u) + 0.5) / n_u * 2.0 - 1.0
    order = np.argsort(_g(s, shape), kind="stable")
    bins = np.empty(n_s, dtype=np.int64)
    bins[order] = np.arange(n_s) * k // n_s
    p = propensity(
        x.mean(axis=1)[:, None, None], u[None, :, None], s[None, None, :], shape
    )  # (m, n_u, n_s)
    y0 = _y0(x, u[:, None]).T  # (m, n_u)
    t = tau(x)
    p1 = p.mean(axis=1)  # (m, n_s): P(A = 1 | x, s)
    m1 = (p * (y0[:, :, None] + t[:, None, None])).mean(axis=1)  # E[Y 1{A=1} | x, s]
    m0 = ((1.0 - p) * y0[:, :, None]).mean(axis=1)
    onehot = np.eye(k)[bins] / (n_s / k)  # (n_s, k): averaging within bins
    pi = np.stack([(1.0 - p1) @ onehot, p1 @ onehot], axis=-1)
    pimu = np.stack([m0 @ onehot, m1 @ onehot], axis=-1)
    return closed_form_bounds(pimu, pi, *Y_RANGE)


def interval_metrics(
    lower: np.ndarray, upper: np.ndarray, truth: np.ndarray, scale: float
) -> dict[str, float]:
    """Coverage, widths and the interval score of bounds against the true CATE.

    ``interval_score`` is the mean of ``width + (2 / 0.05) * miss`` (Gneiting and
    Raftery's score of a central 95 % interval), ``miss`` the distance from
    ``tau`` to the interval (0 when covered). ``scale`` is ``hi - lo``, the width
    of the no-instrument (Manski) bounds.
    """
    width = upper - lower
    miss = np.maximum(lower - truth, 0.0) + np.maximum(truth - upper, 0.0)
    return {
        "coverage": float(np.mean(miss == 0.0)),
        "mean_width": float(width.mean()),
        "rel_width": float(width.mean() / scale),
        "mean_miss": float(miss.mean()),
        "interval_score": float(np.mean(width + 40.0 * miss)),
    }


def _check(fields: dict[str, Any]) -> None:
    if not 20 <= fields["dz"] <= 1000:
        raise ValueError(f"{fields}: the instrument needs 20 to 1000 coordinates (dz)")
    if fields["n"] < 200:
        raise ValueError(f"{fields}: needs at least 200 training points (n)")


#: Instance ids ``<shape>-z<instrument dim>-n<train size>-s<data seed>``, and the tiers:
#: smoke (seconds, in CI), standard (the published sweep), full (paper scale).
CATALOG = Catalog(
    IdForm(
        "iv-bounds",
        "{shape}-z{dz}-n{n}-s{seed}",
        example="mono-z20-n2000-s0",
        shape=Choice(SHAPES, what="instrument shape"),
        dz=Int(label="instrument dim", minimum=1),
        n=Int(label="train size", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": [{"shape": "mono", "dz": 20, "n": 600, "seed": 0}],
        "standard": [
            {"shape": "mono", "dz": 20, "n": 2000, "seed": 0},
            {"shape": "mono", "dz": 50, "n": 2000, "seed": 0},
            {"shape": "mono", "dz": 100, "n": 4000, "seed": 0},
            {"shape": "wave", "dz": 20, "n": 4000, "seed": 0},
        ],
        "full": grid(shape=SHAPES, dz=(20, 50, 100), n=(2000, 5000), seed=(0, 1, 2, 3, 4)),
    },
    validate=_check,
)


_TEMPLATE = """\
    # No-instrument (Manski) bounds: always valid, as wide as the outcome's range allows.
    # instance.data: X (n, 2), Z (n, dz), A (n,) int64, Y (n,), X_test (m, 2), y_range [lo, hi].
    lo, hi = instance.data["y_range"]
    m = len(instance.data["X_test"])
    return {"lower": np.full(m, -(hi - lo)), "upper": np.full(m, hi - lo)}
"""


@register_task
class IvBoundsTask(CatalogTask):
    """Bounds on the CATE at test covariates, scored against the SCM's true ``tau``.

    A solution is a dict ``{"lower": ..., "upper": ...}``: two finite float64
    arrays of shape ``(m,)`` (one entry per row of ``X_test``), inside
    ``[-(hi - lo), hi - lo]`` (the range of a difference of two outcomes), with
    ``lower <= upper`` everywhere.
    """

    meta = TaskMeta(
        name="iv-bounds",
        version="1",
        family="iv_bounds",
        area="causal inference",
        paper=Paper(
            title="Learning Representations of Instruments for Partial Identification of Treatment Effects",
            authors=[
                "Jonas Schweisthal",
                "Dennis Frauen",
                "Maresa Schröder",
                "Konstantin Hess",
                "Niki Kilbertus",
                "Stefan Feuerriegel",
            ],
            venue="ICML 2025",
            arxiv="2410.08976",
        ),
        description=(
            "Synthetic SCMs with an unobserved confounder, a binary treatment, an outcome in [0, 1], 2-dim "
            "covariates and a 20-100-dim Gaussian instrument acting through a hidden 1-dim index; methods "
            "return lower and upper bounds on the CATE at 500 test covariates, the task scores coverage of "
            "the true CATE, width and the interval score."
        ),
        metrics=[
            Metric(
                name="interval_score",
                direction="min",
                description="mean of width + 40 * distance from tau to the interval (95 % interval score)",
            ),
            Metric(
                name="coverage",
                direction="max",
                description="share of test points with lower <= tau <= upper",
            ),
            Metric(name="mean_width", direction="min", description="mean of upper - lower"),
            Metric(
                name="rel_width",
                direction="min",
                description="mean width / (hi - lo), the Manski width",
            ),
            Metric(
                name="mean_miss",
                direction="min",
                description="mean distance from tau to the interval",
            ),
            Metric(
                name="width_vs_oracle",
                direction="min",
                description=f"mean width / mean width of the {K_ORACLE}-bin oracle bounds (true nuisances)",
            ),
        ],
        primary="interval_score",
        normalization=Normalization(
            kind="linear",
            zero="manski",
            one="oracle",
            description=f"0 for the no-instrument width hi - lo, 1 for the {K_ORACLE}-bin oracle bounds' width",
        ),
        gap_reference="oracle",
        # Seconds per job. Smoke budgets keep several times the quiet-machine time.
        budgets={"smoke": 30.0, "standard": 240.0, "full": 900.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The id's fields, plus the test size, as filterable parameters."""
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params={**fields, "n_test": N_TEST},
            tags=(fields["shape"],),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: ``X, Z, A, Y, X_test`` and ``y_range``; private: ``tau_test`` and the oracle bounds."""
        d = sample(fields["shape"], fields["dz"], fields["n"], fields["seed"])
        lower, upper = oracle_bounds(fields["shape"], d["X_test"])
        data = {k: d[k] for k in ("X", "Z", "A", "Y", "X_test")}
        data["y_range"] = np.asarray(Y_RANGE, dtype=np.float64)
        private = {"tau_test": tau(d["X_test"]), "oracle_lower": lower, "oracle_upper": upper}
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """``manski``: the no-instrument width ``hi - lo``; ``oracle``: the mean width of the
        population bounds of the ``K_ORACLE``-bin partition of the true index (exact nuisances)."""
        lo, hi = (float(v) for v in data["y_range"])
        width = float(np.mean(private["oracle_upper"] - private["oracle_lower"]))
        return {
            "manski": Reference(
                value=hi - lo, source="no-instrument bounds: width hi - lo at every x"
            ),
            "oracle": Reference(
                value=width,
                source=f"closed-form bounds, {K_ORACLE} equal-mass bins of the true index, nuisances by quadrature",
            ),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute every metric from the returned bounds.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is a dict with float64 arrays ``lower`` and ``upper``
            of shape ``(m,)``, finite, inside ``[-(hi - lo), hi - lo]``, ``lower <= upper``.
        """
        m = len(instance.data["X_test"])
        lo, hi = (float(v) for v in instance.data["y_range"])
        scale = hi - lo
        if not isinstance(solution, dict) or set(solution) != {"lower", "upper"}:
            got = sorted(solution) if isinstance(solution, dict) else type(solution).__name__
            raise InvalidSolution(
                f"the solution must be a dict with keys 'lower' and 'upper'; got {got}"
            )
        bounds = {}
        for name in ("lower", "upper"):
            v = solution[name]
            if not isinstance(v, np.ndarray) or v.dtype != np.float64:
                kind = v.dtype if isinstance(v, np.ndarray) else type(v).__name__
                raise InvalidSolution(
                    f"{name}: expected a float64 numpy array of shape ({m},), got {kind}"
                )
            if v.shape != (m,):
                raise InvalidSolution(
                    f"{name}: has shape {v.shape}; expected ({m},), one entry per row of X_test"
                )
            bad = np.flatnonzero(~np.isfinite(v))
            if bad.size:
                raise InvalidSolution(
                    f"{name}: not finite at test point {int(bad[0])} ({bad.size} bad values)"
                )
            out = np.flatnonzero((v < -scale - 1e-12) | (v > scale + 1e-12))
            if out.size:
                raise InvalidSolution(
                    f"{name}: {v[out[0]]:.6g} at test point {int(out[0])} is outside [-{scale:g}, {scale:g}], "
                    f"the range of a difference of two outcomes in [{lo:g}, {hi:g}] ({out.size} such points)"
                )
            bounds[name] = v
        crossed = np.flatnonzero(bounds["lower"] > bounds["upper"])
        if crossed.size:
            i = int(crossed[0])
            raise InvalidSolution(
                f"lower > upper at test point {i} ({bounds['lower'][i]:.6g} > {bounds['upper'][i]:.6g}; "
                f"{crossed.size} such points)"
            )
        metrics = interval_metrics(
            bounds["lower"], bounds["upper"], np.asarray(instance.private["tau_test"]), scale
        )
        oracle = instance.references["oracle"].value
        if oracle > 0:
            metrics["width_vs_oracle"] = metrics["mean_width"] / oracle
        return metrics
