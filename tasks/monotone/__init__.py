"""monotone-regression: fit a predictor that is monotone in declared features.

Sartor, Sinigaglia and Susto (ICML 2025) build MLPs that are monotone by
construction from ReLU-type activations. Here a method fits a predictor on training
rows whose columns ``mono`` are declared monotone (direction ``+1`` or ``-1``), and
the task then queries the fitted predictor (two rounds, see below) on rows it draws
after the fit: test rows, extrapolation rows (monotone columns beyond the training
range), monotonicity pairs ``(x, x + delta e_j)`` and a grid along each monotone
column. The task computes test and extrapolation RMSE (for classification: of the
probabilities, i.e. root Brier score; plus accuracy and log-loss) and the
monotonicity-violation rate. A method that declares itself monotone by construction
must have no violation at all (up to the float tolerance of
:data:`tasks.monotone.checks.TOL_REL`); otherwise its run is invalid.
See ``tasks/monotone/README.md``.

Protocol (two rounds):

1. ``select({"phase": "fit"})``: fit on ``instance.data`` (``X_train``, ``y_train``,
   ``mono``, ``direction``, ``task_type``, ``recipe``); return
   ``{"monotone": bool}``, whether the predictor is monotone by construction (the
   value of the method's registered ``monotone`` parameter).
2. ``select({"phase": "predict", "X": array (m, d)})``: return the ``m`` predictions
   (float64; for classification the probability of ``y = 1``, in ``[0, 1]``).
"""

from __future__ import annotations

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
from tasks.monotone import checks
from tasks.monotone.data import KINDS, REAL, SYNTHETIC, draw, pool_size

__all__ = ["CATALOG", "RECIPE", "MonotoneRegression", "MonotoneSession", "score"]

#: The training recipe and network size every neural method uses (the official code's
#: AutoMPG notebook: three free ReLU layers of 16 units, a monotone stack of width 16
#: with three hidden layers, Adam at 1e-3; batch and epochs are ours, see the README).
RECIPE = {
    "epochs": 100,
    "batch_size": 32,
    "lr": 1e-3,
    "width": 16,
    "free_layers": 3,
    "mono_hidden": 3,
}
#: Probabilities are clipped to [EPS, 1 - EPS] for the log-loss only.
EPS = 1e-12


def _check(fields: dict[str, Any]) -> None:
    if fields["data"] in REAL and fields["n"] > pool_size(fields["data"]) - 50:
        raise ValueError(
            f"{fields}: {fields['data']} has {pool_size(fields['data']) - 50} training rows at most"
        )


#: Ids ``<data>-n<training rows>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "monotone-regression",
        "{data}-n{n}-s{seed}",
        example="syn-reg-n300-s0",
        data=Choice(KINDS, what="data set"),
        n=Int(label="training rows", minimum=10),
        seed=Int(),
    ),
    {
        "smoke": grid(data=("syn1d-exp", "syn-reg"), n=(64,), seed=(0,)),
        "standard": grid(data=("syn1d-ramp", "syn1d-exp", "syn1d-steps"), n=(200,), seed=(0,))
        + grid(data=("syn-reg",), n=(300, 1000), seed=(0,))
        + grid(data=("syn-clf",), n=(1000,), seed=(0,))
        + grid(data=("diabetes",), n=(280,), seed=(0,))
        + grid(data=("cancer",), n=(400,), seed=(0,)),
        "full": grid(data=("syn1d-ramp", "syn1d-exp", "syn1d-steps"), n=(200, 1000), seed=(0, 1, 2))
        + grid(data=("syn-reg", "syn-clf"), n=(300, 1000, 3000), seed=(0, 1, 2))
        + grid(data=("diabetes",), n=(280,), seed=(0, 1, 2, 3, 4))
        + grid(data=("cancer",), n=(400,), seed=(0, 1, 2, 3, 4)),
    },
    validate=_check,
)


def score(task_type: str, pred: np.ndarray, y: np.ndarray, base: float) -> dict[str, float]:
    """RMSE of ``pred`` against ``y`` and its ratio to the constant predictor ``base``.

    Classification adds accuracy (``pred >= 0.5``) and the log-loss (``pred`` clipped to
    ``[1e-12, 1 - 1e-12]``); its RMSE is the root Brier score of the probabilities.
    """
    rmse = float(np.sqrt(np.mean((pred - y) ** 2)))
    const = float(np.sqrt(np.mean((base - y) ** 2)))
    out = {"rmse": rmse, "nrmse": rmse / const if const > 0 else float("nan")}
    if task_type == "classification":
        p = np.clip(pred, EPS, 1 - EPS)
        out["accuracy"] = float(np.mean((pred >= 0.5) == (y > 0.5)))
        out["log_loss"] = float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return out


