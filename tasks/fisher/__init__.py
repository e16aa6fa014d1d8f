"""fisher-information: estimate the Fisher information of a Gaussian-smoothed density from samples.

Seed 004, paragraph 20 ("Fisher information of Gaussian-smoothed densities",
ICML 2025; the paper itself was not located, see the README): given ``n``
i.i.d. samples from a compactly supported Hölder density ``f``, estimate

    J(f * phi_t) = integral (p')^2 / p,   p = f * phi_t,

where ``phi_t`` is the density of ``N(0, t)``: **t is the variance** of the
smoothing Gaussian (as in the abstract), ``sigma = sqrt(t)``.

The oracle is the sample: the task draws ``REPLICATES`` (10) independent
samples of ``n`` points each (the count on the x-axis is ``n``, fixed by the
instance, never reported by a method) and gives them, with ``t``, to the
method, which returns one estimate ``J_hat`` per sample (an array of 10).
Each replicate is one "seed" of the issue: an instance id's ``s<k>`` is a
block of 10 replicates, and the standard tier's two blocks give 20 seeds
per (density, t, n). Batching replicates into one job keeps the standard
tier's job count (and the runner's per-job overhead) small. The task computes
the truth ``J`` itself by quadrature of the exact convolution (the density
``f`` is private: a method sees only the samples) and scores, over the 10
replicates, the mean of ``|J_hat - J| / J`` (primary), its median and 90%
quantile, the relative RMSE, the mean signed error (the bias), and each
replicate's relative error (``rel_err_r0`` ... ``rel_err_r9``, for the
bootstrap of scripts/fisher/plots.py).

Densities on ``[0, 1]`` (``DENSITIES``), of different Hölder smoothness:

- ``beta22``: Beta(2, 2) (Lipschitz at the ends of the support, alpha = 1);
- ``beta25``: Beta(2, 5) (alpha = 1 at 0, smooth of order 4 at 1);
- ``unifmix``: 0.5 U[0, 0.4] + 0.5 U[0.6, 1] (discontinuous: bounded, alpha = 0);
- ``trimix``: 0.5 Tri(0, 0.25, 0.5) + 0.5 Tri(0.5, 0.75, 1) (continuous, piecewise
  linear: alpha = 1).

The truth: ``p(y) = integral f(x) phi_t(y - x) dx`` and
``p'(y) = integral f(x) (x - y) / t phi_t(y - x) dx`` by composite
Gauss-Legendre in ``x`` (split at every breakpoint of ``f``, panels no wider
than ``sigma / 2``, 20 nodes each), then ``J`` by the trapezoid rule in ``y``
on ``[-12 sigma, 1 + 12 sigma]`` with spacing ``sigma / 40`` (spectrally
accurate: ``p`` is analytic in ``y``). The error floor is the difference from
a second evaluation at twice the resolution in both (``sigma / 4`` panels with
30 nodes, spacing ``sigma / 80``), kept as the reference ``quad_floor``.
See ``tasks/fisher/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from bench.instances import Catalog, CatalogTask, Choice, Float, IdForm, Int, grid
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
    "DENSITIES",
    "FisherInformationTask",
    "T_VALUES",
    "breakpoints",
    "density",
    "fisher_truth",
    "sample",
    "smoothed",
]

DENSITIES = ("beta22", "beta25", "unifmix", "trimix")
#: The smoothing variances of the card.
T_VALUES = (0.01, 0.1, 1.0)
#: Independent samples per instance (one estimate each); two blocks give the issue's 20 seeds.
REPLICATES = 10
#: Blocks (instance seeds) per (density, t, n) setting in the standard tier: 2 x 10 = 20 samples.
STANDARD_SEEDS = (0, 1)
#: Width of the y-domain beyond the support, in units of sigma (p there is < e^-72).
TAIL = 12.0


def _check(fields: dict[str, Any]) -> None:
    if fields["t"] <= 0:
        raise ValueError(f"{fields}: the smoothing variance t must be > 0")


def _ids(dens, ts, ns, seeds):
    return grid(density=dens, t=ts, n=ns, seed=seeds)


#: Ids ``<density>-t<variance>-n<samples>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "fisher-information",
        "{density}-t{t}-n{n}-s{seed}",
        example="beta25-t0.1-n1000-s0",
        density=Choice(DENSITIES, what="density"),
        t=Float(label="variance"),
        n=Int(label="samples", minimum=2),
        seed=Int(),
    ),
    {
        "smoke": _ids(("unifmix",), (0.1,), (200,), (0,))
        + _ids(("trimix",), (1.0,), (1000,), (0,)),
        "standard": _ids(
            ("beta25", "unifmix", "trimix"), T_VALUES, (100, 1000, 10000, 100000), STANDARD_SEEDS
        ),
        "full": _ids(
            DENSITIES, T_VALUES, (100, 316, 1000, 3162, 10000, 31623, 100000), tuple(range(5))
        ),
    },
    validate=_check,
)


# ----------------------------------------------------------------------------- densities


def breakpoints(name: str) -> tuple[float, ...]:
    """The points where ``f`` or one of its low derivatives jumps (the support's ends included)."""
    return {
        "beta22": (0.0, 1.0),
        "beta25": (0.0, 1.0),
        "unifmix": (0.0, 0.4, 0.6, 1.0),
        "trimix": (0.0, 0.25, 0.5, 0.75, 1.0),
    }[name]


def density(name: str, x: np.ndarray) -> np.ndarray:
    """``f(x)`` (zero off ``[0, 1]``)."""
    x = np.asarray(x, dtype=float)
    if name == "beta22":
        return stats.beta(2, 2).pdf(x)
    if name == "beta25":
        return stats.beta(2, 5).pdf(x)
    if name == "unifmix":
        return np.where(((x >= 0) & (x <= 0.4)) | ((x >= 0.6) & (x <= 1)), 1.25, 0.0)
    if name == "trimix":
        tri = lambda c: np.clip(1.0 - np.abs(x - c) / 0.25, 0.0, None) / 0.25  # noqa: E731
        return 0.5 * tri(0.25) + 0.5 * tri(0.75)
    raise ValueError(f"unknown density {name!r}; known {DENSITIES}")


def sample(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. draws from ``f``."""
    if name == "beta22":
        return rng.beta(2.0, 2.0, n)
    if name == "beta25":
        return rng.beta(2.0, 5.0, n)
    comp = rng.integers(0, 2, n)
    if name == "unifmix":
        return np.where(comp == 0, rng.uniform(0.0, 0.4, n), rng.uniform(0.6, 1.0, n))
    if name == "trimix":
        return np.where(
            comp == 0, rng.triangular(0.0, 0.25, 0.5, n), rng.triangular(0.5, 0.75, 1.0, n)
        )
    raise ValueError(f"unknown density {name!r}; known {DENSITIES}")


# ----------------------------------------------------------------------------- the truth


def _nodes(name: str, sigma: float, panel: float, order: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes in x and weights ``w_k f(x_k)``, split at f's breakpoints."""
    gx, gw = np.polynomial.legendre.leggauss(order)
    xs, ws = [], []
    bps = breakpoints(name)
    for a, b in zip(bps[:-1], bps[1:], strict=True):
        panels = max(8, math.ceil((b - a) / (panel * sigma)))
        edges = np.linspace(a, b, panels + 1)
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
            xs.append(mid + half * gx)
            ws.append(half * gw)
    x = np.concatenate(xs)
    # f evaluated strictly inside each panel (Gauss nodes never touch the ends).
    return x, np.concatenate(ws) * density(name, x)


def smoothed(name: str, t: float, y: np.ndarray, *, panel: float = 0.5, order: int = 20):
    """``p(y)`` and ``p'(y)`` for ``p = f * phi_t``, by composite Gauss-Legendre in x."""
    sigma = math.sqrt(t)
    x, w = _nodes(name, sigma, panel, order)
    y = np.asarray(y, dtype=float)
    p = np.empty_like(y)
    dp = np.empty_like(y)
    for s in range(0, len(y), 512):
        d = x[None, :] - y[s : s + 512, None]
        k = np.exp(-0.5 * d * d / t) / math.sqrt(2 * math.pi * t)
        p[s : s + 512] = k @ w
        dp[s : s + 512] = (k * d / t) @ w
    return p, dp


def fisher_truth(name: str, t: float, *, fine: bool = False) -> float:
    """``J(f * phi_t)`` by quadrature (``fine`` doubles both resolutions)."""
    sigma = math.sqrt(t)
    step = sigma / (80.0 if fine else 40.0)
    lo, hi = breakpoints(name)[0] - TAIL * sigma, breakpoints(name)[-1] + TAIL * sigma
    y = np.linspace(lo, hi, math.ceil((hi - lo) / step) + 1)
    p, dp = smoothed(name, t, y, panel=0.25 if fine else 0.5, order=30 if fine else 20)
    integrand = np.where(p > 0, dp * dp / np.where(p > 0, p, 1.0), 0.0)
    return float(np.trapezoid(integrand, y))


def _sample_seed(fields: dict[str, Any]) -> list[int]:
    return [
        int(fields["seed"]),
        int(fields["n"]),
        DENSITIES.index(fields["density"]),
        int(round(1e6 * fields["t"])),
    ]


_TEMPLATE = """\
    # instance.data: "x" (float64, shape (10, n): 10 independent samples of n points)
    # and "t" (the smoothing VARIANCE). Return a float64 array of 10 estimates of
    # J(f * phi_t) = integral p'^2 / p, one per row of x.
    # 1 / (var(x) + t) is the Fisher information of the Gaussian with the same variance
    # (a lower bound on J, by the Cramer-Rao inequality for location).
    x, t = instance.data["x"], float(instance.data["t"])
    return 1.0 / (np.var(x, axis=1) + t)
"""


@register_task
class FisherInformationTask(CatalogTask):
    """Estimate ``J(f * phi_t)`` from samples of ``f``; ``t`` is the Gaussian's variance.

    A solution is a float64 array of ``REPLICATES`` finite, positive estimates,
    one per row of ``data["x"]``.
    """

    meta = TaskMeta(
        name="fisher-information",
        version="2",
        family="fisher",
        area="statistical estimation",
        paper=Paper(
            title="Fisher information of Gaussian-smoothed densities (title from the seed; paper not located)",
            authors=["UNVERIFIED (paper not located)"],
            venue="ICML 2025",
        ),
        description=(
            "Estimate the Fisher information of f * N(0, t) from n i.i.d. samples of a compactly supported "
            "Hölder density f (Beta, uniform and triangle mixtures), t in {0.01, 0.1, 1}, n = 10^2-10^5, "
            "against the task's quadrature truth."
        ),
        metrics=[
            Metric(
                name="rel_err",
                direction="min",
                description="mean over the 10 replicates of |J_hat - J| / J",
            ),
            Metric(
                name="rel_err_med",
                direction="min",
                description="median over the replicates of |J_hat - J| / J",
            ),
            Metric(
                name="rel_err_q90",
                direction="min",
                description="90% quantile over the replicates of |J_hat - J| / J",
            ),
            Metric(
                name="rel_rmse",
                direction="min",
                description="sqrt(mean (J_hat - J)^2) / J over the replicates",
            ),
            Metric(
                name="abs_err",
                direction="min",
                description="mean over the replicates of |J_hat - J|",
            ),
            Metric(
                name="signed_rel",
                direction="min",
                description="mean over the replicates of (J_hat - J) / J, the bias (its direction is nominal)",
            ),
            Metric(
                name="samples",
                direction="min",
                description="n, the points per sample the task drew",
            ),
            *[
                Metric(
                    name=f"rel_err_r{k}",
                    direction="min",
                    description=f"replicate {k}'s |J_hat - J| / J",
                )
                for k in range(REPLICATES)
            ],
        ],
        primary="rel_err",
        normalization=Normalization(
            kind="log", zero=1.0, one=1e-4, description="0 at 100% relative error, 1 at 0.01%"
        ),
        budgets={"smoke": 30.0, "standard": 120.0, "full": 600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG
    reference_cache = True

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields, plus sigma, as filterable parameters; the density as a tag."""
        params = {**fields, "sigma": math.sqrt(fields["t"])}
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=params, tags=("generated", fields["density"])
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the samples ``x`` (``(REPLICATES, n)``) and the variance ``t``. ``f``'s name stays private."""
        rng = np.random.default_rng(_sample_seed(fields))
        n = int(fields["n"])
        x = np.stack([sample(fields["density"], n, rng) for _ in range(REPLICATES)])
        return {"x": x, "t": np.float64(fields["t"])}, {"density": fields["density"]}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The truth ``J`` (the finer quadrature), its floor (the two resolutions' difference) and ``n``."""
        name, t = fields["density"], float(fields["t"])
        coarse = fisher_truth(name, t)
        fine = fisher_truth(name, t, fine=True)
        return {
            "truth": Reference(
                value=fine,
                source=(
                    "J(f * phi_t) by composite Gauss-Legendre in x (sigma/4 panels, 30 nodes) and the "
                    "trapezoid rule in y (spacing sigma/80) on [-12 sigma, 1 + 12 sigma]"
                ),
            ),
            "quad_floor": Reference(
                value=abs(fine - coarse),
                source="|J(fine) - J(coarse)|: the same quadrature at half the resolution (sigma/2, 20 nodes, sigma/40)",
            ),
            "samples": Reference(value=float(fields["n"]), source="n, drawn by the task"),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Score the replicates' estimates against the task's quadrature truth.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is a float64 array of shape ``(REPLICATES,)``, finite and > 0.
        """
        k = instance.data["x"].shape[0]
        if not isinstance(solution, np.ndarray):
            raise InvalidSolution(
                f"the solution must be a float64 numpy array of {k} estimates (one per row of x), "
                f"got {type(solution).__name__}"
            )
        if solution.dtype != np.float64 or solution.shape != (k,):
            raise InvalidSolution(
                f"the solution must be a float64 array of shape ({k},) (one J_hat per row of x); "
                f"got dtype {solution.dtype} and shape {solution.shape}"
            )
        bad = np.flatnonzero(~(np.isfinite(solution) & (solution > 0)))
        if len(bad):
            raise InvalidSolution(
                f"J_hat must be finite and > 0 (a Fisher information); entry {int(bad[0])} is {solution[bad[0]]!r}"
            )
        truth = instance.references["truth"].value
        err = solution - truth
        rel = np.abs(err) / truth
        out = {
            "rel_err": float(rel.mean()),
            "rel_err_med": float(np.median(rel)),
            "rel_err_q90": float(np.quantile(rel, 0.9)),
            "rel_rmse": float(np.sqrt(np.mean(err * err)) / truth),
            "abs_err": float(np.abs(err).mean()),
            "signed_rel": float(err.mean() / truth),
            "samples": float(instance.data["x"].shape[1]),
        }
        out.update({f"rel_err_r{r}": float(v) for r, v in enumerate(rel)})
        return out
