"""A test-only task, ``toy-mean``: estimate the mean of a Gaussian sample.

Loaded by the test suite through ``BENCH_TASK_PATHS``. It is tiny but real: the
true mean is private to the task, and the verifier recomputes the error.
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


@register_task
class ToyMean(Task):
    meta = TaskMeta(
        name="toy-mean",
        version="1",
        family="test",
        description="Estimate the mean of 200 Gaussian samples (test-only task).",
        metrics=[Metric(name="abs_err", direction="min"), Metric(name="sq_err", direction="min")],
        primary="abs_err",
        normalization=Normalization(kind="log", zero=1.0, one=1e-3),
        gap_reference="zero",
        budgets={"smoke": 5.0, "standard": 5.0, "full": 5.0},
    )
    template = "x = instance.data['x']\nreturn np.array(float(np.median(x)))"

    def instances(self, tier):
        n = {"smoke": 3, "standard": 4, "full": 4}[tier]
        return [InstanceSpec(id=f"mu{i}", params={"n": 200, "i": i}, tags=("toy",)) for i in range(n)]

    def load(self, instance_id):
        i = int(instance_id.removeprefix("mu"))
        rng = np.random.default_rng(1000 + i)
        mu = float(i) - 1.5
        x = rng.normal(mu, 1.0, size=200)
        return Instance(
            id=instance_id,
            params={"n": 200, "i": i},
            data={"x": x},
            private={"mu": mu},
            references={"zero": Reference(value=0.0, source="exact")},
            tags=("toy",),
        )

    def evaluate(self, instance, solution):
        a = np.asarray(solution)
        if a.dtype.kind not in "fi" or a.size != 1:
            raise InvalidSolution(f"expected one number, got an array of dtype {a.dtype} and shape {a.shape}")
        v = float(a.reshape(()))
        if not np.isfinite(v):
            raise InvalidSolution(f"the estimate is {v}")
        err = abs(v - instance.private["mu"])
        return {"abs_err": err, "sq_err": err**2}
