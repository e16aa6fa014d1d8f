"""What a task is: metadata, instances, and the trusted verifier.

A task owns the problem and the answer key. A method only ever sees the
*public* part of an instance (``Instance.public()``); the task recomputes every
metric from the solution the method returns (``Task.evaluate``), and rejects an
invalid solution with :class:`InvalidSolution`.

Interactive tasks (a method asks an oracle over several rounds) also provide a
:class:`Session`: the trusted side keeps the state, the oracle and the learner,
and the method answers ``select(state) -> action`` calls. A one-shot task is the
special case of one call, whose action is the solution. :class:`RoundSession`
holds what batched oracle rounds share (round limit, ``done``, key and array
checks, budget refusals, the trace of reported iterates).
"""

from __future__ import annotations

import csv
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from bench import wire

__all__ = [
    "TIERS",
    "InvalidSolution",
    "Paper",
    "Metric",
    "Normalization",
    "Reference",
    "TaskMeta",
    "InstanceSpec",
    "Instance",
    "Session",
    "OneShotSession",
    "RoundSession",
    "Task",
    "PaperResult",
]

TIERS = ("smoke", "standard", "full")
Tier = Literal["smoke", "standard", "full"]


class InvalidSolution(ValueError):
    """The solution a method returned breaks the task's rules.

    The message must say what is wrong precisely enough to fix it, e.g.
    ``"label 7 at node 12 is outside [0, 3)"``.
    """


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Paper(_Strict):
    """The paper a task family comes from."""

    title: str
    authors: list[str]
    arxiv: str | None = None
    venue: str = "ICML 2025"
    code_url: str | None = None


class Metric(_Strict):
    """One metric the verifier computes.

    ``direction`` says which way is better; ``unit`` is free text ("", "%",
    "s", "edges").

    ``timed``: the value depends on timings taken on the machine that ran the
    job (a method's time against a reference time the task measured there);
    ``bench verify`` re-computes it but cannot compare it on another machine,
    and says so. ``rtol``: the relative tolerance ``bench verify`` allows when
    it re-scores on another machine (default: its own, 1e-9); set it, with the
    reason in ``description``, for a metric whose computation is only that
    accurate across CPUs (an eigenvalue from LAPACK, say).
    """

    name: str
    direction: Literal["max", "min"]
    unit: str = ""
    description: str = ""
    timed: bool = False
    rtol: float | None = None


class Normalization(_Strict):
    """How the primary metric maps to a 0-1 score for cross-task views.

    ``linear``: ``(v - zero) / (one - zero)``; ``zero`` and ``one`` are either
    numbers or names of per-instance references (e.g. ``"random"`` and
    ``"best_known"``).

    ``log``: for errors spanning decades,
    ``(log10(zero) - log10(v)) / (log10(zero) - log10(one))``.
    """

    kind: Literal["linear", "log"] = "linear"
    zero: float | str
    one: float | str
    description: str = ""

    def _resolve(self, end: float | str, refs: dict[str, Reference]) -> float | None:
        if isinstance(end, str):
            ref = refs.get(end)
            return None if ref is None else float(ref.value)
        return float(end)

    def apply(self, value: float, refs: dict[str, Reference]) -> float:
        """Normalise ``value`` for one instance; NaN where a reference is missing."""
        lo, hi = self._resolve(self.zero, refs), self._resolve(self.one, refs)
        if lo is None or hi is None or value is None or not math.isfinite(value):
            return math.nan
        if self.kind == "log":
            if value <= 0 or lo <= 0 or hi <= 0 or lo == hi:
                return math.nan
            return (math.log10(lo) - math.log10(value)) / (math.log10(lo) - math.log10(hi))
        if hi == lo:
            return math.nan
        return (value - lo) / (hi - lo)


class Reference(_Strict):
    """A reference value for one instance (best known, optimum, random level)."""

    value: float
    source: str
    note: str = ""


