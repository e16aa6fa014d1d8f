"""equivariant-regression: regression with a known matrix-group symmetry (EKAN, ICML 2025).

Hu, Wang and Lin build Kolmogorov-Arnold networks equivariant to an arbitrary matrix group
(EKAN). Here a method learns one of four maps of EMLP's synthetic suite (O(5)-invariant
regression, the O(3)-equivariant inertia tensor, the Lorentz-invariant scattering matrix element,
three-body dynamics in the plane; :mod:`tasks.equivariant.problems`) from ``n`` training pairs
under one training recipe the task fixes (Adam, learning rate, steps, batch size), and answers
queries the task draws after training. The task keeps the test targets and the group sampler.

Protocol (two rounds; :class:`FitQuerySession`):

1. ``select({"phase": "train", "steps", "batch_size", "lr", "train_seconds"})``: train on
   ``instance.data`` (``X_train``, ``Y_train``, the group's generators and the representations)
   and return the model's trainable parameters as ``{name: float array}``. The task counts
   their entries (``n_params``: "parameters shipped by the method"; nothing the method says
   about itself counts).
2. ``select({"phase": "predict", "X": queries})``: return predictions ``(m, out)``. The
   queries are the test inputs and the same inputs each moved by its own random group element
   (drawn by the task from the job seed after training), shuffled together.

The task then computes the test MSE (and its log10 and the MSE relative to the test targets'
variance) on the untransformed rows, and the equivariance error
``rms(f(g x) - rho_out(g) f(x)) / (rms(f(g x)) + rms(rho_out(g) f(x)))`` (EMLP's
scale-adjusted relative error) on the pairs. See ``tasks/equivariant/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int, grid
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
    Session,
    TaskMeta,
)
from tasks.equivariant.problems import (
    PROBLEMS,
    act,
    generate,
    group_generators,
    rep_size,
    sample_group,
)

__all__ = ["CATALOG", "RECIPES", "EquivariantRegression", "FitQuerySession", "score"]

#: Test examples per instance.
N_TEST = 1000
#: The training recipe of each tier, the same for every method: Adam steps, batch (capped at n),
#: learning rate (the official 3e-3) and the wall-time limit of the training round.
RECIPES = {
    "smoke": {"steps": 40, "batch_size": 500, "lr": 3e-3, "train_seconds": 20.0},
    "standard": {"steps": 1000, "batch_size": 500, "lr": 3e-3, "train_seconds": 240.0},
    "full": {"steps": 5000, "batch_size": 500, "lr": 3e-3, "train_seconds": 1200.0},
}
#: Largest parameter array a method may ship (entries), and most arrays.
MAX_PARAMS, MAX_ARRAYS = 5_000_000, 1000

_SIZES = (100, 316, 1000, 3162, 10000)

#: Ids ``<problem>-n<train size>-<tier>-s<data seed>``; the tier fixes the recipe.
CATALOG = Catalog(
    IdForm(
        "equivariant-regression",
        "{problem}-n{n}-{tier}-s{seed}",
        example="o5-n100-standard-s0",
        problem=Choice(tuple(PROBLEMS), what="problem"),
        n=Int(label="training examples", minimum=10),
        tier=Choice(tuple(RECIPES), what="recipe"),
        seed=Int(),
    ),
    {
        "smoke": grid(problem=("o5", "inertia"), n=(100,), tier=("smoke",), seed=(0,)),
        "standard": grid(problem=tuple(PROBLEMS), n=(100, 1000), tier=("standard",), seed=(0,)),
        "full": grid(problem=tuple(PROBLEMS), n=_SIZES, tier=("full",), seed=(0,)),
    },
)


def score(pred: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """``mse`` (mean over rows and outputs), ``log10_mse`` and ``rel_mse`` = mse / mean (y - mean y)^2."""
    mse = float(np.mean((pred - y) ** 2))
    var = float(np.mean((y - y.mean(0)) ** 2))
    return {"mse": mse, "log10_mse": math.log10(max(mse, 1e-300)), "rel_mse": mse / var}


def equivariance_error(f_gx: np.ndarray, rho_f_x: np.ndarray) -> float:
    """EMLP's scale-adjusted relative error ``rms(a - b) / (rms(a) + rms(b))``."""
    rms = lambda a: float(np.sqrt(np.mean(a**2)))  # noqa: E731
    den = rms(f_gx) + rms(rho_f_x)
    return rms(f_gx - rho_f_x) / den if den > 0 else 0.0


