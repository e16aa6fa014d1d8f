"""private-classification: DP-ERM for linear classification with a large-margin subset (Wang, Zhu and Wang, ICML 2025).

The data (:func:`make_data`): ``n`` points in the unit ball of ``R^d``; a planted
unit vector ``w*`` separates all of them with margin at least ``gamma``
(``|<w*, x>| >= gamma``), and then the labels of ``n_out`` random points are
flipped (the outliers ``S_out``). The paper's bound on the empirical 0-1 risk is
``O~(1 / (gamma^2 epsilon n) + |S_out| / (gamma n))``.

Protocol (rounds of :class:`ClassificationSession`): each round's state is
``{"phase": "train", "dataset": "instance" | "trial", "epsilon", "delta", "trial"}``;
with ``"trial"`` it also carries ``X`` and ``y`` (an audit's neighbouring data
set), otherwise the method trains on ``instance.data["X"]``, ``["y"]``. The
method answers ``{"w": float64 (d,), "epsilon": float, "delta": float}``: a
homogeneous linear classifier ``sign(<w, x>)`` and the (epsilon, delta) it
declares for this training run (``epsilon = inf`` for a non-private reference).

``erm-*`` instances have one round; the task computes the empirical 0-1 risk on
the training set (what the theorem bounds), the test error on fresh points with
clean labels, and the declared privacy. ``audit-*`` instances have ``reps``
rounds on two neighbouring data sets that differ in one canary's label
(replace-one neighbours), chosen by a secret bit per round; the task scores
``<w, x_canary>`` and reports the Clopper-Pearson lower bound on epsilon of
:mod:`tasks.privacy.audit`. See ``tasks/privacy/README.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, Float, IdForm, Int, grid
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
from tasks.privacy.audit import (
    audit_evaluate,
    check_declaration,
    declared_privacy,
    privacy_metric_specs,
)

__all__ = [
    "CATALOG",
    "PrivateClassification",
    "ClassificationSession",
    "make_data",
    "zero_one",
    "check_declaration",
]

#: Test points drawn per instance (clean labels).
N_TEST = 5000


def _check(f: dict[str, Any]) -> None:
    if f["kind"] == "erm" and f["reps"] != 1:
        raise ValueError(f"{f}: an erm instance has one round (r1)")
    if f["kind"] == "audit" and f["reps"] < 20:
        raise ValueError(f"{f}: an audit needs at least 20 rounds")
    if not 0 < f["gamma"] < 0.9:
        raise ValueError(f"{f}: the margin gamma must be in (0, 0.9)")
    if f["out"] >= f["n"] // 2:
        raise ValueError(f"{f}: fewer outliers than half the points")


def _ids(kind, gamma, n, d, out, eps, reps=(1,), seed=(0,)):
    return grid(kind=(kind,), gamma=gamma, n=n, d=d, out=out, eps=eps, reps=reps, seed=seed)


#: Ids ``<kind>-g<gamma>-n<points>-d<dim>-o<outliers>-e<epsilon>-r<rounds>-s<seed>``.
CATALOG = Catalog(
    IdForm(
        "private-classification",
        "{kind}-g{gamma}-n{n}-d{d}-o{out}-e{eps}-r{reps}-s{seed}",
        example="erm-g0.05-n3000-d20-o10-e1-r1-s0",
        kind=Choice(("erm", "audit"), what="instance kind"),
        gamma=Float(label="margin"),
        n=Int(label="points", minimum=1),
        d=Int(label="dimension", minimum=1),
        out=Int(label="outliers"),
        eps=Float(label="epsilon"),
        reps=Int(label="rounds", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": _ids("erm", (0.1,), (500,), (10,), (5,), (1.0,))
        + _ids("audit", (0.1,), (32,), (5,), (0,), (1.0,), reps=(20,)),
        # the slope in n (gamma 0.05, eps 1), the gain at small margins (n 10^4), the budget sweep
        "standard": _ids("erm", (0.05,), (1000, 2000, 5000, 10000), (20,), (10,), (1.0,))
        + _ids("erm", (0.02, 0.2), (10000,), (20,), (10,), (1.0,))
        + _ids("erm", (0.05,), (10000,), (20,), (10,), (0.1, 8.0))
        + _ids("audit", (0.1,), (64,), (5,), (0,), (1.0,), reps=(100,)),
        "full": _ids(
            "erm",
            (0.01, 0.02, 0.05, 0.1, 0.2),
            (1000, 3000, 10000, 30000, 100000),
            (20,),
            (10,),
            (0.1, 1.0, 8.0),
        )
        + _ids("erm", (0.05,), (10000,), (10, 50, 200), (0, 10, 100), (1.0,))
        + _ids("audit", (0.1,), (64,), (5,), (0,), (0.1, 1.0), reps=(1000,)),
    },
    validate=_check,
)


def _points(
    rng: np.random.Generator, w_star: np.ndarray, m: int, gamma: float
) -> tuple[np.ndarray, np.ndarray]:
    """``m`` points of norm <= 1 with ``|<w*, x>| >= gamma`` and labels ``sign(<w*, x>)``."""
    d = len(w_star)
    y = rng.choice(np.array([-1.0, 1.0]), size=m)
    # distance to the separating hyperplane: gamma plus an exponential tail, so that the margin is tight
    t = np.minimum(gamma + rng.exponential(0.1, size=m), 0.95)
    z = rng.standard_normal((m, d))
    z -= np.outer(z @ w_star, w_star)
    z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    r = (np.sqrt(1.0 - t**2) * rng.uniform(0.0, 1.0, size=m))[:, None]
    X = (y * t)[:, None] * w_star[None, :] + r * z
    return X, y


def make_data(gamma: float, n: int, d: int, out: int, seed: int) -> dict[str, np.ndarray]:
    """Training set with ``out`` flipped labels, clean test set, planted ``w*`` and the outlier mask.

    The stream is ``numpy.random.default_rng([seed, n, d, out, round(gamma * 1e6)])``.
    """
    rng = np.random.default_rng([seed, n, d, out, int(round(gamma * 1e6))])
    w_star = rng.standard_normal(d)
    w_star /= np.linalg.norm(w_star)
    X, y = _points(rng, w_star, n, gamma)
    outliers = np.zeros(n, dtype=bool)
    outliers[rng.choice(n, size=out, replace=False)] = True
    y = np.where(outliers, -y, y)
    Xt, yt = _points(rng, w_star, N_TEST, gamma)
    return {"X": X, "y": y, "X_test": Xt, "y_test": yt, "w_star": w_star, "outliers": outliers}


def zero_one(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> float:
    """Fraction of points with ``y <w, x> <= 0`` (a zero score counts as an error)."""
    return float(np.mean(y * (X @ w) <= 0))


class ClassificationSession(Session):
    """One training round (``erm``) or ``reps`` rounds on secret-bit neighbours (``audit``)."""

    def __init__(self, instance: Instance, seed: int) -> None:
        self.inst, self.seed = instance, int(seed)
        p = instance.params
        self.reps = int(p["reps"])
        self.audit = p["kind"] == "audit"
        self.eps, self.delta = float(p["eps"]), float(p["delta"])
        self.round = 0
        self.answers: list[Any] = []
        if self.audit:
            rng = np.random.default_rng([self.seed, 1234, int(instance.digest[:12], 16)])
            self.bits = rng.integers(0, 2, size=self.reps)

    def dataset(self, bit: int) -> tuple[np.ndarray, np.ndarray]:
        """The audit's neighbour ``D_bit``: the base points with the canary labelled ``+1`` (bit 1) or ``-1``."""
        d = self.inst.data
        X = np.array(d["X"], dtype=np.float64)
        y = np.array(d["y"], dtype=np.float64)
        X[-1] = self.inst.private["canary"]
        y[-1] = 1.0 if bit else -1.0
        return X, y

    def state(self) -> dict[str, Any] | None:
        if self.round >= self.reps:
            return None
        st: dict[str, Any] = {
            "phase": "train",
            "epsilon": self.eps,
            "delta": self.delta,
            "trial": self.round,
        }
        if self.audit:
            X, y = self.dataset(int(self.bits[self.round]))
            st.update(dataset="trial", X=X, y=y)
        else:
            st["dataset"] = "instance"
        return st

    def apply(self, action: Any) -> None:
        check_declaration(action, self.eps, self.delta)
        self.answers.append(action)
        self.round += 1

    def solution(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answers": list(self.answers)}
        if self.audit:
            out["bits"] = self.bits.copy()
        return out


_TEMPLATE = '''\
"""{name}: a classifier for the ``private-classification`` task (non-private: declares epsilon = inf).

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
    tasks=["private-classification"],
    reference="",
    version="1",
    params={{"mechanism": "none", "accountant": "none"}},
)
class Learner:
    """The least-squares direction, not private."""

    def __init__(self, instance, *, seed: int, budget: float, mechanism: str, accountant: str):
        self.data = instance.data

    def select(self, state):
        X, y = (state["X"], state["y"]) if state["dataset"] == "trial" else (self.data["X"], self.data["y"])
        w = np.linalg.lstsq(X, y, rcond=None)[0]
        return {{"w": w.astype(np.float64), "epsilon": float("inf"), "delta": 0.0}}
'''


@register_task
class PrivateClassification(CatalogTask):
    """Private linear classification; a solution is ``{"answers": [round answers], "bits": (audit only)}``."""

    meta = TaskMeta(
        name="private-classification",
        version="2",  # 2: audit_max_detectable from the audit's held-out counts (tasks/privacy/README.md, versions)
        family="privacy",
        area="privacy",
        paper=Paper(
            title="Adapting to Linear Separable Subsets with Large-Margin in Differentially Private Learning",
            authors=["Erchi Wang", "Yuqing Zhu", "Yu-Xiang Wang"],
            arxiv="2505.24737",
            venue="ICML 2025",
        ),
        description=(
            "DP-ERM for homogeneous linear classifiers on points in the unit ball with a margin-gamma separable "
            "subset and flipped-label outliers, at (epsilon, 1/n^2); the task computes the empirical 0-1 risk, the "
            "clean test error and the declared privacy, and on audit instances a Clopper-Pearson lower bound on "
            "epsilon from neighbouring data sets chosen by a secret bit."
        ),
        metrics=[
            Metric(
                name="train_risk",
                direction="min",
                description="empirical 0-1 risk on the training set (the theorem's quantity)",
            ),
            Metric(
                name="test_error",
                direction="min",
                description="0-1 error on 5,000 fresh points with clean labels",
            ),
            Metric(
                name="excess_risk",
                direction="min",
                description="train_risk minus that of the planted w* (= outliers / n)",
            ),
        ]
        + privacy_metric_specs("replace-one canary"),
        primary="train_risk",
        normalization=Normalization(
            kind="linear",
            zero=0.5,
            one="planted",
            description="0 at chance (risk 1/2), 1 at the planted w*'s risk",
        ),
        gap_reference="planted",
        interactive=True,
        budgets={"smoke": 30.0, "standard": 300.0, "full": 1800.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def scaffold(self, name: str, kind: str) -> str:
        """A learner class with ``select`` (``bench new-method``)."""
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields plus ``delta = 1 / n^2`` (the issue's choice) as filterable parameters."""
        params = {**fields, "delta": 1.0 / fields["n"] ** 2}
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=params, tags=(fields["kind"], "generated")
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: ``X``, ``y``, ``epsilon``, ``delta``. Private: test set, ``w*``, outlier mask, canary."""
        f = fields
        dd = make_data(f["gamma"], f["n"], f["d"], f["out"], f["seed"])
        data = {"X": dd["X"], "y": dd["y"], "epsilon": float(f["eps"]), "delta": 1.0 / f["n"] ** 2}
        private = {k: dd[k] for k in ("X_test", "y_test", "w_star", "outliers")}
        if f["kind"] == "audit":
            # the canary: a unit vector orthogonal to w*, so that its label is free to move w along it
            rng = np.random.default_rng([f["seed"], 77])
            c = rng.standard_normal(f["d"])
            c -= (c @ dd["w_star"]) * dd["w_star"]
            private["canary"] = c / np.linalg.norm(c)
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """The planted ``w*``'s training risk (``outliers / n``) and chance."""
        return {
            "planted": Reference(
                value=zero_one(private["w_star"], data["X"], data["y"]),
                source="0-1 risk of the planted w* (the flipped labels)",
            ),
            "chance": Reference(value=0.5, source="risk of a random sign"),
        }

    def session(self, instance: Instance, seed: int) -> Session:
        return ClassificationSession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute the risks from the returned ``w`` (erm) or the audit bound from every round's ``w``.

        Raises
        ------
        InvalidSolution
            For a missing round, a ``w`` that is not a finite float64 ``(d,)`` array,
            or a declared privacy above the instance's budget.
        """
        p, d = instance.params, instance.params["d"]
        if not isinstance(solution, dict) or not isinstance(solution.get("answers"), list):
            raise InvalidSolution("the solution must come from the session: {'answers': [...]} ")
        answers = solution["answers"]
        if len(answers) != p["reps"]:
            raise InvalidSolution(f"expected {p['reps']} round answers, got {len(answers)}")
        decl = [check_declaration(a, float(p["eps"]), float(p["delta"])) for a in answers]
        ws = [
            as_float_array(
                a.get("w"), (d,), what=f"round {i}: w, a finite float64 array of shape ({d},)"
            )
            for i, a in enumerate(answers)
        ]
        declared = declared_privacy(decl)
        if p["kind"] == "audit":
            stats = np.array([w @ instance.private["canary"] for w in ws])
            return {**declared, **audit_evaluate(stats, solution.get("bits"), int(p["reps"]), float(p["delta"]), declared["declared_epsilon"])}
        w = ws[0]
        X, y = instance.data["X"], instance.data["y"]
        risk = zero_one(w, X, y)
        return {
            "train_risk": risk,
            "test_error": zero_one(w, instance.private["X_test"], instance.private["y_test"]),
            "excess_risk": risk - instance.references["planted"].value,
            **declared,
        }
