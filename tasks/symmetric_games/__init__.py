"""symmetric-games: securing an equal share ``C / n`` in repeated n-player symmetric constant-sum games.

Ge, Wang, Li and Jin, "Securing Equal Share: A Principled Approach for
Learning Multiplayer Symmetric Games" (ICML 2025, arXiv:2406.04201). The task
owns an ``n``-player symmetric constant-sum game (``C = 1``, count form, see
:mod:`tasks.symmetric_games.games`) and an opponent suite
(:mod:`tasks.symmetric_games.opponents`): the ``n - 1`` other seats play one
common strategy that is fixed, a population mixture, switching, drifting, or
learning (Hedge, fictitious play). The method sits in the remaining seat and
plays ``T`` rounds against every scenario of the suite at once.

Protocol (:class:`EqualShareSession`), one call per round ``t = 0..T-1``:

- state: ``t``, ``horizon`` (``T``), ``n_scenarios`` (``K``) and, from round 1
  on, the feedback of round ``t - 1`` for every scenario: ``payoff``
  (``(K, A)``: the expected payoff of each own action against the opponents'
  strategy, full information as in the paper's Hedge analysis) and ``counts``
  (``(K, A)`` int64: how many opponents played each action, one draw from
  their strategy; what a behaviour-cloning learner needs). The game table is
  public (``instance.data``); the scenario kinds are not sent.
- action: ``(K, A)`` mixed strategies, each row on the simplex.

The opponents commit to ``y_t`` before the method's answer; learning opponents
update on expected payoffs, so the run is a deterministic function of the
method's strategies and the job's seed. :meth:`evaluate` replays the suite
from the solution (``x``: ``(K, T, A)`` float32, ``seed``) and scores the
average expected payoff minus ``C / n`` in every scenario; the primary metric
is the minimum over the suite (``min_gap``, 0 = equal share secured).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, IdForm, Int
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
from tasks.symmetric_games.games import (
    GAMES,
    TOTAL,
    compositions,
    constant_sum_residual,
    expected_payoffs,
    plurality,
    random_game,
)
from tasks.symmetric_games.opponents import CATEGORIES, Suite, category, replay, scenario_names

__all__ = [
    "CATALOG",
    "SymmetricGamesTask",
    "EqualShareSession",
    "game_table",
    "check_strategies",
    "score",
]

#: Rows of a strategy must sum to 1 within this (float32 storage included).
SIMPLEX_TOL = 1e-4


def _check(fields: dict[str, Any]) -> None:
    if not 3 <= fields["n"] <= 30:
        raise ValueError(f"{fields}: n players must be in 3..30")
    if not 2 <= fields["a"] <= 4:
        raise ValueError(f"{fields}: a actions must be in 2..4")
    if fields["game"] == "plurality" and fields["g"] != 0:
        raise ValueError(f"{fields}: the plurality game has no random draw (g must be 0)")


def _tier(
    T: int, worst: list[tuple[int, int]], rand: list[tuple[int, int, int]]
) -> list[dict[str, Any]]:
    out = [dict(game="plurality", n=n, a=a, g=0, T=T) for n, a in worst]
    out += [dict(game="random", n=n, a=a, g=g, T=T) for n, a, g in rand]
    return out


#: Ids ``<game>-n<players>-a<actions>-g<draw>-T<rounds>``. Worst cases (plurality, the
#: Majority Vote family) and random games; smoke in seconds, standard the published sweep.
CATALOG = Catalog(
    IdForm(
        "symmetric-games",
        "{game}-n{n}-a{a}-g{g}-T{T}",
        example="plurality-n3-a2-g0-T1000",
        game=Choice(GAMES, what="game"),
        n=Int(label="players", minimum=1),
        a=Int(label="actions", minimum=1),
        g=Int(label="draw"),
        T=Int(label="rounds", minimum=1),
    ),
    {
        "smoke": _tier(200, [(3, 2)], []),
        "standard": _tier(1000, [(3, 2), (6, 2)], [(4, 3, 0), (5, 3, 0)]),
        "full": _tier(
            10000,
            [(3, 2), (4, 3), (5, 2), (6, 2), (6, 4), (30, 2)],
            [(n, a, g) for n in (3, 4, 5, 6) for a in (2, 3, 4) for g in (0, 1)],
        ),
    },
    validate=_check,
)


def game_table(fields: dict[str, Any]) -> np.ndarray:
    """The payoff table ``U`` (``(A, M)``) of an instance's game."""
    if fields["game"] == "plurality":
        return plurality(fields["n"], fields["a"])
    return random_game(fields["n"], fields["a"], fields["g"])