class TaskMeta(_Strict):
    """Strict task metadata (unknown fields are an error).

    ``version`` must be bumped on any change that alters results; it is part of
    every job key, so old results are never mixed with new ones.
    """

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    version: str
    family: str
    area: str | None = Field(
        None, description="research area the leaderboard groups tasks by (e.g. 'combinatorial optimisation')"
    )
    paper: Paper | None = None
    description: str
    metrics: list[Metric]
    primary: str
    normalization: Normalization
    gap_reference: str | None = Field(
        None, description="reference that the leaderboard's 'gap' column is measured against"
    )
    interactive: bool = False
    budgets: dict[Tier, float] = Field(default_factory=lambda: {"smoke": 10.0, "standard": 60.0, "full": 600.0})
    superseded_by: str | None = None

    @model_validator(mode="after")
    def _primary_is_a_metric(self) -> TaskMeta:
        names = [m.name for m in self.metrics]
        if self.primary not in names:
            raise ValueError(f"primary metric {self.primary!r} is not one of {names}")
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate metric names in {names}")
        return self

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(name)


class PaperResult(_Strict):
    """A number the paper reports, kept as data beside ours (never mixed in)."""

    instance: str
    method: str
    metric: str
    value: float
    source: str
    note: str = ""


@dataclass(frozen=True)
class InstanceSpec:
    """Cheap description of an instance, known without loading its data.

    ``params`` and ``tags`` feed the leaderboard's filters.
    """

    id: str
    params: dict[str, Any] = field(default_factory=dict)
    tags: tuple[str, ...] = ()


@dataclass
class Instance:
    """A loaded instance.

    Attributes
    ----------
    id, params, tags
        As in :class:`InstanceSpec`.
    data
        Public data, sent to the method: plain values and numpy arrays only.
    private
        Held by the trusted side only (answer keys, oracle labels).
    references
        Reference values by name (``"best_known"``, ``"random"``...).
    digest
        sha256 of whatever defines the instance (file bytes, generator output).
        It is part of every job key.
    """

    id: str
    params: dict[str, Any]
    data: dict[str, Any]
    private: dict[str, Any] = field(default_factory=dict)
    references: dict[str, Reference] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    digest: str = ""

    def __post_init__(self) -> None:
        if not self.digest:
            self.digest = wire.digest({"params": self.params, "data": self.data, "private": self.private})

    def public(self) -> dict[str, Any]:
        """What the method process receives."""
        return {"id": self.id, "params": dict(self.params), "tags": list(self.tags), "data": self.data}


class Session:
    """The trusted side of an interactive protocol.

    The runner calls ``state()``; while it returns a dict, it sends that state
    to the method, and passes the method's answer to ``apply``. When ``state()``
    returns ``None``, ``solution()`` gives what ``Task.evaluate`` scores.
    """

    def state(self) -> dict[str, Any] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def apply(self, action: Any) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def solution(self) -> Any:  # pragma: no cover - interface
        raise NotImplementedError


class OneShotSession(Session):
    """One call: the state is empty and the action is the solution."""

    def __init__(self) -> None:
        self._done = False
        self._solution: Any = None

    def state(self) -> dict[str, Any] | None:
        return None if self._done else {}

    def apply(self, action: Any) -> None:
        self._solution = action
        self._done = True

    def solution(self) -> Any:
        return self._solution