class MonotoneSession(Session):
    """Fit, then predict on a query batch the task draws after the fit."""

    def __init__(self, instance: Instance, seed: int) -> None:
        self.inst, self.seed = instance, int(seed)
        self.phase = 0
        self.out: dict[str, Any] = {"query_seed": self.seed}

    def state(self) -> dict[str, Any] | None:
        if self.phase == 0:
            return {"phase": "fit"}
        if self.phase == 1:
            q = _queries(self.inst, self.seed)
            return {"phase": "predict", "X": q.X}
        return None

    def apply(self, action: Any) -> None:
        if self.phase == 0:
            if not isinstance(action, dict) or not isinstance(action.get("monotone"), bool):
                raise InvalidSolution(
                    f"the fit round must answer {{'monotone': bool}} (monotone by construction or not), got {action!r:.200}"
                )
            self.out.update(monotone=bool(action["monotone"]))
        else:
            self.out.update(predictions=action)
        self.phase += 1

    def solution(self) -> dict[str, Any]:
        return dict(self.out)


def _queries(instance: Instance, seed: int) -> checks.Queries:
    d, p = instance.data, instance.private
    return checks.make_queries(
        d["X_train"], p["X_test"], p["X_extrap"], d["mono"], d["direction"], seed, int(p["query_key"])
    )


_TEMPLATE = '''\
"""{name}: a predictor for the ``monotone-regression`` task.

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
    tasks=["monotone-regression"],
    reference="",
    version="1",
    params={{"monotone": False}},
    deterministic=True,
)
class Predictor:
    """Least squares on the raw columns as a starting point (not monotone by construction)."""

    def __init__(self, instance, *, seed: int, budget: float, monotone: bool):
        self.data, self.monotone = instance.data, monotone

    def select(self, state):
        """Round "fit": fit and answer {{"monotone": bool}}; round "predict": predictions for state["X"]."""
        if state["phase"] == "fit":
            X, y = self.data["X_train"], self.data["y_train"]
            A = np.hstack([X, np.ones((len(X), 1))])
            self.w = np.linalg.lstsq(A, y, rcond=None)[0]
            return {{"monotone": self.monotone}}
        X = state["X"]
        pred = np.hstack([X, np.ones((len(X), 1))]) @ self.w
        if self.data["task_type"] == "classification":
            pred = np.clip(pred, 0.0, 1.0)
        return pred.astype(np.float64)
'''


