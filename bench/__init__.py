"""bench: verified benchmarks for the methods of ICML 2025 papers.

The public API for method authors is :func:`method` (register a method),
:func:`checkpoint` (report an intermediate solution) and :func:`time_left`
(seconds left of the job's budget); task authors subclass :class:`Task` and
use :func:`register_task`.
"""

from bench.registry import method, register_task
from bench.sandbox import checkpoint, time_left
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
    "Task",
    "TaskMeta",
    "Metric",
    "Normalization",
    "Reference",
    "Instance",
    "InstanceSpec",
    "InvalidSolution",
]