class FitQuerySession(Session):
    """Train, then predict on queries the task draws after training (test and transformed inputs)."""

    def __init__(self, instance: Instance, seed: int) -> None:
        self.inst = instance
        self.seed = int(seed)
        self.phase = 0
        self.params: Any = None
        self.perm: np.ndarray | None = None
        self.queries: np.ndarray | None = None
        self.g: np.ndarray | None = None
        self.answer: Any = None

    def state(self) -> dict[str, Any] | None:
        d = self.inst.data
        if self.phase == 0:
            return {k: d[k] for k in ("steps", "batch_size", "lr", "train_seconds")} | {
                "phase": "train"
            }
        if self.phase == 1:
            x = np.asarray(self.inst.data["X_test"])
            rng = np.random.default_rng(
                [self.seed, 7919]
            )  # drawn after training, from the job seed
            self.g = sample_group(d["group"], len(x), rng)
            gx = act(x, self.g, tuple(d["rep_in"]))
            both = np.concatenate([x, gx])
            self.perm = rng.permutation(len(both))
            self.queries = both[self.perm]
            return {"phase": "predict", "X": self.queries}
        return None

    def apply(self, action: Any) -> None:
        if self.phase == 0:
            self.params = action
        else:
            self.answer = action
        self.phase += 1

    def solution(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "predictions": self.answer,
            "perm": self.perm,
            "g": self.g,
        }


def count_params(params: Any) -> int:
    """Entries of the shipped ``{name: float array}``, or :class:`InvalidSolution`."""
    if not isinstance(params, dict) or not params:
        raise InvalidSolution(
            f"params: the training round must return a non-empty dict {{name: float array}}, got {type(params).__name__}"
        )
    if len(params) > MAX_ARRAYS:
        raise InvalidSolution(f"params: {len(params)} arrays, more than {MAX_ARRAYS}")
    total = 0
    for name, a in params.items():
        if not isinstance(name, str) or not isinstance(a, np.ndarray) or a.dtype.kind != "f":
            raise InvalidSolution(
                f"params[{name!r}]: expected a float numpy array, got {type(a).__name__}"
            )
        if not np.all(np.isfinite(a)):
            raise InvalidSolution(f"params[{name!r}]: not finite")
        total += int(a.size)
    if total > MAX_PARAMS:
        raise InvalidSolution(f"params: {total} entries, more than {MAX_PARAMS}")
    return total


_TEMPLATE = '''\
"""{name}: a model for the ``equivariant-regression`` task.

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="{name}",
    kind="{kind}",
    tasks=["equivariant-regression"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Model:
    """Predicts the training mean: a valid, weak starting point (see tasks/equivariant/__init__.py)."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.data = instance.data

    def select(self, state):
        """Round ``train``: fit, return the trainable parameters {{name: float array}}; round ``predict``: (m, out) predictions."""
        if state["phase"] == "train":
            self.mean = np.asarray(self.data["Y_train"]).mean(0)
            return {{"mean": self.mean.copy()}}
        return np.tile(self.mean, (len(state["X"]), 1))
'''


