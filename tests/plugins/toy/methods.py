"""Test-only methods for ``toy-mean`` (loaded with --plugin)."""

import numpy as np

from bench import method


@method(name="toy-sample-mean", kind="method", tasks=["toy-mean"], deterministic=True, reference="textbook")
def sample_mean(instance, *, seed, budget):
    return np.array(instance.data["x"].mean())


@method(name="toy-noisy", kind="baseline", tasks=["toy-mean"], reference="textbook", params={"scale": 0.3})
def noisy(instance, *, seed, budget, scale):
    rng = np.random.default_rng(seed)
    return np.array(instance.data["x"].mean() + rng.normal(0, scale))


@method(name="toy-first", kind="baseline", tasks=["toy-mean"], deterministic=True, reference="none",
        supports=lambda inst: inst.params["i"] != 2 or "toy-first skips mu2 on purpose")
def first(instance, *, seed, budget):
    return np.array(instance.data["x"][0])

