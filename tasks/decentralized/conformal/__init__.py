"""conformal-decentralized: split conformal prediction over a graph of devices (DCP, Wen, Xing and Simeone, ICML 2025).

``K`` devices on a graph each hold ``n`` calibration scores of one shared
pre-trained classifier (:mod:`.scores`: LAC scores ``s = 1 - p_y`` on
scikit-learn's digits or breast-cancer sets, a ``make_classification`` draw,
or Dirichlet softmax draws; IID or label-sorted non-IID splits). Each device
must end with a threshold ``q_k``; its prediction set for a test input is
``{y : s(x, y) <= q_k}``. The target is coverage ``>= 1 - alpha`` with sets as
small as those of centralised split CP on the pooled scores.

What a node may read
    ``data["scores"]`` is ``(K, n)``: node ``k``'s program reads row ``k``
    only (the simulator's model is "one numpy row per node"; see
    ``common/decentralized/program.py``). ``calib_sizes`` (every ``n_k``),
    ``alpha``, ``split``, ``n_classes`` and the graph (neighbour table,
    Metropolis weights, spectral gap) are public to every node: the paper's
    corrections use ``N``, ``K``, ``max_k n_k`` and the spectral gap.
    Nothing else of another node reaches a node except through ``mix`` and
    ``exchange`` rounds, which the trusted simulator counts (rounds, and
    scalars sent per node). There are no local oracles.

What the task keeps
    the test scores ``(n_test, C)`` and labels; it computes, from the answer
    ``x`` (``(K, 1)``, one threshold per device), every device's coverage and
    mean set size on the whole test set (mean and min over devices), the gap
    to the coverage of centralised split CP (its reference, with the
    ``ceil((N+1)(1-alpha))``-th smallest pooled score), and, from the
    thresholds a method ``report``-s along the way, the rounds until the
    mean coverage is within 0.01 of the centralised one.

See ``tasks/decentralized/conformal/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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
    Session,
    TaskMeta,
)
from tasks.decentralized.conformal.scores import (
    DATASETS,
    SPLITS,
    TestScores,
    coverage_and_size,
    make_scores,
    split_cp_quantile,
)
from tasks.decentralized.gossip import (
    GossipSession,
    Simulator,
    check_rows,
    make_graph,
    metropolis,
    node_program_source,
    public_graph_data,
)

__all__ = ["CATALOG", "ConformalDecentralized", "ConformalSession", "COVERAGE_TOL", "MAX_ROUNDS", "coverage_slack", "settling_round"]

#: Communication rounds a job may use (Q-DCP's default is 1500 ADMM rounds plus a flood).
MAX_ROUNDS = 2000
#: Actions per round allowed.
STEPS_PER_ROUND = 8
#: "Within 0.01 of centralised coverage" (the issue's rounds-to-coverage target).
COVERAGE_TOL = 0.01


def _check(fields: dict[str, Any]) -> None:
    make_graph(fields["graph"], fields["k"], fields["seed"])  # raises for a torus of non-square K and the like
    if not 0.0 < fields["alpha"] < 1.0:
        raise ValueError(f"{fields}: alpha must lie in (0, 1)")


_STANDARD = grid(
    data=("digits", "synth", "dirichlet"), split=SPLITS, graph=("ring", "torus", "er", "star", "complete"),
    k=(16,), alpha=(0.1, 0.05), seed=(0,),
) + grid(data=("digits", "dirichlet"), split=("noniid",), graph=("ring", "chords", "er"), k=(36,), alpha=(0.1,), seed=(0,))

CATALOG = Catalog(
    IdForm(
        "conformal-decentralized",
        "{data}-{split}-{graph}-k{k}-a{alpha}-s{seed}",
        example="digits-noniid-ring-k10-a0.1-s0",
        data=Choice(DATASETS, what="data set"),
        split=Choice(SPLITS, what="split"),
        graph=Choice(("ring", "chords", "torus", "er", "star", "complete", "cliques"), what="graph"),
        k=Int(label="devices", minimum=3),
        alpha=Float(label="miscoverage"),
        seed=Int(),
    ),
    {
        "smoke": grid(data=("digits",), split=("noniid",), graph=("ring",), k=(10,), alpha=(0.1,), seed=(0,))
        + grid(data=("dirichlet",), split=("iid",), graph=("torus",), k=(16,), alpha=(0.05,), seed=(0,)),
        "standard": _STANDARD,
        "full": grid(
            data=DATASETS, split=SPLITS, graph=("ring", "chords", "torus", "er", "star", "complete", "cliques"),
            k=(16, 36), alpha=(0.1, 0.05), seed=(0, 1, 2, 3, 4),
        ),
    },
    validate=_check,
)


def coverage_slack(alpha: float, n_test: int, n_cal: int) -> float:
    """Two standard errors of the test coverage of an exact-level threshold: ``2 sqrt(a(1-a)(1/n_test + 1/N))``.

    Split CP's coverage, given its calibration draw, is Beta-distributed with
    variance about ``a(1-a)/N``; the finite test set adds ``a(1-a)/n_test``.
    """
    return 2.0 * math.sqrt(alpha * (1.0 - alpha) * (1.0 / n_test + 1.0 / n_cal))


# ----------------------------------------------------------------------------- the protocol


class ConformalSession(GossipSession):
    """No oracles; a ``report`` of thresholds (``(K, 1)``) is scored as mean coverage and set size."""

    oracles = ()

    def __init__(self, sim: Simulator, test: np.ndarray, labels: np.ndarray, max_rounds: int) -> None:
        super().__init__(sim, max_rounds=max_rounds, max_steps=max_rounds * STEPS_PER_ROUND, answer_width=1)
        self.test = TestScores(test, labels)

    def score_report(self, report: np.ndarray) -> dict[str, float]:
        cov, size = self.test.coverage_and_size(report[:, 0])
        return {"coverage": float(cov.mean()), "coverage_min": float(cov.min()), "set_size": float(size.mean())}


_TEMPLATE = '''\
    """Local split CP: each device thresholds its own scores, no communication (replace)."""

    def program(self):
        scores = np.sort(np.asarray(self.data["scores"], dtype=np.float64), axis=1)  # node k: row k only
        n = scores.shape[1]
        rank = int(np.ceil((n + 1) * (1 - float(self.data["alpha"]))))
        q = scores[:, rank - 1] if rank <= n else np.ones(self.n)
        return q[:, None]
        yield  # a generator with no rounds
'''


@register_task
class ConformalDecentralized(CatalogTask):
    """Coverage and set size of per-device thresholds, with the rounds and scalars the simulator counted.

    The solution is what :class:`ConformalSession` builds: the thresholds
    ``x`` (``(K, 1)``), the counters and the trace of reports.
    """

    meta = TaskMeta(
        name="conformal-decentralized",
        version="1",
        family="decentralized",
        area="uncertainty quantification",
        paper=Paper(
            title="Distributed Conformal Prediction via Message Passing",
            authors=["Haifeng Wen", "Hong Xing", "Osvaldo Simeone"],
            arxiv="2501.14544",
            venue="ICML 2025",
            code_url="https://github.com/HaifengWen/Distributed-Conformal-Prediction",
        ),
        description=(
            "Split conformal prediction over a graph of K devices, each with its own calibration scores (LAC, "
            "IID or label-sorted non-IID); per-device thresholds scored on a held-out test set: coverage (mean, "
            "min), set size, and the rounds and scalars counted by the trusted gossip simulator."
        ),
        metrics=[
            Metric(name="valid_size", direction="min", unit="labels", description=(
                "mean set size over devices, or the full label set's size when the mean coverage is below 1 - alpha "
                "by more than two standard errors (coverage_slack)")),
            Metric(name="set_size", direction="min", unit="labels", description="mean over devices of the mean test set size"),
            Metric(name="size_ratio", direction="min", description="set_size / the set size of centralised split CP"),
            Metric(name="coverage_mean", direction="max", description="mean over devices of the test coverage"),
            Metric(name="coverage_min", direction="max", description="lowest test coverage of a device"),
            Metric(name="coverage_excess", direction="max", description="coverage_mean - (1 - alpha)"),
            Metric(name="coverage_min_excess", direction="max", description="coverage_min - (1 - alpha)"),
            Metric(name="coverage_gap", direction="min", description="|coverage_mean - centralised coverage|"),
            Metric(name="valid", direction="max", description="1 if coverage_mean >= 1 - alpha - coverage_slack"),
            Metric(name="threshold_spread", direction="min", description="max_k q_k - min_k q_k (disagreement between devices)"),
            Metric(name="threshold_gap", direction="min", description="mean_k |q_k - q_central| (thresholds clipped to [0, 1])"),
            Metric(name="rounds", direction="min", unit="rounds", description="communication rounds used in all"),
            Metric(name="scalars", direction="min", unit="scalars", description="scalars each node sent per neighbour, mean over nodes"),
            Metric(name="scalars_max", direction="min", unit="scalars", description="scalars sent by the busiest node"),
            Metric(name="rounds_to_cov", direction="min", unit="rounds", description=(
                "rounds from which every later report and the answer have mean coverage within 0.01 of the centralised one "
                "(the round budget if the answer is not)")),
        ],
        primary="valid_size",
        normalization=Normalization(kind="linear", zero="full_set", one="centralized_size",
                                    description="0 at the full label set, 1 at centralised split CP's set size"),
        gap_reference="centralized_size",
        interactive=True,
        budgets={"smoke": 20.0, "standard": 60.0, "full": 300.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        return InstanceSpec(
            id=CATALOG.form.format(**fields), params=dict(fields),
            tags=("generated", fields["data"], fields["split"], fields["graph"]),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: the graph as each node knows it, ``scores`` (row ``k``: node ``k``'s), ``calib_sizes``,
        ``alpha``, ``split``, ``n_classes``, ``max_rounds``; private: the test scores and labels."""
        g = make_graph(fields["graph"], fields["k"], fields["seed"])
        W = metropolis(g)
        sc = make_scores(fields["data"], fields["split"], fields["k"], fields["seed"])
        data = {
            **public_graph_data(g, W),
            "scores": sc.calib,
            "calib_sizes": np.full(fields["k"], sc.calib.shape[1], dtype=np.int64),
            "alpha": float(fields["alpha"]),
            "split": fields["split"],
            "n_classes": sc.n_classes,
            "max_rounds": MAX_ROUNDS,
        }
        return data, {"test": sc.test, "test_labels": sc.test_labels, "calib_labels": sc.calib_labels}

    def reference(self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]) -> dict[str, Reference]:
        alpha = float(fields["alpha"])
        q = split_cp_quantile(data["scores"], alpha)
        q_set = min(q, 1.0)  # LAC scores are <= 1: an infinite threshold gives the same sets as 1
        cov, size = coverage_and_size(private["test"], private["test_labels"], np.array([q_set]))
        src = "centralised split CP on the pooled calibration scores: the ceil((N+1)(1-alpha))-th smallest (cross-checked with crepes in the tests)"
        return {
            "centralized_q": Reference(value=q_set, source=src),
            "centralized_coverage": Reference(value=float(cov[0]), source=src + ", applied to the task's test set"),
            "centralized_size": Reference(value=float(size[0]), source=src + ", applied to the task's test set"),
            "full_set": Reference(value=float(private["test"].shape[1]), source="the number of classes (every label in the set)"),
            "budget": Reference(value=float(MAX_ROUNDS), source="the instance's round budget"),
        }

    def session(self, instance: Instance, seed: int) -> Session:
        fields = CATALOG.form.parse(instance.id)
        g = make_graph(fields["graph"], fields["k"], fields["seed"])
        return ConformalSession(Simulator(g, metropolis(g)), instance.private["test"], instance.private["test_labels"], MAX_ROUNDS)

    def scaffold(self, name: str, kind: str) -> str:
        return node_program_source(self.meta.name, name, kind, self.template)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute coverage and set size from the thresholds; read rounds-to-coverage from the trace.

        Raises
        ------
        InvalidSolution
            If the solution is not the session's dict (fields ``x``, ``rounds``,
            ``scalars``, ``trace``), or ``x`` is not a finite ``(K, 1)`` array.
        """
        fields = CATALOG.form.parse(instance.id)
        k, alpha = fields["k"], float(fields["alpha"])
        if not isinstance(solution, dict) or not {"x", "rounds", "scalars", "trace"} <= set(solution):
            raise InvalidSolution("the solution must be the session's dict with fields 'x', 'rounds', 'scalars' and 'trace'")
        q = check_rows(solution["x"], k, "field 'x'", 1)[:, 0]
        scalars = check_rows(solution["scalars"], k, "field 'scalars'", 1)[:, 0]
        test, labels = instance.private["test"], instance.private["test_labels"]
        cov, size = coverage_and_size(test, labels, q)
        refs = instance.references
        c_cov, c_size, c_q = refs["centralized_coverage"].value, refs["centralized_size"].value, refs["centralized_q"].value
        n_cal = int(np.asarray(instance.data["calib_sizes"]).sum())
        slack = coverage_slack(alpha, test.shape[0], n_cal)
        valid = float(cov.mean() >= 1.0 - alpha - slack)
        out = {
            "set_size": float(size.mean()),
            "size_ratio": float(size.mean() / c_size) if c_size > 0 else math.nan,
            "coverage_mean": float(cov.mean()),
            "coverage_min": float(cov.min()),
            "coverage_excess": float(cov.mean() - (1.0 - alpha)),
            "coverage_min_excess": float(cov.min() - (1.0 - alpha)),
            "coverage_gap": float(abs(cov.mean() - c_cov)),
            "valid": valid,
            "valid_size": float(size.mean()) if valid else float(test.shape[1]),
            "threshold_spread": float(q.max() - q.min()),
            "threshold_gap": float(np.mean(np.abs(np.clip(q, 0.0, 1.0) - c_q))),
            "rounds": float(solution["rounds"]),
            "scalars": float(scalars.mean()),
            "scalars_max": float(scalars.max()),
        }
        trace = solution["trace"] or {}
        covs = np.asarray(trace.get("coverage", []), dtype=np.float64)
        rounds = np.asarray(trace.get("rounds", []), dtype=np.float64)
        out["rounds_to_cov"] = settling_round(covs, rounds, c_cov, out["coverage_gap"] <= COVERAGE_TOL, out["rounds"])
        return out


def settling_round(covs: np.ndarray, rounds: np.ndarray, target: float, answer_within: bool, answer_rounds: float) -> float:
    """Rounds from which every later report, and the answer, has mean coverage within ``COVERAGE_TOL`` of ``target``.

    A trajectory that crosses the target on its way (ADMM's does) is not
    counted at the crossing. :data:`MAX_ROUNDS` (the budget) if the answer itself is not within.
    """
    if not answer_within:
        return float(MAX_ROUNDS)
    outside = np.flatnonzero(np.abs(covs - target) > COVERAGE_TOL)
    if outside.size == 0:
        return float(rounds[0]) if rounds.size else float(answer_rounds)
    later = np.flatnonzero(np.arange(rounds.size) > outside[-1])
    return float(rounds[later[0]]) if later.size else float(answer_rounds)
