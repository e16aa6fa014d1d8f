"""A test-only interactive task, ``toy-guess``: find a secret number by asking an oracle.

The trusted side (``GuessSession``) keeps the secret and answers each guess
with "higher", "lower" or "hit"; the method only sees the answers. The
solution is the sequence of guesses, and ``evaluate`` replays it.
"""

from __future__ import annotations

import numpy as np

from bench import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Reference,
    Task,
    TaskMeta,
    register_task,
)
from bench.task import Session

HIGH = 1024
ROUNDS = 20


def _answer(secret: int, guess: int) -> int:
    """-1: the secret is lower, +1: higher, 0: hit."""
    return 0 if guess == secret else (1 if secret > guess else -1)


def _check(guess: object, i: int) -> int:
    if isinstance(guess, np.ndarray) and guess.shape == () and guess.dtype.kind in "iu":
        guess = int(guess)
    if not isinstance(guess, int) or isinstance(guess, bool):
        raise InvalidSolution(f"guess {i}: expected an int, got {type(guess).__name__}")
    if not 0 <= guess < HIGH:
        raise InvalidSolution(f"guess {i}: {guess} is outside [0, {HIGH})")
    return guess


class GuessSession(Session):
    def __init__(self, secret: int) -> None:
        self._secret = secret
        self.guesses: list[int] = []
        self.answers: list[int] = []

    def state(self):
        if len(self.guesses) >= ROUNDS or (self.answers and self.answers[-1] == 0):
            return None
        return {"guesses": np.array(self.guesses, dtype=np.int64), "answers": np.array(self.answers, dtype=np.int64)}

    def apply(self, action) -> None:
        g = _check(action, len(self.guesses))
        self.guesses.append(g)
        self.answers.append(_answer(self._secret, g))

    def solution(self):
        return np.array(self.guesses, dtype=np.int64)


@register_task
class ToyGuess(Task):
    meta = TaskMeta(
        name="toy-guess",
        version="1",
        family="test",
        description="Find a secret integer in [0, 1024) with higher/lower answers (test-only).",
        metrics=[Metric(name="rounds", direction="min"), Metric(name="found", direction="max")],
        primary="rounds",
        normalization=Normalization(kind="linear", zero=float(ROUNDS + 1), one="optimal"),
        gap_reference="optimal",
        interactive=True,
        budgets={"smoke": 5.0, "standard": 5.0, "full": 5.0},
    )

    def instances(self, tier):
        return [InstanceSpec(id=f"secret{i}", params={"i": i}) for i in range(3)]

    def load(self, instance_id):
        i = int(instance_id.removeprefix("secret"))
        secret = int(np.random.default_rng(77 + i).integers(0, HIGH))
        return Instance(
            id=instance_id,
            params={"i": i},
            data={"high": HIGH, "rounds": ROUNDS},
            private={"secret": secret},
            references={"optimal": Reference(value=10.0, source="binary search needs at most log2(1024) = 10 guesses")},
        )

    def session(self, instance, seed):
        return GuessSession(instance.private["secret"])

    def evaluate(self, instance, solution):
        a = np.asarray(solution)
        if a.ndim != 1 or a.dtype.kind not in "iu":
            raise InvalidSolution(f"expected a 1-d integer array of guesses, got dtype {a.dtype} and shape {a.shape}")
        if len(a) > ROUNDS:
            raise InvalidSolution(f"{len(a)} guesses; at most {ROUNDS} are allowed")
        secret = instance.private["secret"]
        for i, g in enumerate(a.tolist()):
            _check(g, i)
            if g == secret:
                return {"rounds": float(i + 1), "found": 1.0}
        return {"rounds": float(ROUNDS + 1), "found": 0.0}
