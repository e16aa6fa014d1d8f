"""bench.task.RoundSession: the helpers batched oracle sessions share."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bench.task import InvalidSolution, RoundSession


class _Toy(RoundSession):
    """One float64 query vector per round, one budget unit per entry; the gap is |point|."""

    def __init__(self, budget: int = 5, max_rounds: int | None = 3) -> None:
        super().__init__(max_rounds)
        self.budget, self.used = budget, 0

    def round_state(self) -> dict[str, Any]:
        return {"round": self.round, "used": self.used, "left": self.budget - self.used}

    def apply(self, action: Any) -> None:
        action = self._require_dict(action, " ('x', 'point' or 'done')")
        if "done" in action:
            self.answer = self._float_field(action["done"], "done", (2,))
            return
        self._check_keys(action, ("x", "point"), "a toy action")
        self._check_round_limit()
        x = action["x"]
        n = int(x.size) if isinstance(x, np.ndarray) else 0
        x = self._float_field(x, "x", (n,))
        self._check_budget(n, self.budget - self.used, "queries", "units")
        point = self._float_field(action["point"], "point", (2,))
        self._record(self.used, float(np.abs(point).sum()))
        self.used += n
        self.round += 1

    def solution(self) -> dict[str, Any]:
        return {"x": self.answer, **self._trace()}


def _act(n: int = 1, point: float = 0.0) -> dict[str, Any]:
    return {"x": np.zeros(n), "point": np.full(2, point)}


def test_rounds_trace_and_done():
    s = _Toy()
    assert s.state() == {"round": 0, "used": 0, "left": 5}
    s.apply(_act(2, 1.0))
    s.apply(_act(1, 0.5))
    assert s.state() == {"round": 2, "used": 3, "left": 2}
    s.apply({"done": np.ones(2)})
    assert s.state() is None
    sol = s.solution()
    np.testing.assert_array_equal(sol["x"], np.ones(2))
    assert sol["trace_used"].dtype == np.int64 and sol["trace_used"].tolist() == [0, 2]
    assert sol["trace_gap"].dtype == np.float64 and sol["trace_gap"].tolist() == [2.0, 1.0]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ([1], "round 0: the action must be a dict ('x', 'point' or 'done'), got list"),
        ({"x": np.zeros(1)}, "round 0: a toy action has exactly the keys 'x', 'point'; got ['x']"),
        ({**_act(), "y": 1}, "round 0: a toy action has exactly the keys 'x', 'point'; got ['point', 'x', 'y']"),
        (_act(6), "round 0: 6 queries but only 5 units are left"),
        ({"x": [0.0], "point": np.zeros(2)}, "round 0: field 'x' must be a float64 numpy array of shape (0,), got list"),
        ({"x": np.zeros(1, np.float32), "point": np.zeros(2)}, "round 0: field 'x': the solution has dtype float32"),
        ({"x": np.zeros(1), "point": np.zeros(3)}, "round 0: field 'point': the solution has shape (3,); expected (2,)"),
        ({"x": np.zeros(1), "point": np.array([0.0, np.nan])}, "round 0: field 'point': the solution is not finite at index (1,)"),
        ({"done": np.zeros(3)}, "round 0: field 'done': the solution has shape (3,); expected (2,)"),
    ],
)
def test_refusals_are_round_prefixed_and_change_nothing(action, message):
    s = _Toy()
    with pytest.raises(InvalidSolution) as info:
        s.apply(action)
    assert str(info.value).startswith(message)
    assert s.state() == {"round": 0, "used": 0, "left": 5} and s.trace_used == []


def test_round_limit_and_no_limit():
    s = _Toy(budget=100, max_rounds=2)
    s.apply(_act())
    s.apply(_act())
    with pytest.raises(InvalidSolution, match=r"^round 2: the 2 rounds of this instance are spent; send 'done'$"):
        s.apply(_act())
    s.apply({"done": np.zeros(2)})  # 'done' is still accepted
    assert s.state() is None
    s = _Toy(budget=100, max_rounds=None)
    for _ in range(10):
        s.apply(_act())
    assert s.round == 10


def test_budget_message_without_unit():
    s = _Toy()
    with pytest.raises(InvalidSolution, match=r"^round 0: 7 calls but only 5 are left$"):
        s._check_budget(7, 5, "calls")
    s._check_budget(5, 5, "calls")  # exactly what is left is fine
