"""The Streamlit app renders from bundles (data only), and has an empty state."""

from __future__ import annotations

import pytest
from conftest import ROOT, TOY_METHODS

pytestmark = pytest.mark.slow

APP = str(ROOT / "leaderboard" / "app.py")


def _app(monkeypatch, results):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("BENCH_RESULTS", str(results))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_empty_results_show_a_helpful_state(monkeypatch, tmp_path):
    at = _app(monkeypatch, tmp_path / "nothing")
    assert any("No published results" in i.value for i in at.info)


def test_published_bundle_renders(monkeypatch, tmp_path, cli, store):
    rc, _, err = cli("run", "--task", "toy-mean", "--plugin", TOY_METHODS, "--method", "toy-sample-mean", "toy-noisy", "toy-first",
                     "--seeds", "2", "--store", store, "--no-progress")  # fmt: skip
    assert rc == 0, err
    rc, _, err = cli("publish", "--task", "toy-mean", "--store", store, "--results", tmp_path / "results")
    assert rc == 0, err
    broken = tmp_path / "results" / "toy-mean" / "20260101-submitted-broken"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text("{not json")
    at = _app(monkeypatch, tmp_path / "results")
    assert any("20260101-submitted-broken" in w.value and "skipped" in w.value for w in at.warning)
    table = at.dataframe[0].value
    assert set(table["method"]) == {"toy-sample-mean", "toy-noisy", "toy-first"}
    claims = at.dataframe[-1].value
    assert dict(zip(claims["claim"], claims["verdict"], strict=True))["gpu-speed"] == "not testable here"
