"""Naming and listing instances: id forms, tier grids, and the closed catalogue.

Every task names its instances with ids such as ``uncorrelated-n100-s0`` and
lists them per tier. This module holds what each task module used to write for
itself:

- :class:`IdForm` parses and formats ids from a template with typed fields,
  ``"{kind}-n{n}-s{seed}"``, and says what is wrong with a bad one in one line
  (the form expected, or the closest known value of a field);
- :func:`grid` spells a tier as the product of a few axes;
- :class:`Catalog` is the closed list of a task's instances: ids listed by no
  tier are refused with the closest listed ones;
- :class:`CatalogTask` is a :class:`~bench.task.Task` built on a catalogue: a
  family implements ``generate``, ``reference`` and ``evaluate``, and gets
  listing, id checks, cached read-only loading, digests and on-disk references
  (``bench new-task`` writes one; ``tasks/knapsack`` is the worked example).

>>> form = IdForm("demo", "{kind}-n{n}-s{seed}", kind=Choice(("a", "b")), n=Int(minimum=1), seed=Int())
>>> form.parse("a-n10-s0")
{'kind': 'a', 'n': 10, 'seed': 0}
>>> form.format(kind="b", n=5, seed=2)
'b-n5-s2'
"""

from __future__ import annotations

import itertools
import re
import string
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bench import holdout, wire
from bench.registry import UnknownNameError, unknown_message
from bench.task import Instance, InstanceSpec, Reference, Task

__all__ = ["Int", "Float", "Choice", "Text", "IdForm", "grid", "Catalog", "CatalogTask"]

#: How a holdout instance's id shows its seed field: ``h`` and 8 hex digits (:mod:`bench.holdout`).
_HOLDOUT_TAG = re.compile(r"h[0-9a-f]{8}(?:$|[^0-9a-f])")

_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?"


@dataclass(frozen=True)
class Int:
    """A non-negative decimal integer field, written without leading zeros.

    ``label`` names the field in the expected form (``<items>`` rather than
    ``<n>``); ``minimum`` is 0 or 1.
    """

    label: str | None = None
    minimum: int = 0

    def pattern(self) -> str:
        return "[1-9][0-9]*" if self.minimum >= 1 else "0|[1-9][0-9]*"

    def convert(self, text: str) -> int:
        return int(text)


@dataclass(frozen=True)
class Float:
    """A non-negative decimal number field (``0.02``, ``1e-3``), read with ``float``."""

    label: str | None = None

    def pattern(self) -> str:
        return _NUMBER

    def convert(self, text: str) -> float:
        return float(text)

    def text(self, value: float) -> str:
        return f"{value:g}"


@dataclass(frozen=True)
class Choice:
    """A field that takes one of ``values`` (lower-case words joined by ``-``).

    The id is matched with any such word first, so that a near miss is answered
    with the closest value (``unknown knapsack generator 'uncorelated'; did you
    mean 'uncorrelated'?``) rather than with the whole form. ``what`` names
    the field in that message (default: the field's name).
    """

    values: tuple[str, ...]
    what: str | None = None
    label: str | None = None

    def pattern(self) -> str:
        return "[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"

    def convert(self, text: str) -> str:
        return text


@dataclass(frozen=True)
class Text:
    """A free word field (``G12``, ``so3``): letters, digits and dots."""

    label: str | None = None

    def pattern(self) -> str:
        return "[A-Za-z0-9][A-Za-z0-9.]*"

    def convert(self, text: str) -> str:
        return text


FieldType = Int | Float | Choice | Text