@register_task
class MonotoneRegression(CatalogTask):
    """Regression and binary classification, monotone in declared columns, scored on the task's queries.

    A solution (built by :class:`MonotoneSession`) is
    ``{"monotone": bool, "predictions": float64 (m,), "query_seed": int}`` (no timings, so
    that a seed gives the same solution; the runner records the wall time);
    the query batch is redrawn from ``query_seed`` and the instance's private query key
    (:func:`tasks.monotone.checks.query_key`; version 1 used the digest, which is not the
    same on every CPU).
    """

    meta = TaskMeta(
        name="monotone-regression",
        version="2",
        family="monotone",
        area="constrained learning",
        paper=Paper(
            title="Advancing Constrained Monotonic Neural Networks: Achieving Universal Approximation Beyond Bounded Activations",
            authors=["Davide Sartor", "Alberto Sinigaglia", "Gian Antonio Susto"],
            arxiv="2505.02537",
            venue="ICML 2025",
            code_url="https://github.com/AMCO-UniPD/monotonic",
        ),
        description=(
            "Fit a predictor monotone in declared columns (synthetic targets with a non-monotone rest and "
            "interactions; diabetes; breast cancer), then answer the task's queries drawn after the fit: "
            "test and extrapolation RMSE, and the monotonicity-violation rate on random pairs and grids "
            "(zero required of a method monotone by construction)."
        ),
        metrics=[
            Metric(
                name="nrmse",
                direction="min",
                description="test RMSE / RMSE of the constant training-mean predictor (classification: of the probabilities)",
            ),
            Metric(
                name="rmse",
                direction="min",
                description="test RMSE in the target's units (classification: root Brier score)",
            ),
            Metric(
                name="extrap_nrmse",
                direction="min",
                description="RMSE on the extrapolation rows / that of the constant training-mean predictor",
            ),
            Metric(
                name="extrap_rmse",
                direction="min",
                description="RMSE on the extrapolation rows (monotone columns beyond the training range)",
            ),
            Metric(
                name="accuracy",
                direction="max",
                description="test accuracy of p >= 0.5 (classification only)",
            ),
            Metric(
                name="log_loss",
                direction="min",
                unit="nats",
                description="test log-loss, p clipped to [1e-12, 1 - 1e-12] (classification only)",
            ),
            Metric(
                name="extrap_accuracy",
                direction="max",
                description="accuracy on the extrapolation rows (classification only)",
            ),
            Metric(
                name="violation_rate",
                direction="min",
                description="fraction of monotonicity pairs and grid steps where the prediction moves against the declared direction by more than 1e-5 (1 + |f(a)| + |f(b)|)",
            ),
            Metric(
                name="pair_violation_rate",
                direction="min",
                description="violation rate over the random pairs (x, x + delta e_j) only",
            ),
            Metric(
                name="grid_violation_rate",
                direction="min",
                description="violation rate over the consecutive grid steps only",
            ),
            Metric(
                name="max_violation",
                direction="min",
                description="largest move against the declared direction, in output units",
            ),
            Metric(
                name="declared_monotone",
                direction="max",
                description="1 if the method declared itself monotone by construction (then violation_rate must be 0)",
            ),
        ],
        primary="nrmse",
        normalization=Normalization(
            kind="linear",
            zero=1.0,
            one=0.0,
            description="0 for the constant training-mean predictor, 1 for a perfect fit",
        ),
        gap_reference="bayes",
        interactive=True,
        budgets={"smoke": 20.0, "standard": 120.0, "full": 600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def scaffold(self, name: str, kind: str) -> str:
        """A predictor class with ``select`` for the two-round protocol (``bench new-method``)."""
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields as filterable parameters, plus the task type and the number of columns."""
        kind = fields["data"]
        task_type = "classification" if kind in ("syn-clf", "cancer") else "regression"
        source = "synthetic" if kind in SYNTHETIC else "bundled"
        params = {**fields, "task_type": task_type, "epochs": RECIPE["epochs"]}
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=params, tags=(source, task_type)
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: training rows, column roles and the recipe. Private: test and extrapolation rows."""
        dr = draw(fields["data"], fields["n"], fields["seed"])
        data = {
            "X_train": dr.X_train,
            "y_train": dr.y_train,
            "mono": dr.mono,
            "direction": dr.direction,
            "feature_names": dr.feature_names,
            "task_type": dr.task_type,
            "recipe": dict(RECIPE),
        }
        private = {
            "X_test": dr.X_test,
            "y_test": dr.y_test,
            "X_extrap": dr.X_extrap,
            "y_extrap": dr.y_extrap,
            "query_key": checks.query_key(fields["data"], fields["n"], fields["seed"]),
        }
        if dr.bayes_test is not None:
            private |= {"bayes_test": dr.bayes_test, "bayes_extrap": dr.bayes_extrap}
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The constant predictor (nrmse 1) and, on synthetic data, the Bayes predictor E[y | x] (trusted side)."""
        refs = {
            "constant": Reference(value=1.0, source="nrmse of the training mean, by definition")
        }
        if "bayes_test" in private:
            base = float(np.mean(data["y_train"]))
            t = data["task_type"]
            refs["bayes"] = Reference(
                value=score(t, private["bayes_test"], private["y_test"], base)["nrmse"],
                source="nrmse of the noiseless target E[y | x] on the test rows",
            )
            refs["bayes_extrap"] = Reference(
                value=score(t, private["bayes_extrap"], private["y_extrap"], base)["nrmse"],
                source="extrap_nrmse of the noiseless target E[y | x] on the extrapolation rows",
            )
        return refs

    def session(self, instance: Instance, seed: int) -> Session:
        return MonotoneSession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Redraw the query batch, check the predictions and monotonicity, and score.

        Raises
        ------
        InvalidSolution
            Unless ``solution["predictions"]`` is a finite float64 array with one value per
            query row (in ``[0, 1]`` for classification); or if the method declared itself
            monotone by construction and any pair or grid step breaks the declared direction
            (the message names the feature and the pair).
        """
        if (
            not isinstance(solution, dict)
            or "predictions" not in solution
            or "monotone" not in solution
        ):
            raise InvalidSolution(
                "the solution must come from the two-round protocol: {'monotone': bool, 'predictions': array, ...}"
            )
        q = _queries(instance, int(solution.get("query_seed", 0)))
        pred = as_float_array(
            solution["predictions"],
            (len(q.X),),
            what=f"predictions: a finite float64 array of {len(q.X)} values, one per query row",
        )
        d, p = instance.data, instance.private
        t = d["task_type"]
        if t == "classification":
            bad = np.flatnonzero((pred < 0) | (pred > 1))
            if bad.size:
                i = int(bad[0])
                raise InvalidSolution(
                    f"predictions[{i}] = {pred[i]:.6g} is not a probability in [0, 1] ({bad.size} values outside)"
                )
        f0 = q.unshuffle(pred)
        nt, ne = q.n_test, q.n_extrap
        base = float(np.mean(d["y_train"]))
        v = checks.violations(q, f0, list(d["feature_names"]))
        declared = bool(solution["monotone"])
        if declared and v.first:
            raise InvalidSolution(
                f"declared monotone by construction, but {v.pairs} of {v.pair_checks} pairs and {v.steps} of "
                f"{v.step_checks} grid steps break the declared direction; first: {v.first}"
            )
        test = score(t, f0[:nt], p["y_test"], base)
        ext = score(t, f0[nt : nt + ne], p["y_extrap"], base)
        out = dict(test)
        out |= {"extrap_rmse": ext["rmse"], "extrap_nrmse": ext["nrmse"]}
        if t == "classification":
            out["extrap_accuracy"] = ext["accuracy"]
        out |= {
            "violation_rate": (v.pairs + v.steps) / (v.pair_checks + v.step_checks),
            "pair_violation_rate": v.pairs / v.pair_checks,
            "grid_violation_rate": v.steps / v.step_checks,
            "max_violation": v.worst,
            "declared_monotone": float(declared),
        }
        return out
