"""bench: verified benchmarks for the methods of ICML 2025 papers.

The public API for method authors is :func:`method` (register a method),
:func:`checkpoint` (report an intermediate solution), :func:`time_left`
(seconds left of the job's budget), :func:`truncated` (the clock cut this
run short: never rank it as finished) and :func:`prepared` (what the
method's one-off setup returned); task authors subclass :class:`Task` and
use :func:`register_task`.
"""

from bench.registry import method, register_task
from bench.sandbox import checkpoint, prepared, time_left, truncated
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Reference,
    Task,
    TaskMeta,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "method",
    "register_task",
    "checkpoint",
    "time_left",
    "truncated",
    "prepared",
    "Task",
    "TaskMeta",
    "Metric",
    "Normalization",
    "Reference",
    "Instance",
    "InstanceSpec",
    "InvalidSolution",
]