@register_task
class EquivariantRegression(CatalogTask):
    """Regression with a group symmetry; a solution is the two rounds' answers (see the module)."""

    meta = TaskMeta(
        name="equivariant-regression",
        version="1",
        family="equivariant",
        area="equivariant learning",
        paper=Paper(
            title="Incorporating Arbitrary Matrix Group Equivariance into KANs",
            authors=["Lexiang Hu", "Yisen Wang", "Zhouchen Lin"],
            arxiv="2410.00435",
            venue="ICML 2025",
            code_url="https://github.com/hulx2002/EKAN",
        ),
        description=(
            "EMLP's synthetic suite (O(5)-invariant regression, O(3) inertia tensor, Lorentz-invariant "
            "scattering, planar three-body dynamics) learned from n examples under one fixed Adam recipe; "
            "the task scores test MSE, the equivariance error on inputs moved by random group elements it "
            "draws, and the parameter count of the arrays the method ships."
        ),
        metrics=[
            Metric(
                name="mse", direction="min", description="test MSE on the untransformed test inputs"
            ),
            Metric(name="log10_mse", direction="min", description="log10 of the test MSE"),
            Metric(
                name="rel_mse",
                direction="min",
                description="test MSE / mean squared deviation of the test targets",
            ),
            Metric(
                name="equi_err",
                direction="min",
                description="rms(f(gx) - rho(g) f(x)) / (rms f(gx) + rms rho(g) f(x)), one random g per test input",
            ),
            Metric(
                name="n_params",
                direction="min",
                description="entries of the parameter arrays the method shipped after training",
            ),
            Metric(name="log10_params", direction="min", description="log10 of n_params"),
        ],
        primary="rel_mse",
        normalization=Normalization(
            kind="linear",
            zero=1.0,
            one=0.0,
            description="1 for predicting the test mean, 0 for a perfect fit",
        ),
        interactive=True,
        budgets={"smoke": 60.0, "standard": 360.0, "full": 3600.0},
    )
    catalog = CATALOG

    def scaffold(self, name: str, kind: str) -> str:
        """A method file with a ``Model`` class answering both rounds (``bench new-method``)."""
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        p = PROBLEMS[fields["problem"]]
        params = {**fields, "group": p.group, "steps": RECIPES[fields["tier"]]["steps"]}
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=params, tags=("generated", p.group)
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: training pairs, test inputs, group generators, reps, recipe. Private: test targets."""
        p = PROBLEMS[fields["problem"]]
        d = generate(p.name, fields["n"], N_TEST, fields["seed"])
        y_test = d.pop("Y_test")
        data = {
            **d,
            **group_generators(p.group),
            **RECIPES[fields["tier"]],
            "problem": p.name,
            "group": p.group,
            "d": p.d,
            "rep_in": list(p.rep_in),
            "rep_out": list(p.rep_out),
        }
        data["batch_size"] = min(int(data["batch_size"]), int(fields["n"]))
        return data, {"Y_test": y_test}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        y = private["Y_test"]
        mean = np.broadcast_to(np.asarray(data["Y_train"]).mean(0), y.shape)
        return {
            "train_mean": Reference(
                value=score(mean, y)["rel_mse"], source="rel_mse of the training targets' mean"
            )
        }

    def session(self, instance: Instance, seed: int) -> Session:
        return FitQuerySession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Count the shipped parameters, check the predictions, recompute every metric.

        Raises
        ------
        InvalidSolution
            If the parameters are not a dict of finite float arrays, or if the predictions are not
            a finite float64 ``(2 n_test, out)`` array.
        """
        if not isinstance(solution, dict) or "predictions" not in solution:
            raise InvalidSolution(
                "the solution must come from the two-round protocol (train, predict)"
            )
        d = instance.data
        n_params = count_params(solution["params"])
        y = instance.private["Y_test"]
        n, dout = y.shape
        pred = as_float_array(
            solution["predictions"],
            (2 * n, dout),
            what=f"predictions: a finite float64 array of shape {(2 * n, dout)}",
            index="(row, output)",
        )
        back = np.empty_like(pred)
        back[solution["perm"]] = pred
        f_x, f_gx = back[:n], back[n:]
        rho_f_x = act(f_x, solution["g"], tuple(d["rep_out"]))
        out = score(f_x, y)
        out["equi_err"] = equivariance_error(f_gx, rho_f_x)
        out["n_params"] = float(n_params)
        out["log10_params"] = math.log10(n_params)
        return out


assert all(rep_size(p.rep_in, p.d) > 0 for p in PROBLEMS.values())
