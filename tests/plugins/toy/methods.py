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



_PREPARED: dict[int, float] = {}


def _prepare(params):
    """A one-off setup: slow, and keyed by nothing (runs once per worker)."""
    import time

    time.sleep(0.5)
    _PREPARED[0] = 0.0


@method(name="toy-prepared", kind="baseline", tasks=["toy-mean"], deterministic=True, reference="test", setup=_prepare)
def prepared(instance, *, seed, budget):
    assert 0 in _PREPARED, "setup did not run before the job"
    return np.array(instance.data["x"].mean() + _PREPARED[0])


def _prepare_per_rep(params, *, rep, master_seed, scale):
    """A setup keyed by repetition that returns its product (read back with bench.prepared())."""
    return {"rep": rep, "master_seed": master_seed, "scale": scale}


@method(name="toy-prepared-per-rep", kind="baseline", tasks=["toy-mean"], deterministic=True, reference="test",
        params={"scale": 1.0}, setup=_prepare_per_rep, setup_key=lambda params, *, rep: rep)  # fmt: skip
def prepared_per_rep(instance, *, seed, budget, scale):
    from bench import prepared

    made = prepared()
    print(f"prepared {made}")
    return np.array(instance.data["x"].mean() * made["scale"])


def _broken_setup(params):
    raise RuntimeError("no weights for this k")


@method(name="toy-broken-setup", kind="baseline", tasks=["toy-mean"], reference="test", setup=_broken_setup)
def broken(instance, *, seed, budget):
    return np.array(0.0)


@method(name="toy-anytime", kind="baseline", tasks=["toy-mean"], reference="test")
def anytime(instance, *, seed, budget):
    """Refines until bench.time_left() says stop; must never time out."""
    import time

    from bench import time_left

    assert time_left() <= budget
    while time_left() > 0.05:
        time.sleep(0.01)
    return np.array(instance.data["x"].mean())
