"""Registries of tasks and methods, and how they are discovered.

Tasks are trusted benchmark code: they live in the top-level ``tasks`` package
(or come from the ``bench.tasks`` entry-point group) and the runner imports
them.

Methods are *not* trusted: they live in ``methods`` (the papers' methods),
``baselines``, the ``bench.plugins`` entry-point group, or files named in
``BENCH_PLUGIN_PATHS``. Importing one runs its code, so only worker processes
import them (see :mod:`bench.sandbox`); the runner receives their metadata as
data (:meth:`MethodSpec.meta`).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import sys
import threading
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from bench.task import TIERS, Task

__all__ = [
    "RegistryError",
    "DuplicateNameError",
    "UnknownNameError",
    "Registry",
    "MethodSpec",
    "method",
    "register_task",
    "TASKS",
    "METHODS",
    "discover_tasks",
    "discover_methods",
    "get_task",
    "DiscoveryError",
    "unknown_message",
]

T = TypeVar("T")


class RegistryError(Exception):
    """Base class for registry errors."""


class DuplicateNameError(RegistryError):
    """Two parts registered under one name."""


class UnknownNameError(RegistryError, KeyError):
    """A name that is not registered; the message suggests close matches."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


def _source_of(obj: Any) -> str:
    try:
        file = inspect.getsourcefile(obj) or "?"
        line = inspect.getsourcelines(obj)[1]
        return f"{file}:{line}"
    except (TypeError, OSError):
        return getattr(obj, "__module__", "?")


