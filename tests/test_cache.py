"""bench.cache: entries keyed by the code that computes them, atomic, recomputed when unreadable."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from bench.cache import cached_json, cached_npz, source_digest

FAMILY = '''
"""A one-instance family whose reference is a module constant."""
from bench.instances import Catalog, CatalogTask, IdForm, Int, grid
from bench.task import Metric, Normalization, Reference, TaskMeta

REF = {ref}
CALLS = []

CATALOG = Catalog(IdForm("cachefam", "c{{n}}", example="c1", n=Int()), {{"smoke": grid(n=(1,))}})


class CacheTask(CatalogTask):
    meta = TaskMeta(
        name="cachefam", version="1", family="cachefam", description="cache test",
        metrics=[Metric(name="m", direction="max", description="m")], primary="m",
        normalization=Normalization(zero=0.0, one=1.0),
    )
    catalog = CATALOG
    reference_cache = True

    def generate(self, fields):
        return {{"n": fields["n"]}}, {{}}

    def reference(self, fields, data, private):
        CALLS.append(1)
        return {{"ref": Reference(value=REF, source="the module constant")}}

    def evaluate(self, instance, solution):
        return {{"m": 0.0}}
'''


@pytest.fixture()
def family(tmp_path, monkeypatch):
    """A package ``cachepkg.fam`` on sys.path, with a helper module beside its __init__."""
    pkg = tmp_path / "src" / "cachepkg" / "fam"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text(FAMILY.format(ref=1.0))
    (pkg / "helper.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))
    source_digest.cache_clear()
    yield pkg
    source_digest.cache_clear()
    for name in [m for m in sys.modules if m.startswith("cachepkg")]:
        del sys.modules[name]


def test_source_digest_covers_every_file_of_the_family_package(family):
    first = source_digest("cachepkg.fam")
    importlib.import_module("cachepkg.fam.helper")
    assert source_digest("cachepkg.fam.helper") == first  # a module of the family: the family's digest
    (family / "helper.py").write_text("X = 2\n")
    source_digest.cache_clear()
    assert source_digest("cachepkg.fam") != first
    with pytest.raises(ModuleNotFoundError):
        source_digest("cachepkg.nope")


def test_a_reference_cached_under_old_code_is_not_served_after_an_edit(family):
    """The version stays "1"; the edit alone must give the new reference (it once did not)."""
    mod = importlib.import_module("cachepkg.fam")
    assert mod.CacheTask().load("c1").references["ref"].value == 1.0
    assert mod.CacheTask().load("c1").references["ref"].value == 1.0  # from the cache
    assert len(mod.CALLS) == 1
    (family / "__init__.py").write_text(FAMILY.format(ref=2.0))
    source_digest.cache_clear()
    mod = importlib.reload(mod)
    assert mod.CacheTask().load("c1").references["ref"].value == 2.0
    assert len(mod.CALLS) == 1  # the reloaded module computed it afresh


def test_unreadable_entries_are_computed_again(tmp_path):
    path = tmp_path / "a.npz"
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(3.0)}

    np.testing.assert_array_equal(cached_npz(path, compute)["x"], np.arange(3.0))
    np.testing.assert_array_equal(cached_npz(path, compute)["x"], np.arange(3.0))
    assert len(calls) == 1
    path.write_bytes(path.read_bytes()[:20])  # truncated, as by a kill -9 of a non-atomic writer
    np.testing.assert_array_equal(cached_npz(path, compute)["x"], np.arange(3.0))
    assert len(calls) == 2
    jpath = tmp_path / "b.json"
    jpath.write_text("{not json")
    assert cached_json(jpath, lambda: {"v": 1}) == {"v": 1}
    assert cached_json(jpath, lambda: {"v": 2}) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz", "b.json"]


def test_the_logistic_reference_is_keyed_by_data_and_code(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path))
    from bench.registry import get_task

    type(get_task("log-concave-sampling"))().load("logreg-d10-k4-s0")  # a fresh object: no in-process copy
    (entry,) = (tmp_path / "sampling" / "mala").iterdir()
    assert entry.name.endswith(f"-{source_digest('tasks.sampling')}.npz")
    assert entry.name.startswith("logreg-d10-k4-s0-")
