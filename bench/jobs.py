"""Jobs: one (task, instance, method, params, seed) run, its seed and its key.

Seeds come from one master seed. A repetition ``rep`` on an instance gets the
same seed for every method, so methods are compared on common random numbers
(paired comparisons need that).

The job key hashes everything that can change a result: task name and version,
instance id and data digest, method name and version, params, seed, budget and
thread count. A record is reused only for the same key.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Job", "derive_seed", "job_key", "expand_grid", "KEY_FIELDS"]

KEY_FIELDS = (
    "task",
    "task_version",
    "instance",
    "instance_digest",
    "method",
    "method_version",
    "params",
    "seed",
    "budget",
    "threads",
)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def derive_seed(master: int, task: str, instance: str, rep: int) -> int:
    """A 31-bit seed from the master seed, the task, the instance and the repetition.

    Independent of the method, so all methods see the same seed for ``rep``.
    """
    h = hashlib.sha256(_canonical([int(master), task, instance, int(rep)]).encode()).digest()
    return int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def job_key(fields: dict[str, Any]) -> str:
    """sha256 over :data:`KEY_FIELDS` of ``fields`` (hex, 64 chars)."""
    return hashlib.sha256(_canonical({k: fields[k] for k in KEY_FIELDS}).encode()).hexdigest()


def expand_grid(defaults: dict[str, Any], grid: dict[str, list[Any]] | None) -> list[dict[str, Any]]:
    """Cartesian product of ``grid`` on top of ``defaults`` (just ``defaults`` without a grid)."""
    if not grid:
        return [dict(defaults)]
    names = sorted(grid)
    return [{**defaults, **dict(zip(names, combo, strict=True))} for combo in itertools.product(*(grid[n] for n in names))]


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to run one job, as plain data (picklable, JSON-able)."""

    task: str
    task_version: str
    instance: str
    instance_digest: str
    method: str
    method_version: str
    kind: str
    params: dict[str, Any]
    seed: int
    rep: int
    master_seed: int
    budget: float
    threads: int = 1
    tier: str = "smoke"
    memory_mb: float = 4096.0
    grace: float = field(default=-1.0)

    @property
    def key(self) -> str:
        return job_key(asdict(self))

    @property
    def hard_limit(self) -> float:
        """Wall-clock seconds after which the job's processes are killed."""
        grace = self.grace if self.grace >= 0 else 1.0 + 0.1 * self.budget
        return self.budget + grace

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Job:
        return cls(**d)

    def label(self) -> str:
        return f"{self.method} on {self.task}/{self.instance} seed {self.rep}"