class RoundSession(Session):
    """Base of a batched oracle protocol: the method sends one dict per round.

    It holds what such sessions share and leaves the protocol to the subclass,
    which writes ``round_state`` (the state while the session runs), ``apply``
    and ``solution``, and calls the helpers below in the order its protocol
    checks things (so the first refusal, and its message, stay the subclass's).
    Every refusal is an :class:`InvalidSolution` whose message starts with
    ``round {round}: ``.

    A typical ``apply``::

        action = self._require_dict(action)
        if "done" in action:
            self.answer = self._float_field(action["done"], "done", (d,))
            return
        self._check_keys(action, ("x", "point"), "an oracle action")
        self._check_round_limit()
        x = self._float_field(action["x"], "x", (n, d))
        self._check_budget(n, self.budget - self.used, "oracle calls")
        self._record(self.used, value_at(action["point"]))
        ...  # answer, spend
        self.round += 1

    Parameters
    ----------
    max_rounds
        Rounds the instance allows (``None``: no limit).

    Attributes
    ----------
    round : int
        Rounds answered so far (the subclass increments it).
    max_rounds : int or None
        As given.
    answer : Any
        The final answer; ``state()`` is ``None`` once it is set.
    trace_used, trace_gap : list
        Per answered round: the budget used before it and the task's value
        (e.g. the optimality gap) at the iterate the method reported.
    """

    def __init__(self, max_rounds: int | None = None) -> None:
        self.round = 0
        self.max_rounds = None if max_rounds is None else int(max_rounds)
        self.answer: Any = None
        self.trace_used: list[int] = []
        self.trace_gap: list[float] = []

    def state(self) -> dict[str, Any] | None:
        """``None`` once :attr:`answer` is set, else :meth:`round_state`."""
        if self.answer is not None:
            return None
        return self.round_state()

    def round_state(self) -> dict[str, Any]:  # pragma: no cover - interface
        """The state sent to the method while the session runs."""
        raise NotImplementedError

    # -- refusals ----------------------------------------------------------------
    def _invalid(self, message: str) -> InvalidSolution:
        """An :class:`InvalidSolution` with ``message`` after ``"round {round}: "`` (to raise)."""
        return InvalidSolution(f"round {self.round}: {message}")

    def _require_dict(self, action: Any, expects: str = "") -> dict[str, Any]:
        """``action`` if it is a dict; ``expects`` follows "must be a dict" in the message."""
        if not isinstance(action, dict):
            raise self._invalid(f"the action must be a dict{expects}, got {type(action).__name__}")
        return action

    def _check_keys(self, action: dict[str, Any], keys: tuple[str, ...], kind: str) -> None:
        """Refuse unless the keys of ``action`` are exactly ``keys``; ``kind`` names the action."""
        if set(action) != set(keys):
            names = ", ".join(repr(k) for k in keys)
            raise self._invalid(f"{kind} has exactly the keys {names}; got {sorted(action)}")

    def _check_round_limit(self) -> None:
        """Refuse a round beyond :attr:`max_rounds`."""
        if self.max_rounds is not None and self.round >= self.max_rounds:
            raise self._invalid(f"the {self.max_rounds} rounds of this instance are spent; send 'done'")

    def _float_field(self, obj: Any, field: str, shape: tuple[int, ...]) -> np.ndarray:
        """Field ``field`` of the action as a finite float64 array of ``shape``.

        The checks and messages are :func:`bench.solutions.as_float_array`'s,
        after ``round {round}: field {field!r}: ``.
        """
        from bench.solutions import as_float_array

        where = f"field {field!r}"
        if not isinstance(obj, np.ndarray):
            raise self._invalid(f"{where} must be a float64 numpy array of shape {shape}, got {type(obj).__name__}")
        try:
            return as_float_array(obj, shape, what=f"a finite float64 array of shape {shape}")
        except InvalidSolution as exc:
            raise self._invalid(f"{where}: {exc}") from None

    def _check_budget(self, n: int, left: int, asked: str, unit: str = "") -> None:
        """Refuse ``n`` queries when only ``left`` remain.

        The message is ``"{n} {asked} but only {left} [{unit} ]are left"``.
        """
        if n > left:
            units = f" {unit}" if unit else ""
            raise self._invalid(f"{n} {asked} but only {left}{units} are left")

    # -- trace -------------------------------------------------------------------
    def _record(self, used: int, value: float) -> None:
        """Append one round to the trace: the budget used before it and the reported iterate's value."""
        self.trace_used.append(int(used))
        self.trace_gap.append(float(value))

    def _trace(self) -> dict[str, np.ndarray]:
        """The trace as arrays: ``trace_used`` (int64) and ``trace_gap`` (float64)."""
        return {
            "trace_used": np.asarray(self.trace_used, dtype=np.int64),
            "trace_gap": np.asarray(self.trace_gap, dtype=np.float64),
        }


