"""A test-only anytime method for the leaderboard tests (loaded with --plugin)."""

import time

import numpy as np

from bench import checkpoint, method


@method(name="toy-refine", kind="baseline", tasks=["toy-mean"], deterministic=True, reference="test", development_seeds={5: ["n100-s1"]})
def refine(instance, *, seed, budget):
    """Mean of a growing prefix of the sample: every checkpoint is verified by the task."""
    x = instance.data["x"]
    for n in (10, 50, 100):
        checkpoint(np.array(x[:n].mean()))
        time.sleep(0.01)
    return np.array(x.mean())
