"""unnormalized-estimation: estimate the natural parameters of an exponential family from n samples.

Ryu, Shah and Wornell (ICML 2025) study noise-contrastive estimators of
unnormalized models ``phi_theta(x) = exp(theta^T psi(x))`` (alpha-centered
NCE, f-conditional NCE) and prove finite-sample rates for bounded exponential
families. Here the task owns the family, the true ``theta*`` and the sampler:

- ``ising``: 8 spins in ``{-1, +1}``, ``psi = (x_1..x_8, x_i x_j for i < j)``
  (36 statistics: fields, then couplings in lexicographic ``(i, j)`` order);
  ``theta*`` has fields and couplings on a cycle plus two chords. Exact
  normalizer and exact sampling by enumerating the 256 states.
- ``poly``: one variable on ``[-1, 1]``, ``psi = (x, x^2, x^3, x^4)``. Exact
  sampling by rejection from the uniform proposal with the bound
  ``exp(sum |theta_k|) >= exp(theta^T psi(x))`` (valid on the box, so the draws
  are exact samples).
- ``tgauss``: a Gaussian truncated to ``[-1, 1]^2``,
  ``psi = (x_1, x_2, x_1^2, x_1 x_2, x_2^2)``; rejection from the uniform
  proposal with the bound ``exp(max over R^2 of the concave quadratic)``
  (closed form; exact samples).

The oracle is the sample: instance ``<model>-n<n>-s<seed>`` holds ``n`` draws
that the task made (``numpy.random.default_rng([seed, n, model index, 31])``);
``n`` is the cost on the x-axis. Methods may draw noise from the public
uniform distribution on the support themselves (it costs nothing: it carries
no information about ``theta*``). ``theta*`` stays on the trusted side; a
method returns ``theta_hat`` (float64, shape ``(k,)``) and the task computes
``||theta_hat - theta*||_2``. See ``tasks/nce/README.md``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
from bench.registry import register_task
from bench.solutions import as_float_array
from bench.task import Instance, InstanceSpec, Metric, Normalization, Paper, Reference, TaskMeta

__all__ = [
    "CATALOG",
    "MODELS",
    "UnnormalizedEstimationTask",
    "coordinate_nodes",
    "features",
    "fisher_information",
    "log_partition",
    "sample",
    "support_grid",
    "true_theta",
]

MODELS = ("ising", "poly", "tgauss")
#: Spins of the Ising model.
ISING_P = 8
#: Gauss-Legendre nodes per coordinate on [-1, 1] (quadrature of exp(polynomial of degree <= 4)).
GL_NODES = 64


def _ising_pairs(p: int = ISING_P) -> list[tuple[int, int]]:
    return [(i, j) for i in range(p) for j in range(i + 1, p)]


def true_theta(model: str) -> np.ndarray:
    """``theta*`` of ``model`` (trusted side only; methods never see it)."""
    if model == "ising":
        p = ISING_P
        h = 0.1 * np.array([1.0, -1.0, 0.5, -0.5, 0.2, -0.2, 0.0, 0.3])
        J = {}
        signs = [1, 1, -1, 1, -1, 1, 1, -1]
        for i in range(p):
            a, b = sorted((i, (i + 1) % p))
            J[(a, b)] = 0.4 * signs[i]
        J[(0, 4)] = 0.3
        J[(2, 6)] = -0.3
        return np.concatenate([h, [J.get(pair, 0.0) for pair in _ising_pairs(p)]])
    if model == "poly":
        return np.array([0.5, 1.0, -0.5, -2.0])
    if model == "tgauss":
        return np.array([0.5, -0.3, -1.0, 0.8, -1.5])
    raise ValueError(f"unknown model {model!r}; models are {', '.join(MODELS)}")


def dimension(model: str) -> int:
    """Number of coordinates of ``x``."""
    return {"ising": ISING_P, "poly": 1, "tgauss": 2}[model]


def features(model: str, X: np.ndarray) -> np.ndarray:
    """``psi(X)``: ``(n, k)`` sufficient statistics of the rows of ``X`` (``(n, d)``)."""
    X = np.asarray(X, dtype=float)
    if model == "ising":
        pairs = _ising_pairs(X.shape[-1])
        i, j = np.array(pairs).T
        return np.concatenate([X, X[..., i] * X[..., j]], axis=-1)
    if model == "poly":
        x = X[..., 0:1]
        return np.concatenate([x, x**2, x**3, x**4], axis=-1)
    if model == "tgauss":
        a, b = X[..., 0:1], X[..., 1:2]
        return np.concatenate([a, b, a * a, a * b, b * b], axis=-1)
    raise ValueError(f"unknown model {model!r}")


def coordinate_nodes(model: str) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the base measure of one coordinate.

    ``ising``: the counting measure on ``{-1, +1}``; otherwise Gauss-Legendre
    with :data:`GL_NODES` nodes on ``[-1, 1]`` (Lebesgue measure).
    """
    if model == "ising":
        return np.array([-1.0, 1.0]), np.ones(2)
    t, w = np.polynomial.legendre.leggauss(GL_NODES)
    return t, w