class IdForm:
    """The form of a task's instance ids: a template with typed fields.

    Parameters
    ----------
    task
        The task's name, for messages (``malformed knapsack instance id ...``).
    template
        A :meth:`str.format` template whose fields are all named in ``fields``,
        e.g. ``"{kind}-n{n}-s{seed}"``. The literal text between fields is
        matched exactly.
    example
        An id of this form, quoted in messages; default: none.
    **fields
        The type of each field: :class:`Int`, :class:`Float`, :class:`Choice`
        or :class:`Text`.
    """

    def __init__(self, task: str, template: str, *, example: str | None = None, **fields: FieldType) -> None:
        parts = list(string.Formatter().parse(template))
        names = [name for _, name, _, _ in parts if name]
        if sorted(names) != sorted(fields) or len(set(names)) != len(names):
            raise ValueError(f"id template {template!r} must name each of the fields {sorted(fields)} once")
        self.task, self.template, self.example, self.fields = task, template, example, dict(fields)
        regex = "".join(
            re.escape(literal) + (f"(?P<{name}>{fields[name].pattern()})" if name else "")
            for literal, name, _, _ in parts
        )
        self._regex = re.compile(f"^{regex}$")

    def describe(self) -> str:
        """The expected form, for messages: ``'<kind>-n<items>-s<seed>', e.g. '...'``."""
        shown = "".join(
            literal + (f"<{self.fields[name].label or name}>" if name else "")
            for literal, name, _, _ in string.Formatter().parse(self.template)
        )
        return f"'{shown}'" + (f", e.g. {self.example!r}" if self.example else "")

    def _malformed(self, instance_id: object) -> UnknownNameError:
        choices = [
            f"<{f.label or name}> one of {', '.join(f.values)}"
            for name, f in self.fields.items()
            if isinstance(f, Choice)
        ]
        tail = f", with {'; '.join(choices)}" if choices else ""
        return UnknownNameError(
            f"malformed {self.task} instance id {instance_id!r}; expected {self.describe()}{tail}"
        )

    def parse(self, instance_id: str) -> dict[str, Any]:
        """The fields of ``instance_id``, converted to their types.

        Raises
        ------
        UnknownNameError
            (a ``KeyError``) for an id not of this form (the message gives the
            form), or a :class:`Choice` field with an unknown value (the
            message gives the closest values).
        """
        m = self._regex.match(instance_id) if isinstance(instance_id, str) else None
        if m is None:
            raise self._malformed(instance_id)
        out: dict[str, Any] = {}
        for name, f in self.fields.items():
            text = m[name]
            if isinstance(f, Choice) and text not in f.values:
                raise UnknownNameError(
                    f"{unknown_message(f'{self.task} {f.what or name}', text, f.values)} "
                    f"(in instance id {instance_id!r})"
                )
            try:
                out[name] = f.convert(text)
            except ValueError:
                raise self._malformed(instance_id) from None
        return out

    def matches(self, instance_id: object) -> bool:
        """Whether ``instance_id`` is of this form (field values unchecked)."""
        return isinstance(instance_id, str) and self._regex.match(instance_id) is not None

    def format(self, **values: Any) -> str:
        """The id of the given field values (the inverse of :meth:`parse`)."""
        missing = set(self.fields) - set(values)
        if missing:
            raise ValueError(f"id template {self.template!r} needs {sorted(missing)}")
        shown = {
            name: f.text(values[name]) if isinstance(f, Float) else values[name]
            for name, f in self.fields.items()
        }
        return self.template.format(**shown)


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """The product of ``axes``, first axis outermost: one dict of fields per instance.

    >>> grid(n=(10, 20), seed=(0, 1))
    [{'n': 10, 'seed': 0}, {'n': 10, 'seed': 1}, {'n': 20, 'seed': 0}, {'n': 20, 'seed': 1}]
    """
    names = list(axes)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*axes.values())]