def check_strategies(x: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``x`` as float64 rows on the simplex (renormalised), or :class:`InvalidSolution` naming the fault."""
    if not isinstance(x, np.ndarray):
        raise InvalidSolution(
            f"{what} must be a numpy array of shape {shape}, got {type(x).__name__}"
        )
    if x.dtype.kind != "f":
        raise InvalidSolution(f"{what} has dtype {x.dtype}; return floating-point probabilities")
    if x.shape != shape:
        raise InvalidSolution(f"{what} has shape {x.shape}; expected {shape} (scenarios x actions)")
    x = x.astype(np.float64)
    if not np.isfinite(x).all():
        bad = np.argwhere(~np.isfinite(x))[0]
        raise InvalidSolution(f"{what} is not finite at index {tuple(int(i) for i in bad)}")
    if (x < -1e-9).any():
        bad = np.argwhere(x < -1e-9)[0]
        raise InvalidSolution(
            f"{what} has a negative probability {x[tuple(bad)]:.3g} at index {tuple(int(i) for i in bad)}"
        )
    s = x.sum(-1)
    if (np.abs(s - 1.0) > SIMPLEX_TOL).any():
        bad = np.argwhere(np.abs(s - 1.0) > SIMPLEX_TOL)[0]
        raise InvalidSolution(
            f"{what}: row {tuple(int(i) for i in bad)} sums to {s[tuple(bad)]:.6g}, not 1"
        )
    x = np.maximum(x, 0.0)
    return x / x.sum(-1, keepdims=True)


class EqualShareSession(Session):
    """The trusted side of one job: the suite answers every round; see the module docstring."""

    def __init__(self, instance: Instance, seed: int) -> None:
        d = instance.data
        self.table = np.asarray(d["table"])
        self.n = int(d["n_players"])
        self.T = int(d["horizon"])
        self.seed = int(seed)
        self.suite = Suite(self.table, self.n, self.T, self.seed)
        self.K, self.A = self.suite.K, self.suite.A
        self.rng = np.random.default_rng([self.seed, 2])
        self.x = np.zeros((self.K, self.T, self.A), dtype=np.float32)
        self.t = 0
        self.y: np.ndarray | None = None
        self.last: tuple[np.ndarray, np.ndarray] | None = None

    def state(self) -> dict[str, Any] | None:
        if self.t >= self.T:
            return None
        self.y = self.suite.strategies()  # the opponents commit first
        st: dict[str, Any] = {"t": self.t, "horizon": self.T, "n_scenarios": self.K}
        if self.last is not None:
            st["payoff"], st["counts"] = self.last
        return st

    def apply(self, action: Any) -> None:
        x = check_strategies(action, (self.K, self.A), f"round {self.t}: the action")
        y = self.y
        r = expected_payoffs(self.table, self.suite.comps, y)
        counts = self.rng.multinomial(self.n - 1, y / y.sum(axis=1, keepdims=True)).astype(np.int64)
        self.last = (r, counts)
        self.x[:, self.t] = x
        self.suite.update(x, y)
        self.t += 1

    def solution(self) -> dict[str, Any]:
        return {"x": self.x[:, : self.t].copy(), "seed": self.seed}


def score(table: np.ndarray, n_players: int, seed: int, x: np.ndarray) -> dict[str, float]:
    """Every metric from the learner's strategies ``x`` (``(K, T, A)``) by replaying the suite."""
    pay = replay(table, n_players, seed, x).mean(axis=1)
    gaps = pay - TOTAL / n_players
    names = scenario_names(table.shape[0])
    out = {"min_gap": float(gaps.min()), "mean_gap": float(gaps.mean())}
    for c in CATEGORIES:
        out[f"gap_{c}"] = float(
            min(g for g, nm in zip(gaps, names, strict=True) if category(nm) == c)
        )
    out["worst_scenario"] = float(int(np.argmin(gaps)))
    return out


_TEMPLATE = '''\
"""{name}: a learner for the ``symmetric-games`` task.

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
    tasks=["symmetric-games"],
    reference="",
    version="1",
    params={{}},
    deterministic=True,
)
class Learner:
    """Uniform play as a starting point: the same mixed strategy in every scenario and round."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.A = int(instance.data["n_actions"])

    def select(self, state):
        """Return (n_scenarios, A) mixed strategies (see tasks/symmetric_games/README.md)."""
        return np.full((state["n_scenarios"], self.A), 1.0 / self.A)
'''


@register_task
class SymmetricGamesTask(CatalogTask):
    """Repeated n-player symmetric constant-sum games against an opponent suite, scored by the worst gap to C/n."""

    meta = TaskMeta(
        name="symmetric-games",
        version="1",
        family="symmetric_games",
        area="game theory",
        paper=Paper(
            title="Securing Equal Share: A Principled Approach for Learning Multiplayer Symmetric Games",
            authors=["Jiawei Ge", "Yuanhao Wang", "Wenzhe Li", "Chi Jin"],
            arxiv="2406.04201",
            venue="ICML 2025",
        ),
        description=(
            "One seat of a repeated n-player symmetric constant-sum game (C = 1; plurality/Majority Vote worst "
            "cases and random games) against a suite of identical opponents (fixed, population mixture, switching, "
            "drifting, Hedge and fictitious-play learners); scored by average payoff - C/n, minimum over the suite."
        ),
        metrics=[
            Metric(
                name="min_gap",
                direction="max",
                description="min over the suite of (average expected payoff - C/n); >= 0 secures equal share",
            ),
            Metric(
                name="mean_gap",
                direction="max",
                description="mean over the suite of (average expected payoff - C/n)",
            ),
            *[
                Metric(
                    name=f"gap_{c}",
                    direction="max",
                    description=f"average payoff - C/n against the {c.replace('_', '-')} opponents (min over that kind)",
                )
                for c in CATEGORIES
            ],
            Metric(
                name="worst_scenario",
                direction="min",
                description="index of the scenario attaining min_gap (informational)",
            ),
        ],
        primary="min_gap",
        normalization=Normalization(
            kind="linear",
            zero="zero_payoff",
            one="equal_share",
            description="0 for payoff 0 (gap -C/n), 1 for an equal share (gap 0)",
        ),
        gap_reference=None,
        interactive=True,
        budgets={"smoke": 30.0, "standard": 300.0, "full": 1800.0},
    )
    template = ""
    catalog = CATALOG

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The fields plus the suite size as filterable parameters; tags: worst-case or random."""
        params = {
            **fields,
            "n_scenarios": len(scenario_names(fields["a"])),
            "equal_share": TOTAL / fields["n"],
        }
        tags = ("worst-case",) if fields["game"] == "plurality" else ("random-game",)
        return InstanceSpec(id=CATALOG.form.format(**fields), params=params, tags=tags)

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: the game (table, compositions, sizes, total) and the horizon. Nothing private: the suite is seeded per job."""
        table = game_table(fields)
        data = {
            "table": table,
            "compositions": compositions(fields["n"] - 1, fields["a"]),
            "n_players": fields["n"],
            "n_actions": fields["a"],
            "total": TOTAL,
            "horizon": fields["T"],
        }
        return data, {}

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        """Equal share (gap 0) and payoff 0 (gap -C/n); checks that the game is constant-sum."""
        res = constant_sum_residual(data["table"], fields["n"])
        if res > 1e-9:
            raise ValueError(f"{fields}: the game is not constant-sum (residual {res:.3g})")
        return {
            "equal_share": Reference(
                value=0.0,
                source="analytic: playing the opponents' own strategy pays exactly C/n (symmetry)",
            ),
            "zero_payoff": Reference(
                value=-TOTAL / fields["n"], source="analytic: payoff 0 in every round"
            ),
        }

    def session(self, instance: Instance, seed: int) -> EqualShareSession:
        return EqualShareSession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Replay the suite from the solution's strategies and seed, and score it."""
        if not isinstance(solution, dict) or set(solution) != {"x", "seed"}:
            got = sorted(solution) if isinstance(solution, dict) else type(solution).__name__
            raise InvalidSolution(f"the solution must be a dict with 'x' and 'seed', got {got}")
        d = instance.data
        A, T = int(d["n_actions"]), int(d["horizon"])
        K = len(scenario_names(A))
        seed = solution["seed"]
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise InvalidSolution(f"seed must be an int, got {type(seed).__name__}")
        x = check_strategies(solution["x"], (K, T, A), "x")
        return score(np.asarray(d["table"]), int(d["n_players"]), int(seed), x)

    def scaffold(self, name: str, kind: str) -> str:
        """A learner class with ``select`` (``bench new-method``)."""
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)