@lru_cache(maxsize=8)
def _grid(model: str) -> tuple[np.ndarray, np.ndarray]:
    t, w = coordinate_nodes(model)
    d = dimension(model)
    mesh = np.meshgrid(*([t] * d), indexing="ij")
    wmesh = np.meshgrid(*([w] * d), indexing="ij")
    pts = np.stack([m.ravel() for m in mesh], axis=1)
    wts = np.prod(np.stack([m.ravel() for m in wmesh], axis=1), axis=1)
    pts.flags.writeable = False
    wts.flags.writeable = False
    return pts, wts


def support_grid(model: str) -> tuple[np.ndarray, np.ndarray]:
    """The whole support as points and weights: all ``2^8`` spin states, or the tensor Gauss-Legendre grid."""
    return _grid(model)


def log_partition(model: str, theta: np.ndarray) -> float:
    """``log Z(theta)``: exact enumeration (ising) or tensor Gauss-Legendre quadrature (box)."""
    pts, wts = support_grid(model)
    s = features(model, pts) @ np.asarray(theta, dtype=float) + np.log(wts)
    m = s.max()
    return float(m + np.log(np.exp(s - m).sum()))


def fisher_information(model: str, theta: np.ndarray) -> np.ndarray:
    """``Cov_theta[psi]``, the Fisher information of one sample (enumeration or quadrature)."""
    pts, wts = support_grid(model)
    F = features(model, pts)
    s = F @ theta + np.log(wts)
    p = np.exp(s - s.max())
    p /= p.sum()
    mu = p @ F
    C = F - mu
    return (C * p[:, None]).T @ C