class Task:
    """Base class of every task. Subclass it and register it with ``@register_task``.

    A subclass sets ``meta`` and implements ``instances``, ``load`` and
    ``evaluate``. Interactive tasks also implement ``session``.

    Claims and the paper's reported numbers are data files beside the task's
    module: ``claims.toml`` and ``paper_results.csv`` (both optional).
    """

    meta: ClassVar[TaskMeta]
    #: What ``bench new-method`` writes; the result must pass ``bench validate`` as written.
    #: Either the body of ``solve`` (batch tasks) or, for interactive tasks, a whole module
    #: holding one ``@method`` class with ``select`` (``{name}`` and ``{kind}`` are filled in,
    #: other braces doubled).
    template: ClassVar[str] = ""
    #: ``deterministic=`` of a scaffolded ``solve``: ``True``, or why a method of this task
    #: cannot promise byte-identical solutions (e.g. the solution holds a time the task measured).
    scaffold_deterministic: ClassVar[bool | str] = True
    #: Directory holding ``claims.toml`` / ``paper_results.csv``; set by the registry.
    data_dir: ClassVar[Path | None] = None

    # -- instances -------------------------------------------------------------
    def instances(self, tier: str) -> list[InstanceSpec]:
        """Instances of a tier, in a stable order."""
        raise NotImplementedError

    def load(self, instance_id: str) -> Instance:
        """Load one instance by id, public and private parts."""
        raise NotImplementedError

    def holdout_instances(self) -> list[InstanceSpec]:
        """The ``holdout`` tier: instances made with the maintainers' secret (:mod:`bench.holdout`).

        Generated tasks get it from :class:`~bench.instances.CatalogTask`; a
        task whose instances are fixed files or public data sets has none.

        Raises
        ------
        bench.holdout.HoldoutUnavailable
            Always, here.
        """
        from bench.holdout import HoldoutUnavailable

        raise HoldoutUnavailable(
            f"task {self.meta.name} has no holdout tier: its instances are fixed public data, "
            "not generated from a seed (see the README's Security section)"
        )

    def instance_digest(self, instance_id: str) -> str:
        """The digest ``load(instance_id).digest`` will have; part of every job key.

        The runner calls this for every planned job, so tasks with costly
        instances should override it with something that does not load the
        data (e.g. a committed checksum that ``load`` verifies).
        """
        return self.load(instance_id).digest

    def all_instances(self) -> dict[str, InstanceSpec]:
        """Every instance of every tier, by id."""
        out: dict[str, InstanceSpec] = {}
        for tier in TIERS:
            for spec in self.instances(tier):
                out.setdefault(spec.id, spec)
        return out

    def budget(self, tier: str, spec: InstanceSpec) -> float:
        """Default time budget (seconds) of one job on ``spec`` in ``tier``."""
        return float(self.meta.budgets[tier])

    # -- verification ----------------------------------------------------------
    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Recompute every metric from ``solution`` alone.

        Raises
        ------
        InvalidSolution
            For a wrong shape, type, range, a NaN, or a rule of the task broken.
        """
        raise NotImplementedError

    def session(self, instance: Instance, seed: int) -> Session:
        """The trusted side of the protocol (one call for one-shot tasks)."""
        return OneShotSession()

    def scaffold(self, name: str, kind: str) -> str:
        """Source of a new method file for this task (``bench new-method``).

        A ``solve`` body in :attr:`template` is wrapped in a ``solve`` function;
        a whole-module template (interactive tasks) is filled in as it is.
        """
        from bench.scaffold import is_module_template, render_method, render_module

        if not self.template:
            raise NotImplementedError(f"task {self.meta.name} has no method template")
        if is_module_template(self.template):
            return render_module(self.template, name, kind)
        return render_method(self.meta.name, self.meta.family, self.template, name, kind, self.scaffold_deterministic)

    # -- claims and paper numbers (data) ---------------------------------------
    def claims(self) -> list[Any]:
        """The paper's claims, read from ``claims.toml`` beside the task."""
        from bench.claims import Claim

        path = self.data_dir / "claims.toml" if self.data_dir else None
        if path is None or not path.exists():
            return []
        with open(path, "rb") as fh:
            try:
                raw = tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path}: {exc}") from exc
        out = []
        for i, entry in enumerate(raw.get("claim", [])):
            try:
                out.append(Claim.model_validate({"task": self.meta.name, **entry}))
            except Exception as exc:  # pydantic's message is long; name the entry
                raise ValueError(f"{path}: claim #{i + 1} ({entry.get('id', '?')}): {exc}") from exc
        return out

    def paper_results(self) -> list[PaperResult]:
        """Numbers the paper reports, read from ``paper_results.csv`` beside the task."""
        path = self.data_dir / "paper_results.csv" if self.data_dir else None
        if path is None or not path.exists():
            return []
        with open(path, newline="") as fh:
            rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#"))]
        out = []
        for lineno, row in enumerate(rows, start=2):
            try:
                out.append(PaperResult.model_validate({k: v for k, v in row.items() if v not in (None, "")}))
            except Exception as exc:
                raise ValueError(f"{path}: row {lineno}: {exc}") from exc
        return out
