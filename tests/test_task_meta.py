"""bench.task: Normalization.apply and strict TaskMeta validation."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from bench.task import Metric, Normalization, Paper, Reference, TaskMeta


def ref(v: float) -> Reference:
    return Reference(value=v, source="test")


REFS = {"random": ref(10.0), "best_known": ref(30.0)}


# ----------------------------------------------------------------------------- Normalization


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0.0, 0.0), (2.5, 0.25), (10.0, 1.0), (12.0, 1.2), (-5.0, -0.5)],
)
def test_linear_with_constants(value, expected):
    assert Normalization(zero=0.0, one=10.0).apply(value, {}) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(10.0, 0.0), (25.0, 0.75), (30.0, 1.0), (40.0, 1.5)],  # not clipped
)
def test_linear_with_reference_names(value, expected):
    norm = Normalization(zero="random", one="best_known")
    assert norm.apply(value, REFS) == pytest.approx(expected)


def test_linear_mixing_a_constant_and_a_reference():
    assert Normalization(zero=0.0, one="best_known").apply(15.0, REFS) == pytest.approx(0.5)
    assert Normalization(zero="random", one=20.0).apply(15.0, REFS) == pytest.approx(0.5)


def test_linear_for_minimisation_runs_the_other_way():
    # error metric: zero is the bad end (random = 30), one the good end (best = 10)
    norm = Normalization(zero=30.0, one=10.0)
    assert norm.apply(30.0, {}) == 0.0
    assert norm.apply(15.0, {}) == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.0, 0.0), (1e-2, 0.5), (1e-4, 1.0), (1e-5, 1.25), (10.0, -0.25)],
)
def test_log(value, expected):
    norm = Normalization(kind="log", zero=1.0, one=1e-4)
    assert norm.apply(value, {}) == pytest.approx(expected)


def test_log_with_references():
    norm = Normalization(kind="log", zero="random", one="best_known")
    refs = {"random": ref(100.0), "best_known": ref(1.0)}
    assert norm.apply(10.0, refs) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("norm", "value", "refs"),
    [
        (Normalization(zero="random", one="best_known"), 20.0, {"random": ref(10.0)}),  # missing one
        (Normalization(zero="random", one="best_known"), 20.0, {"best_known": ref(30.0)}),  # missing zero
        (Normalization(zero="random", one="best_known"), 20.0, {}),
        (Normalization(zero=1.0, one=1.0), 1.0, {}),  # zero-width range
        (Normalization(zero=0.0, one=1.0), float("nan"), {}),
        (Normalization(zero=0.0, one=1.0), float("inf"), {}),
        (Normalization(zero=0.0, one=1.0), None, {}),
        (Normalization(kind="log", zero=1.0, one=1e-3), 0.0, {}),  # log of 0
        (Normalization(kind="log", zero=1.0, one=1e-3), -1.0, {}),
        (Normalization(kind="log", zero=0.0, one=1e-3), 0.5, {}),
        (Normalization(kind="log", zero=1.0, one=1.0), 0.5, {}),
        (Normalization(kind="log", zero="random", one=1e-3), 0.5, {}),
    ],
)
def test_undefined_normalisation_is_nan(norm, value, refs):
    assert math.isnan(norm.apply(value, refs))


def test_normalization_validation():
    with pytest.raises(ValidationError):
        Normalization(kind="sqrt", zero=0.0, one=1.0)
    with pytest.raises(ValidationError, match="extra"):
        Normalization(zero=0.0, one=1.0, clip=True)
    with pytest.raises(ValidationError):
        Normalization(zero=0.0)  # one is required


# ----------------------------------------------------------------------------- TaskMeta


def meta_fields(**overrides):
    fields = dict(
        name="maxcut",
        version="1",
        family="maxcut",
        description="Max-cut on sparse graphs.",
        metrics=[Metric(name="cut", direction="max", unit="edges"), Metric(name="ratio", direction="max")],
        primary="ratio",
        normalization=Normalization(zero="random", one="best_known"),
    )
    fields.update(overrides)
    return fields


def test_valid_meta_and_defaults():
    m = TaskMeta(**meta_fields())
    assert m.primary == "ratio"
    assert m.metric("cut").unit == "edges"
    assert m.budgets == {"smoke": 10.0, "standard": 60.0, "full": 600.0}
    assert m.interactive is False and m.paper is None and m.superseded_by is None
    with pytest.raises(KeyError):
        m.metric("nope")


def test_meta_from_plain_dicts():
    m = TaskMeta.model_validate(
        {
            **meta_fields(),
            "metrics": [{"name": "ratio", "direction": "max"}],
            "normalization": {"kind": "linear", "zero": 0, "one": 1},
            "paper": {"title": "T", "authors": ["A"]},
        }
    )
    assert m.paper is not None and m.paper.venue == "ICML 2025"
    assert isinstance(m.paper, Paper)


def test_primary_must_be_a_metric():
    with pytest.raises(ValidationError, match="primary metric 'gap' is not one of"):
        TaskMeta(**meta_fields(primary="gap"))


def test_duplicate_metric_names_rejected():
    with pytest.raises(ValidationError, match="duplicate metric names"):
        TaskMeta(**meta_fields(metrics=[Metric(name="ratio", direction="max"), Metric(name="ratio", direction="min")]))


def test_extra_field_rejected():
    with pytest.raises(ValidationError, match="extra"):
        TaskMeta(**meta_fields(homepage="https://example.org"))


@pytest.mark.parametrize("name", ["MaxCut", "max cut", "-maxcut", "", "max.cut"])
def test_bad_names_rejected(name):
    with pytest.raises(ValidationError):
        TaskMeta(**meta_fields(name=name))


@pytest.mark.parametrize("name", ["maxcut", "max-cut", "max_cut2", "0cut"])
def test_good_names_accepted(name):
    assert TaskMeta(**meta_fields(name=name)).name == name


def test_unknown_budget_tier_rejected():
    with pytest.raises(ValidationError):
        TaskMeta(**meta_fields(budgets={"huge": 5.0}))


def test_metric_direction_must_be_max_or_min():
    with pytest.raises(ValidationError):
        Metric(name="x", direction="up")


def test_meta_is_frozen():
    m = TaskMeta(**meta_fields())
    with pytest.raises(ValidationError):
        m.version = "2"  # type: ignore[misc]
