"""Test-only methods for the harness benchmarks (on the toy-mean task)."""

import time

import numpy as np

from bench import method


@method(name="noop", kind="baseline", tasks=["toy-mean"], deterministic=True)
def noop(instance, *, seed, budget):
    """Does nothing: measures the harness's own cost per job."""
    return np.array(0.0)


@method(name="spin", kind="baseline", tasks=["toy-mean"], deterministic=True, params={"seconds": 0.5})
def spin(instance, *, seed, budget, seconds):
    """Burns ``seconds`` of CPU time: measures parallel speed-up."""
    t0 = time.process_time()
    x = 0
    while time.process_time() - t0 < seconds:
        x += 1
    return np.array(0.0)