class Catalog:
    """The closed list of a task's instances: an id form and the fields of each tier.

    Parameters
    ----------
    form
        How ids are written.
    tiers
        Tier name to the fields of its instances, in a stable order (see
        :func:`grid`). An instance may be listed by several tiers.
    validate
        Optional check of one instance's fields (raise ``ValueError`` with the
        reason); run on every listed instance when the catalogue is built, so a
        typo in a tier fails at import, not in a sweep.
    """

    def __init__(
        self,
        form: IdForm,
        tiers: Mapping[str, Sequence[Mapping[str, Any]]],
        validate: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> None:
        self.form = form
        self._tiers = {tier: [dict(fields) for fields in listed] for tier, listed in tiers.items()}
        self._ids: dict[str, list[str]] = {}
        self._fields: dict[str, dict[str, Any]] = {}
        for tier, listed in self._tiers.items():
            ids = []
            for fields in listed:
                if validate is not None:
                    validate(fields)
                iid = form.format(**fields)
                if form.parse(iid) != fields:
                    raise ValueError(f"tier {tier!r}: {fields} does not read back from its id {iid!r}")
                self._fields.setdefault(iid, fields)
                ids.append(iid)
            if len(set(ids)) != len(ids):
                raise ValueError(f"tier {tier!r} lists an instance twice")
            self._ids[tier] = ids

    @property
    def tiers(self) -> tuple[str, ...]:
        return tuple(self._tiers)

    def ids(self, tier: str) -> list[str]:
        """The ids of ``tier``, in its order.

        Raises
        ------
        ValueError
            For a tier the task does not have.
        """
        if tier not in self._ids:
            raise ValueError(f"unknown tier {tier!r}; tiers are {', '.join(self._ids)}")
        return list(self._ids[tier])

    def known(self) -> frozenset[str]:
        """Every listed id, all tiers."""
        return frozenset(self._fields)

    def fields(self, instance_id: str) -> dict[str, Any]:
        """The fields of a listed id (a fresh dict).

        Raises
        ------
        UnknownNameError
            (a ``KeyError``) for a malformed id (the form is given), or a well
            formed one that no tier lists (the closest listed ids are given).
        """
        if instance_id in self._fields:
            return dict(self._fields[instance_id])
        self.form.parse(instance_id)  # a malformed id or an unknown field value fails here
        raise UnknownNameError(unknown_message(f"{self.form.task} instance", instance_id, self._fields))


class CatalogTask(Task):
    """A task whose instances are a :class:`Catalog` and a generator: the family kit's base.

    A subclass sets ``meta`` and ``catalog`` and implements three hooks;
    listing, id checks, caching, read-only data and digests come from here.

    - :meth:`generate` builds an instance's data from its fields, split into
      what the method sees (``data``) and what only the task holds (``private``);
    - :meth:`reference` computes the trusted references (an exact optimum, a
      converged solve, a certified bound) from the same fields and data;
    - :meth:`evaluate` (from :class:`~bench.task.Task`) recomputes every metric
      from a solution; :mod:`bench.solutions` has the generic checks.

    ``reference_cache = True`` keeps computed references on disk
    (:func:`bench.cache.cached_json`), keyed by the task's version, the id, the
    digest of the generated instance and the digest of the task's source code
    (:func:`bench.cache.source_digest`), for references that take seconds.
    """

    catalog: ClassVar[Catalog]
    #: The public tier whose instances the ``holdout`` tier mirrors, with secret seeds (:mod:`bench.holdout`).
    holdout_base: ClassVar[str] = "standard"
    #: The id field the secret replaces (``None``: the task has no holdout tier).
    holdout_field: ClassVar[str | None] = "seed"
    #: Keep computed references on disk (for references that are slow to compute).
    reference_cache: ClassVar[bool] = False
    #: Private entries that are timings measured on this machine (a reference solver's wall
    #: time): left out of the digest, which names the instance, not the machine that timed it.
    measured: ClassVar[tuple[str, ...]] = ()
    #: How many loaded instances each process keeps.
    cache_size: ClassVar[int] = 256

    # -- hooks -----------------------------------------------------------------
    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        """The spec of one instance; by default its params are its fields and it has no tags."""
        return InstanceSpec(id=self.catalog.form.format(**fields), params=dict(fields))

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(data, private)`` of the instance with these fields; deterministic in ``fields``."""
        raise NotImplementedError

    def reference(self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]) -> dict[str, Reference]:
        """The trusted references of one instance, by name (``"optimal"``, ``"random"``...)."""
        raise NotImplementedError

    # -- provided --------------------------------------------------------------
    def instances(self, tier: str) -> list[InstanceSpec]:
        """Instances of ``tier``, in the catalogue's order (``holdout``: see :meth:`holdout_instances`)."""
        if tier == holdout.TIER:
            return self.holdout_instances()
        return [self.spec(self.catalog.fields(i)) for i in self.catalog.ids(tier)]

    def budget(self, tier: str, spec: InstanceSpec) -> float:
        """The tier's budget; the holdout tier has its base tier's."""
        return super().budget(self.holdout_base if tier == holdout.TIER else tier, spec)

    def _holdout(self) -> dict[str, tuple[dict[str, Any], InstanceSpec]]:
        """Public holdout id -> (its secret fields, its public spec); needs the secret (trusted side only)."""
        field = self.holdout_field
        if field is None or not isinstance(self.catalog.form.fields.get(field), Int):
            raise holdout.HoldoutUnavailable(
                f"task {self.meta.name} has no holdout tier (its instance ids have no integer {field or 'seed'} field)"
            )
        key = holdout.secret()
        cached = self.__dict__.get("_holdout_map")
        if cached is not None and cached[0] == key:
            return cached[1]
        out: dict[str, tuple[dict[str, Any], InstanceSpec]] = {}
        for base_id in self.catalog.ids(self.holdout_base):
            fields = self.catalog.fields(base_id)
            seed, tag = holdout.derive(self.meta.name, self.meta.version, base_id)
            public_id = self.catalog.form.template.format(**{**self._shown(fields), field: f"h{tag}"})
            fields[field] = seed
            spec = self.spec(dict(fields))
            params = {k: v for k, v in spec.params.items() if k != field}
            out[public_id] = (fields, InstanceSpec(id=public_id, params=params, tags=(*spec.tags, holdout.TIER)))
        self.__dict__["_holdout_map"] = (key, out)
        return out

    def _shown(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {n: f.text(fields[n]) if isinstance(f, Float) else fields[n] for n, f in self.catalog.form.fields.items()}

    def _holdout_lookup(self, instance_id: str) -> tuple[dict[str, Any], InstanceSpec] | None:
        """The holdout instance ``instance_id`` names, or None where it names none."""
        if self.holdout_field is None or not _HOLDOUT_TAG.search(instance_id):
            return None
        try:
            held = self._holdout()
        except holdout.HoldoutUnavailable as why:
            raise UnknownNameError(f"{instance_id!r} looks like a holdout instance id, and {why}") from None
        if instance_id not in held:
            raise UnknownNameError(f"unknown {self.meta.name} holdout instance {instance_id!r} (not made by this secret)")
        return held[instance_id]

    def holdout_instances(self) -> list[InstanceSpec]:
        """The ``holdout`` tier: the base tier's instances with seeds derived from the maintainers' secret.

        Raises
        ------
        bench.holdout.HoldoutUnavailable
            Without ``BENCH_HOLDOUT_SECRET``, or for a task whose ids have no seed field.
        """
        return [spec for _, spec in self._holdout().values()]

    def all_instances(self) -> dict[str, InstanceSpec]:
        """Every listed instance by id."""
        return {i: self.spec(self.catalog.fields(i)) for i in sorted(self.catalog.known())}

    def parse_instance_id(self, instance_id: str) -> dict[str, Any]:
        """The fields of a listed id; :class:`UnknownNameError` otherwise (see :meth:`Catalog.fields`)."""
        return self.catalog.fields(instance_id)

    def load(self, instance_id: str) -> Instance:
        """Generate one instance and its references (cached in-process; arrays read-only).

        Raises
        ------
        UnknownNameError
            (a ``KeyError``) for a malformed id or one that no tier lists.
        """
        cache = self.__dict__.setdefault("_loaded", OrderedDict())
        if instance_id in cache:
            cache.move_to_end(instance_id)
            return cache[instance_id]
        held_out = False
        try:
            fields = self.catalog.fields(instance_id)
            spec = self.spec(fields)
        except UnknownNameError:
            found = self._holdout_lookup(instance_id)
            if found is None:
                raise
            (fields, spec), held_out = found, True
        data, private = self.generate(dict(fields))
        for part in (data, private):
            for value in part.values():
                if isinstance(value, np.ndarray):
                    # Cached and shared: a caller must not change it for every later caller.
                    value.setflags(write=False)
        named = {k: v for k, v in private.items() if k not in self.measured}
        digest = wire.digest({"params": spec.params, "data": data, "private": named})
        if self.reference_cache and not held_out:  # a holdout instance's references stay in memory
            from bench.cache import cache_dir, cached_json, source_digest

            code = source_digest(type(self).__module__)
            path = cache_dir(self.meta.family, "references") / f"{instance_id}-v{self.meta.version}-{digest[:16]}-{code}.json"
            raw = cached_json(path, lambda: {k: r.model_dump() for k, r in self.reference(fields, data, private).items()})
            references = {k: Reference.model_validate(v) for k, v in raw.items()}
        else:
            references = self.reference(fields, data, private)
        inst = Instance(
            id=instance_id,
            params=dict(spec.params),
            data=data,
            private=private,
            references=references,
            tags=spec.tags,
            digest=digest,
        )
        cache[instance_id] = inst
        while len(cache) > self.cache_size:
            cache.popitem(last=False)
        return inst

    def clear_cache(self) -> None:
        """Forget the loaded instances of this process (the disk cache stays)."""
        self.__dict__.pop("_loaded", None)
