"""Test-only methods for the interactive ``toy-guess`` task (loaded with --plugin)."""

from bench import method


@method(name="toy-bisect", kind="method", tasks=["toy-guess"], deterministic=True, reference="binary search")
class Bisect:
    """Binary search over the oracle's answers (an interactive method: a class with select)."""

    def __init__(self, instance, *, seed, budget):
        self.high = int(instance.data["high"])
        assert "secret" not in instance.data  # the answer key never reaches the method

    def select(self, state):
        lo, hi = 0, self.high - 1
        for g, ans in zip(state["guesses"].tolist(), state["answers"].tolist(), strict=True):
            if ans > 0:
                lo = g + 1
            elif ans < 0:
                hi = g - 1
        return (lo + hi) // 2


@method(name="toy-repeat", kind="baseline", tasks=["toy-guess"], deterministic=True, reference="none")
class Repeat:
    """Always guesses 0 (never finds most secrets); then an out-of-range guess on round 5."""

    def __init__(self, instance, *, seed, budget):
        pass

    def select(self, state):
        return 5000 if len(state["guesses"]) == 4 else 0