def sample(model: str, theta: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` exact draws from ``exp(theta^T psi(x))`` on the support, ``(n, d)`` float64."""
    if model == "ising":
        pts, _ = support_grid(model)
        s = features(model, pts) @ theta
        p = np.exp(s - s.max())
        p /= p.sum()
        return np.array(pts[rng.choice(len(pts), size=n, p=p)], dtype=float)
    d = dimension(model)
    if model == "poly":
        log_bound = float(np.abs(theta).sum())  # |x^k| <= 1 on [-1, 1]
    else:  # the concave quadratic's maximum over R^2 bounds its maximum over the box
        b = theta[:2]
        A = np.array([[theta[2], theta[3] / 2], [theta[3] / 2, theta[4]]])
        if np.any(np.linalg.eigvalsh(A) >= 0):
            raise ValueError("tgauss needs a negative definite quadratic part")
        xs = -0.5 * np.linalg.solve(A, b)
        log_bound = float(b @ xs + xs @ A @ xs)
    out = []
    count = 0
    while count < n:
        prop = rng.uniform(-1.0, 1.0, size=(4 * (n - count) + 64, d))
        logacc = features(model, prop) @ theta - log_bound
        if np.any(logacc > 1e-12):
            raise AssertionError("rejection bound violated")
        keep = prop[np.log(rng.uniform(size=len(prop))) < logacc]
        out.append(keep)
        count += len(keep)
    return np.concatenate(out)[:n]


#: Sample sizes of the standard tier (four budgets, a factor ~3.2 apart) and seeds per setting.
STANDARD_NS = (300, 1000, 3000, 10000)
STANDARD_SEEDS = tuple(range(20))
#: The standard tier runs the three models (240 instances, 1,440 jobs).
STANDARD_MODELS = MODELS

#: Ids ``<model>-n<samples>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "unnormalized-estimation",
        "{model}-n{n}-s{seed}",
        example="ising-n1000-s0",
        model=Choice(MODELS, what="model"),
        n=Int(label="samples", minimum=10),
        seed=Int(),
    ),
    {
        "smoke": grid(model=MODELS, n=(400,), seed=(0,)),
        "standard": grid(model=STANDARD_MODELS, n=STANDARD_NS, seed=STANDARD_SEEDS),
        "full": grid(
            model=MODELS, n=(300, 1000, 3000, 10000, 30000, 100000), seed=tuple(range(50))
        ),
    },
)


_TEMPLATE = """\
    # theta_hat: float64 array of shape (k,) in the order of tasks.nce.features(model, X).
    # X = instance.data["X"] (n draws), instance.data["model"]; zeros are always valid.
    return np.zeros(int(instance.data["k"]), dtype=np.float64)
"""


@register_task
class UnnormalizedEstimationTask(CatalogTask):
    """Natural-parameter estimation from ``n`` exact samples, scored by ``||theta_hat - theta*||_2``.

    A solution is ``theta_hat``: a finite float64 array of shape ``(k,)``, in the
    order of :func:`features`.
    """

    meta = TaskMeta(
        name="unnormalized-estimation",
        version="1",
        family="nce",
        area="statistical estimation",
        paper=Paper(
            title="A Unified View on Learning Unnormalized Distributions via Noise-Contrastive Estimation",
            authors=["J. Jon Ryu", "Abhin Shah", "Gregory W. Wornell"],
            venue="ICML 2025",
        ),
        description=(
            "Estimate the natural parameters of an unnormalized exponential family (8-spin Ising, a quartic "
            "family on [-1,1], a truncated 2-D Gaussian) from n exact samples; error against the task's theta*."
        ),
        metrics=[
            Metric(name="err", direction="min", description="||theta_hat - theta*||_2"),
            Metric(
                name="rel_err",
                direction="min",
                description="||theta_hat - theta*||_2 / ||theta*||_2",
            ),
            Metric(
                name="eff_ratio",
                direction="min",
                description="err / sqrt(trace(I(theta*)^-1) / n): 1 is the Cramer-Rao RMS error of an efficient estimator",
            ),
        ],
        primary="err",
        normalization=Normalization(
            kind="log",
            zero="zero",
            one="cramer_rao",
            description="0 for theta_hat = 0 (err = ||theta*||), 1 at the Cramer-Rao RMS error at this n",
        ),
        budgets={"smoke": 30.0, "standard": 60.0, "full": 600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields as parameters; the model as a tag."""
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params=dict(fields),
            tags=("generated", fields["model"]),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``data``: the ``n`` draws ``X``, the model name, ``d`` and ``k``; ``private``: ``theta*``."""
        model, n = fields["model"], int(fields["n"])
        theta = true_theta(model)
        rng = np.random.default_rng([fields["seed"], n, MODELS.index(model), 31])
        X = sample(model, theta, n, rng)
        data = {
            "X": X,
            "model": model,
            "d": dimension(model),
            "k": len(theta),
            "support": "spins" if model == "ising" else "box",
        }
        return data, {"theta": theta}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """``||theta*||`` (the error of zero) and the Cramer-Rao RMS error ``sqrt(tr I^-1 / n)``."""
        theta = private["theta"]
        info = fisher_information(data["model"], theta)
        crb = math.sqrt(float(np.trace(np.linalg.inv(info))) / int(fields["n"]))
        return {
            "zero": Reference(
                value=float(np.linalg.norm(theta)),
                source="||theta*||_2: the error of theta_hat = 0",
            ),
            "cramer_rao": Reference(
                value=crb,
                source="sqrt(trace(Cov_theta*[psi]^-1) / n), covariance by enumeration (ising) or 64-node Gauss-Legendre",
            ),
        }

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute the error of ``theta_hat`` against ``theta*``.

        Raises
        ------
        InvalidSolution
            Unless ``solution`` is a finite float64 array of shape ``(k,)``.
        """
        theta = instance.private["theta"]
        k = len(theta)
        est = as_float_array(
            solution, (k,), what=f"theta_hat: a finite float64 array of shape ({k},)"
        )
        err = float(np.linalg.norm(est - theta))
        return {
            "err": err,
            "rel_err": err / float(np.linalg.norm(theta)),
            "eff_ratio": err / instance.references["cramer_rao"].value,
        }