class Registry(Generic[T]):
    """A name -> object map that refuses duplicates and suggests on typos."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}
        self._sources: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, name: str, obj: T, source: str) -> None:
        with self._lock:
            if name in self._items:
                if self._sources[name] == source:
                    return  # the same module imported twice (e.g. by path and by name)
                raise DuplicateNameError(
                    f"{self.what} {name!r} is registered twice: in {self._sources[name]} and in {source}"
                )
            self._items[name] = obj
            self._sources[name] = source

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(unknown_message(self.what, name, self._items)) from None

    def source(self, name: str) -> str:
        return self._sources[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._items.items())

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._sources.clear()


def unknown_message(what: str, name: str, known: Iterable[str]) -> str:
    """``unknown task 'maxcutt'; did you mean 'maxcut'?``"""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        hint = "did you mean " + " or ".join(repr(c) for c in close) + "?"
    elif known:
        hint = "known: " + ", ".join(known[:12]) + (" ..." if len(known) > 12 else "")
    else:
        hint = f"no {what}s are registered"
    return f"unknown {what} {name!r}; {hint}"


# ----------------------------------------------------------------------------- tasks

TASKS: Registry[type[Task]] = Registry("task")


def register_task(cls: type[Task]) -> type[Task]:
    """Class decorator: register a :class:`~bench.task.Task` subclass by ``meta.name``."""
    if not (isinstance(cls, type) and issubclass(cls, Task)):
        raise TypeError(f"@register_task expects a Task subclass, got {cls!r}")
    if not hasattr(cls, "meta"):
        raise TypeError(f"{cls.__qualname__} has no `meta = TaskMeta(...)`")
    if cls.data_dir is None:
        cls.data_dir = Path(inspect.getfile(cls)).parent
    TASKS.add(cls.meta.name, cls, _source_of(cls))
    return cls


_task_instances: dict[str, Task] = {}

#: Task name -> the module that registers it, for the tasks of this checkout (``tasks/index.json``).
#: Only a shortcut: :func:`find_task` falls back to full discovery for a name it lacks or
#: a module that no longer registers it. ``tests/test_registry.py`` keeps it current.
TASK_INDEX = Path(__file__).resolve().parent.parent / "tasks" / "index.json"


def _task_index() -> dict[str, str]:
    try:
        raw = json.loads(TASK_INDEX.read_text())
    except (OSError, ValueError):
        return {}
    tasks = raw.get("tasks") if isinstance(raw, dict) else None
    return {str(k): str(v) for k, v in tasks.items()} if isinstance(tasks, dict) else {}


def task_index_from_registry() -> dict[str, str]:
    """What ``tasks/index.json`` should hold: every task of the ``tasks`` package and its module."""
    discover_tasks()
    return {name: cls.__module__ for name, cls in TASKS.items() if cls.__module__.split(".")[0] == "tasks"}


def write_task_index() -> Path:
    """Rewrite ``tasks/index.json`` from full discovery (``python scripts/write_task_index.py``)."""
    body = {
        "comment": "task name -> module; a shortcut for bench.registry.find_task, rewritten by `python scripts/write_task_index.py`",
        "tasks": dict(sorted(task_index_from_registry().items())),
    }
    TASK_INDEX.write_text(json.dumps(body, indent=1) + "\n")
    return TASK_INDEX


def find_task(name: str) -> type[Task]:
    """The task class registered as ``name``, importing as little as it can.

    Importing every family (torch, scikit-learn, matplotlib...) costs seconds,
    and every runner and worker process looks a task up. So, in order: the
    registry; the module ``tasks/index.json`` names; the task files of
    ``BENCH_TASK_PATHS`` and the ``bench.tasks`` entry points; then full
    discovery, whose error suggests close names.
    """
    if name in TASKS:
        return TASKS.get(name)
    module = _task_index().get(name)
    if module is not None and "tasks" not in _discovered:
        _safe_import(module)
        if name in TASKS:
            return TASKS.get(name)
    _discover_task_plugins()
    if name in TASKS:
        return TASKS.get(name)
    return discover_tasks().get(name)


def get_task(name: str) -> Task:
    """The (cached) task object registered as ``name`` (see :func:`find_task`)."""
    if name not in _task_instances:
        _task_instances[name] = find_task(name)()
    return _task_instances[name]


# ----------------------------------------------------------------------------- methods

Kind = Literal["method", "baseline"]


def call_with_named(fn: Callable[..., Any], first: Any, kwargs: dict[str, Any]) -> Any:
    """Call ``fn(first, **kw)`` with the entries of ``kwargs`` that ``fn``'s signature names.

    All of them when ``fn`` takes ``**kwargs``; none when its signature
    cannot be read (builtins and some C callables).
    """
    try:
        sig_params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return fn(first)
    if any(p.kind is p.VAR_KEYWORD for p in sig_params):
        return fn(first, **kwargs)
    named = {p.name for p in sig_params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return fn(first, **{k: v for k, v in kwargs.items() if k in named})


@dataclass
class MethodSpec:
    """A registered method or baseline.

    ``target`` is the solve function, or a class whose instances answer
    ``select(state)`` for interactive tasks. ``supports(instance)`` returns
    ``True`` or a reason string (``False`` alone is allowed but unhelpful);
    it may also take the method's parameters by name (see :meth:`check_supports`).
    """

    name: str
    kind: Kind
    tasks: tuple[str, ...]
    target: Callable[..., Any]
    reference: str = ""
    version: str = "1"
    params: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] | None = None
    deterministic: bool = False
    supports: Callable[[Any], bool | str] | None = None
    budgets: dict[str, float] = field(default_factory=dict)
    tier_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    development_seeds: dict[int, tuple[str, ...] | None] = field(default_factory=dict)
    description: str = ""
    deviations: str = ""
    source: str = ""
    setup: Callable[[dict[str, Any]], None] | None = None
    setup_key: Callable[[dict[str, Any]], Any] | None = None

    def check_supports(self, instance: Any, params: dict[str, Any] | None = None) -> bool | str:
        """Ask ``supports`` whether this method can run ``instance`` with ``params``.

        ``supports`` receives the parameters its signature names (all of them
        if it takes ``**kwargs``), so a limit can be a parameter that the
        record keeps: DAKS's ``max_gib``, raised with ``--param max_gib=8``.

        Returns
        -------
        bool or str
            ``True``, or the reason the instance is not supported.
        """
        if self.supports is None:
            return True
        return call_with_named(self.supports, instance, dict(params or {}))

    def run_setup(self, instance_params: dict[str, Any], context: dict[str, Any] | None = None) -> Any:
        """Run ``setup`` for a job; returns what it returns (``None`` without a setup).

        ``context`` holds the job's ``rep``, ``master_seed`` and method
        parameters (``params``' entries by name); ``setup`` receives those its
        signature names, like :meth:`check_supports`.
        """
        if self.setup is None:
            return None
        return call_with_named(self.setup, dict(instance_params), dict(context or {}))

    def setup_key_for(self, instance_params: dict[str, Any], context: dict[str, Any] | None = None) -> Any:
        """The key under which a worker reuses a setup (``None``: one setup for every job)."""
        if self.setup_key is None:
            return None
        return call_with_named(self.setup_key, dict(instance_params), dict(context or {}))

    def meta(self) -> dict[str, Any]:
        """JSON-able metadata sent from the worker to the runner."""
        return {
            "name": self.name,
            "kind": self.kind,
            "tasks": list(self.tasks),
            "reference": self.reference,
            "version": self.version,
            "params": self.params,
            "grid": self.grid,
            "deterministic": self.deterministic,
            "budgets": self.budgets,
            "tier_params": self.tier_params,
            "development_seeds": [
                {"master_seed": s, "instances": None if i is None else list(i)} for s, i in sorted(self.development_seeds.items())
            ],
            "description": self.description,
            "deviations": self.deviations,
            "source": self.source,
            "interactive": inspect.isclass(self.target),
            "has_setup": self.setup is not None,
            "interface_problems": interface_problems(self.target, self.params),
        }


def interface_problems(target: Callable[..., Any], params: dict[str, Any] | None = None) -> list[str]:
    """What is wrong with a method's signature (empty when it is fine)."""
    problems = []
    if inspect.isclass(target):
        if not callable(getattr(target, "select", None)):
            problems.append(f"class {target.__name__} has no select(self, state) method")
        fn, what = target.__init__, f"{target.__name__}.__init__"
    else:
        fn, what = target, target.__name__
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [*problems, f"cannot read the signature of {what}"]
    sig_params = list(sig.parameters.values())
    if inspect.isclass(target):
        sig_params = sig_params[1:]  # self
    var_kw = any(p.kind is p.VAR_KEYWORD for p in sig_params)
    positional = [p for p in sig_params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not positional and not any(p.kind is p.VAR_POSITIONAL for p in sig_params):
        problems.append(f"{what} must take the instance as its first argument")
    names = {p.name for p in sig_params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    for kw in ("seed", "budget", *(params or {})):
        if kw not in names and not var_kw:
            problems.append(f"{what} must accept the keyword argument {kw!r}")
    return problems


METHODS: Registry[MethodSpec] = Registry("method")


def method(
    *,
    name: str,
    kind: Kind,
    tasks: Iterable[str],
    reference: str = "",
    version: str = "1",
    params: dict[str, Any] | None = None,
    grid: dict[str, list[Any]] | None = None,
    deterministic: bool = False,
    supports: Callable[[Any], bool | str] | None = None,
    budgets: dict[str, float] | None = None,
    tier_params: dict[str, dict[str, Any]] | None = None,
    development_seeds: Iterable[int] | dict[int, Iterable[str] | None] = (),
    description: str = "",
    deviations: str = "",
    setup: Callable[[dict[str, Any]], None] | None = None,
    setup_key: Callable[[dict[str, Any]], Any] | None = None,
) -> Callable[[T], T]:
    """Register a method or baseline with one decorator.

    Parameters
    ----------
    name
        Unique name, lower case (``"ros"``, ``"tabu"``).
    kind
        ``"method"`` for a paper's method, ``"baseline"`` otherwise.
    tasks
        Names of the tasks it solves.
    reference
        Paper or library it implements.
    version
        Bump on any change that alters results; part of every job key.
    params
        Default keyword parameters passed to the solve function.
    grid
        Optional parameter grid, expanded by ``bench run --grid``.
    deterministic
        If true, the same seed must give the same solution (``validate`` checks).
    supports
        ``supports(instance) -> True | reason``; unsupported instances are
        recorded as ``skipped`` with the reason, never as failures. Extra
        keyword arguments named like entries of ``params`` receive the job's
        values, so a limit can be a recorded, overridable parameter.
    budgets
        Per-tier time budgets (seconds) overriding the task's defaults.
    tier_params
        Per-tier parameter defaults overriding ``params`` in that tier only,
        e.g. ``{"full": {"max_steps": None}}`` for a paper-scale schedule in
        the ``full`` tier; ``--param`` still overrides both. Keys must be
        tiers, and their entries parameters of ``params``.
    development_seeds
        The master seeds whose runs were used to choose this version's
        settings (a tuned variant's development runs): a list of seeds (every
        instance), or ``{seed: [instance ids]}`` when the development runs
        of a seed touched only those instances (``None`` for all).
        ``bench publish`` refuses this version's runs on them, so that
        published numbers come from runs the tuning never saw. Empty for a
        method nobody tuned.
    description, deviations
        Free text shown on the leaderboard's method page; ``deviations`` lists
        every departure from the paper or official code. Defaults to the
        docstring of the decorated object.
    setup, setup_key
        Optional one-off preparation that does not depend on the instance's
        data, e.g. pre-training: ``setup(instance_params)`` runs in the worker
        before its first job with a new ``setup_key(instance_params)`` (one
        key if ``setup_key`` is None), and every later job with that key
        inherits its result: :func:`bench.prepared` returns what ``setup``
        returned. Both may also take, by name, the job's ``rep`` and
        ``master_seed`` and any entry of ``params`` (a pre-training seed per
        repetition, say). Its time is recorded as ``setup_s``, apart from the
        job's.

    Examples
    --------
    >>> @method(name="greedy", kind="baseline", tasks=["knapsack"], deterministic=True)
    ... def solve(instance, *, seed, budget):
    ...     ...
    """
    if kind not in ("method", "baseline"):
        raise ValueError(f"kind must be 'method' or 'baseline', got {kind!r}")
    bad_tiers = set(budgets or {}) - set(TIERS)
    if bad_tiers:
        raise ValueError(f"budgets: unknown tiers {sorted(bad_tiers)}; tiers are {list(TIERS)}")
    bad_tiers = set(tier_params or {}) - set(TIERS)
    if bad_tiers:
        raise ValueError(f"tier_params: unknown tiers {sorted(bad_tiers)}; tiers are {list(TIERS)}")
    for t, tp in (tier_params or {}).items():
        extra = set(tp) - set(params or {})
        if extra:
            raise ValueError(f"tier_params[{t!r}]: {sorted(extra)[0]!r} is not a parameter of {name!r} (params: {sorted(params or {})})")

    raw = development_seeds if isinstance(development_seeds, dict) else dict.fromkeys(development_seeds)
    if any(isinstance(x, bool) or not isinstance(x, int) for x in raw):
        raise ValueError(f"development_seeds of {name!r} must be master seeds (ints), got {list(raw)!r}")
    dev_seeds = {int(k): None if v is None else tuple(str(i) for i in v) for k, v in raw.items()}

    def deco(target: T) -> T:
        doc = inspect.getdoc(target) or ""
        spec = MethodSpec(
            name=name,
            kind=kind,
            tasks=tuple(tasks),
            target=target,  # type: ignore[arg-type]
            reference=reference,
            version=str(version),
            params=dict(params or {}),
            grid=grid,
            deterministic=deterministic,
            supports=supports,
            budgets=dict(budgets or {}),
            tier_params={t: dict(tp) for t, tp in (tier_params or {}).items()},
            development_seeds=dev_seeds,
            description=description or doc.split("\n\n")[0],
            deviations=deviations,
            source=_source_of(target),
            setup=setup,
            setup_key=setup_key,
        )
        METHODS.add(name, spec, spec.source)
        return target

    return deco


# ----------------------------------------------------------------------------- discovery


@dataclass
class DiscoveryError:
    """A module that failed to import; reported, never fatal for the others."""

    module: str
    error: str

    def __str__(self) -> str:
        return f"{self.module}: {self.error}"


_discovered: set[str] = set()
DISCOVERY_ERRORS: list[DiscoveryError] = []


def _import_package_tree(pkg_name: str) -> None:
    try:
        pkg = importlib.import_module(pkg_name)
    except ModuleNotFoundError as exc:
        if exc.name == pkg_name:
            return
        raise
    for info in pkgutil.walk_packages(getattr(pkg, "__path__", []), prefix=pkg_name + ".", onerror=lambda _n: None):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        _safe_import(info.name)


def _safe_import(modname: str) -> None:
    # A broken module, duplicate names included, must not hide the others:
    # it is reported (`bench list`, `bench validate`) and the rest load.
    try:
        importlib.import_module(modname)
    except Exception as exc:
        DISCOVERY_ERRORS.append(DiscoveryError(modname, _one_line(exc)))


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):  # the file and line are the error's own, not the importer's frame
        where = f" ({exc.filename}, line {exc.lineno})" if exc.filename else ""
        return f"{type(exc).__name__}: {exc.msg}{where}"
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def import_path(path: str | os.PathLike[str], prefix: str = "bench_plugin_") -> None:
    """Import a method (or, with ``prefix="bench_task_"``, task) file, or every ``*.py`` in a directory."""
    p = Path(path).resolve()
    files = sorted(p.glob("*.py")) if p.is_dir() else [p]
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or directory")
    for f in files:
        if f.name.startswith("_"):
            continue
        modname = prefix + f.stem + "_" + hashlib.sha1(str(f).encode()).hexdigest()[:10]
        if modname in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(modname, f)
        if spec is None or spec.loader is None:
            raise ImportError(f"{f}: cannot import")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[modname] = mod
        try:
            spec.loader.exec_module(mod)
        except Exception as exc:  # reported; the other files still load
            sys.modules.pop(modname, None)
            DISCOVERY_ERRORS.append(DiscoveryError(str(f), _one_line(exc)))


def plugin_paths(var: str = "BENCH_PLUGIN_PATHS") -> list[str]:
    """Extra files from an ``os.pathsep``-separated environment variable.

    ``BENCH_PLUGIN_PATHS`` names method files (imported by workers only);
    ``BENCH_TASK_PATHS`` names task files (trusted, imported by the runner).
    """
    raw = os.environ.get(var, "")
    return [p for p in raw.split(os.pathsep) if p]


def _discover_task_plugins() -> None:
    """Import the ``bench.tasks`` entry points and the files of ``BENCH_TASK_PATHS`` once."""
    if "task-plugins" not in _discovered:
        _discovered.add("task-plugins")
        for ep in entry_points(group="bench.tasks"):
            try:
                ep.load()
            except Exception as exc:
                DISCOVERY_ERRORS.append(DiscoveryError(f"entry point {ep.name}", _one_line(exc)))
        for p in plugin_paths("BENCH_TASK_PATHS"):
            import_path(p, prefix="bench_task_")


def discover_tasks() -> Registry[type[Task]]:
    """Import the whole ``tasks`` package, ``bench.tasks`` entry points and task files once."""
    if "tasks" not in _discovered:
        _discovered.add("tasks")
        _import_package_tree("tasks")
        _discover_task_plugins()
    return TASKS


def discover_methods(extra_paths: Iterable[str] = (), families: Iterable[str] | None = None) -> Registry[MethodSpec]:
    """Import methods, baselines, plugins and extra files. Worker processes only.

    ``families`` limits the packages imported to ``methods.<family>`` and
    ``baselines.<family>`` (a sweep needs only its task's family; importing
    every family's torch, scikit-learn and flow-matching code costs seconds
    per worker). Entry-point plugins, ``BENCH_PLUGIN_PATHS`` and
    ``extra_paths`` are always imported. ``None``: every family.
    """
    if families is None:
        packages = ["methods", "baselines"]
    else:
        packages = [f"{root}.{f}" for f in families for root in ("methods", "baselines")]
    if "methods" not in _discovered:  # "methods" is there once every family is imported
        for pkg in packages:
            if pkg not in _discovered:
                _discovered.add(pkg)
                _import_package_tree(pkg)
    if "entry-points" not in _discovered:
        _discovered.add("entry-points")
        for ep in entry_points(group="bench.plugins"):
            try:
                ep.load()
            except Exception as exc:
                DISCOVERY_ERRORS.append(DiscoveryError(f"entry point {ep.name}", _one_line(exc)))
    for p in [*plugin_paths(), *extra_paths]:
        import_path(p)
    return METHODS

