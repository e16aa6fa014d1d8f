"""Every page of the Streamlit app, with streamlit.testing (AppTest), on real fixture bundles."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from conftest import ROOT
from leaderboard_fixtures import lb_source, rehash, results_copy  # noqa: F401

pytestmark = pytest.mark.slow

APP = str(ROOT / "leaderboard" / "app.py")
XSS = "<script>window.__xss=1</script>"
XSS_IMG = "<img src=x onerror=window.__xss=2>"


def _app(monkeypatch, results=None, view="Overview", store=None, **params):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("BENCH_RESULTS", str(results))
    if store:
        monkeypatch.setenv("BENCH_LB_STORE", str(store))
    else:
        monkeypatch.delenv("BENCH_LB_STORE", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["view"] = view
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame(el) -> pd.DataFrame:
    v = el.value
    return v.data if hasattr(v, "data") and not isinstance(v, pd.DataFrame) else v


def _texts(at) -> str:
    return "\n".join([t.value for t in at.text] + [m.value for m in at.markdown] + [c.value for c in at.caption])


def _overview_rows(at) -> pd.DataFrame:
    """The Overview's task rows: one table per area, in page order."""
    frames = [_frame(d) for d in at.dataframe]
    return pd.concat([f for f in frames if "paper's method" in f.columns], ignore_index=True)


def _agg(at) -> pd.DataFrame:
    return next(_frame(d) for d in at.dataframe if "role" in _frame(d).columns)


@pytest.mark.parametrize("view", ["Overview", "Task", "Claims", "Method", "Provenance"])
def test_empty_results_show_a_helpful_state(monkeypatch, tmp_path, view):
    at = _app(monkeypatch, tmp_path / "nothing", view)
    assert any("No results to show" in i.value and "bench run" in i.value for i in at.info)


def test_overview_rows_and_role_aggregate(monkeypatch, lb_source):  # noqa: F811
    at = _app(monkeypatch, lb_source["results"])
    rows = _overview_rows(at)
    rows["name"] = rows["task"].str.extract(r"task=([^&]+)")[0]  # the task column links to the task page
    rows = rows.set_index("name")
    assert set(rows.index) == {"toy-mean", "knapsack"}
    assert rows.loc["toy-mean", "task"] == "./?view=Task&task=toy-mean"
    assert rows.loc["toy-mean", "paper's method"] == "toy-sample-mean"
    assert rows.loc["knapsack", "paper's method"] == "–" and rows.loc["knapsack", "its rank"] == "no method"
    assert rows.loc["knapsack", "best (mean rank)"] == "dp"
    assert "✓1" in rows.loc["toy-mean", "verdicts"]  # one claim confirmed
    assert " vs " in rows.loc["toy-mean", "paper's method vs best baseline"]
    agg = _agg(at).set_index("role")
    assert pd.isna(agg.loc["paper's method", "iqm"]) and agg.loc["paper's method", "missing"] == "knapsack"
    assert agg.loc["best baseline", "tasks"] == 2
    # Filter: aggregate over toy-mean alone -> the paper's role is no longer missing.
    at.multiselect(key="agg_tasks").set_value(["toy-mean"]).run()
    agg = _agg(at).set_index("role")
    assert agg.loc["paper's method", "tasks"] == 1 and not pd.isna(agg.loc["paper's method", "iqm"])


def test_overview_is_grouped_by_area_with_search_and_area_filter(monkeypatch, lb_source):  # noqa: F811
    from leaderboard.data import load_results
    from leaderboard.digest import task_area

    data = load_results(lb_source["results"])
    areas = {t: task_area(data.tasks[t]) for t in data.tasks}
    at = _app(monkeypatch, lb_source["results"])
    heads = [h.value for h in at.subheader]
    want = [f"{a} ({sum(1 for v in areas.values() if v == a)})" for a in sorted(set(areas.values()))]
    assert heads[: len(want)] == want and heads[len(want)] == "Across tasks, by role"
    assert "2 of 2 tasks" in _texts(at)
    at.text_input(key="ov_search").input("TOY").run()
    assert set(_overview_rows(at)["task"].str.extract(r"task=([^&]+)")[0]) == {"toy-mean"}
    assert "1 of 2 tasks" in _texts(at)
    at.text_input(key="ov_search").input("no such task").run()
    assert any("No task matches" in i.value for i in at.info)
    at.text_input(key="ov_search").input("").run()
    at.multiselect(key="ov_areas").set_value([areas["knapsack"]]).run()
    assert set(_overview_rows(at)["task"].str.extract(r"task=([^&]+)")[0]) == {"knapsack"}


def test_superseded_bundles_live_on_the_provenance_page_only(monkeypatch, results_copy):  # noqa: F811
    knap = next((results_copy / "knapsack").iterdir())
    again = knap.parent / "29990101-maintainers-rerun"
    shutil.copytree(knap, again)
    manifest = json.loads((again / "manifest.json").read_text())
    (again / "manifest.json").write_text(json.dumps({**manifest, "bundle": again.name, "supersedes": [knap.name]}))
    rehash(again)
    at = _app(monkeypatch, results_copy)
    assert knap.name not in _texts(at)  # no paragraph of bundle ids on top of the pages
    at = _app(monkeypatch, results_copy, "Provenance")
    t = _frame(at.dataframe[0]).set_index("bundle")
    assert t.loc[knap.name, "state"] == "superseded (provenance only)" and t.loc[knap.name, "superseded by"] == again.name
    assert t.loc[again.name, "state"] == "counted" and "1 of them superseded" in _texts(at)


def test_task_page_table_filters_and_paper_rows(monkeypatch, lb_source):  # noqa: F811
    at = _app(monkeypatch, lb_source["results"], "Task", task="toy-mean")
    table = _frame(at.dataframe[0])
    ours = table[table["row"] == "measured here"]
    assert set(ours["method"]) == {"toy-sample-mean", "toy-noisy", "toy-first", "toy-refine"}
    paper = table[table["row"] == "reported by the paper"]
    assert set(paper["instance"]) == {"mu0", "mu1"} and set(paper["kind"]) == {"paper-reported"}
    assert paper["runs"].isna().all()  # no seeds, no CI: they are not our runs
    assert {"hardware", "command", "ok", "skipped"} <= set(table.columns)
    assert int(ours.loc[ours["method"] == "toy-first", "skipped"].sum()) == 2
    assert len(at.get("download_button")) == 2
    head = [m.value for m in at.markdown if m.value.startswith("Who wins")]
    assert len(head) == 1 and len(head[0].split("  \n")) == 3  # the three-line headline comes first
    plain = head[0].replace("\\", "")  # markdown escapes, undone
    assert "The paper's method toy-sample-mean: rank " in plain and "Its claims: 1 confirmed" in plain
    text = _texts(at)
    assert "Friedman" in text and "Holm" in text
    # one plot at a time: the CD diagram and the Pareto plot by default, both profiles on demand
    charts = len(at.get("vega_lite_chart"))
    assert charts == 2
    at.radio(key="plot_toy-mean").set_value("performance profiles").run()
    assert len(at.get("vega_lite_chart")) == charts + 1
    # Filter on method kind: baselines only.
    at.multiselect(key="kind_toy-mean").set_value(["baseline"]).run()
    table = _frame(at.dataframe[0])
    assert "toy-sample-mean" not in set(table.loc[table["row"] == "measured here", "method"])
    # Filter on the methods themselves.
    at.multiselect(key="methods_toy-mean").set_value(["toy-noisy", "toy-refine"]).run()
    table = _frame(at.dataframe[0])
    assert set(table.loc[table["row"] == "measured here", "method"]) == {"toy-noisy", "toy-refine"}


def test_task_page_instance_parameter_and_tag_filters(monkeypatch, lb_source):  # noqa: F811
    at = _app(monkeypatch, lb_source["results"], "Task", task="knapsack")
    table = _frame(at.dataframe[0])
    assert set(table["instance"]) == {"uncorrelated-n20-s0", "strongly-correlated-n20-s0"}
    at.multiselect(key="iparam.kind_knapsack").set_value(["uncorrelated"]).run()
    assert set(_frame(at.dataframe[0])["instance"]) == {"uncorrelated-n20-s0"}
    at.multiselect(key="iparam.kind_knapsack").set_value([]).run()
    at.multiselect(key="tags_knapsack").set_value(["strongly-correlated"]).run()
    assert set(_frame(at.dataframe[0])["instance"]) == {"strongly-correlated-n20-s0"}


def test_claims_page_verdicts_and_evidence(monkeypatch, lb_source):  # noqa: F811
    at = _app(monkeypatch, lb_source["results"], "Claims")
    v = _frame(at.dataframe[0]).set_index("claim")
    assert v.loc["gpu-speed", "verdict"] == "not testable here"
    assert v.loc["mean-accurate", "verdict"] == "confirmed"
    assert v.loc["mean-accurate", "statement"] == "The sample mean is within 0.5 of the true mean."
    detail = at.selectbox(key="claims_detail")
    detail.select(next(o for o in detail.options if "mean-accurate" in o)).run()
    assert "evidence: 6 runs" in _texts(at)  # 3 instances x 2 seeds of toy-sample-mean
    bundle = next((lb_source["results"] / "toy-mean").iterdir()).name
    # which snapshot of the claims is shown (the caption is markdown, so its dashes are escaped)
    assert any("Claims as recorded at publish time" in c.value and bundle.rsplit("-", 1)[1] in c.value for c in at.caption)
    at.multiselect(key="claims_verdicts").set_value(["not testable here"]).run()
    assert set(_frame(at.dataframe[0])["verdict"]) == {"not testable here"}


def test_method_page_provenance_and_commands(monkeypatch, lb_source):  # noqa: F811
    at = _app(monkeypatch, lb_source["results"], "Method", task="knapsack", method="greedy")
    prov = _frame(at.dataframe[0])
    assert set(prov["origin"]) == {"rerun by the maintainers"} and prov["runs"].sum() == 4
    assert prov["git commit"].str.len().gt(0).all() and prov["hardware"].str.len().gt(0).all()
    cmds = _frame(at.dataframe[1])
    assert cmds["command"].str.startswith("python -m bench run --task knapsack --tier smoke --method greedy").all()
    assert "Deviations" in _texts(at)
    assert any(t.value.startswith("sweep ") and "bench run --task knapsack" in t.value for t in at.text)
    at = _app(monkeypatch, lb_source["results"], "Method", task="toy-mean", method="toy-noisy")
    assert set(_frame(at.dataframe[0])["origin"]) == {"submitted"}
    assert "development runs" not in _texts(at)
    # a method that declares development runs says where they were
    at = _app(monkeypatch, lb_source["results"], "Method", task="toy-mean", method="toy-refine")
    assert "development runs (settings chosen there; never published for this version): master seed 5 on n100-s1" in _texts(at)


def test_submit_page_is_instructions_only(monkeypatch, tmp_path):
    at = _app(monkeypatch, tmp_path / "nothing", "Submit")
    text = _texts(at)
    assert "never runs uploaded code" in text and "bench validate" in text and "bench publish" in text
    assert not at.get("file_uploader")


def test_corrupted_and_foreign_bundles_are_named_and_skipped(monkeypatch, results_copy):  # noqa: F811
    broken = results_copy / "toy-mean" / "20260101-submitted-broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")
    foreign = results_copy / "knapsack" / "20260101-submitted-foreign"
    foreign.mkdir()
    (foreign / "manifest.json").write_text(json.dumps({"schema_version": 99, "task": "knapsack"}))
    at = _app(monkeypatch, results_copy)
    warns = [w.value for w in at.warning]
    assert any("20260101-submitted-broken" in w and "skipped" in w for w in warns)
    assert any("20260101-submitted-foreign" in w and "skipped" in w for w in warns)
    assert len(_overview_rows(at)) == 2  # the good bundles still show


def _forge(results_dir, **changes):
    """Rewrite the toy-mean bundle's records in place (a hostile or foreign submission)."""
    path = next((results_dir / "toy-mean").glob("*/records.parquet"))
    df = pd.read_parquet(path)
    for col, fn in changes.items():
        df[col] = fn(df)
    df.to_parquet(path, index=False)
    rehash(path.parent)
    return path.parent


def test_markup_in_bundle_fields_is_shown_as_text(monkeypatch, results_copy):  # noqa: F811
    bdir = _forge(
        results_copy,
        method=lambda d: d["method"].where(d["method"] != "toy-noisy", XSS),
        reason=lambda d: XSS_IMG,
    )
    claims = json.loads((bdir / "claims.json").read_text())
    claims["claims"][0]["statement"] = f"**bold** {XSS} [link](javascript:alert(1))"
    (bdir / "claims.json").write_text(json.dumps(claims))
    rehash(bdir)
    for view, params in [("Task", {"task": "toy-mean"}), ("Claims", {}), ("Method", {"task": "toy-mean", "method": XSS}), ("Overview", {})]:
        at = _app(monkeypatch, results_copy, view, **params)
        for m in at.markdown:  # markdown only ever gets escaped text
            assert "<script" not in m.value and "<img" not in m.value and "](javascript" not in m.value
    at = _app(monkeypatch, results_copy, "Task", task="toy-mean")
    assert XSS in set(_frame(at.dataframe[0])["method"])  # shown, literally, as data
    at = _app(monkeypatch, results_copy, "Claims")
    detail = at.selectbox(key="claims_detail")
    detail.select(next(o for o in detail.options if claims["claims"][0]["id"] in o)).run()
    assert any(XSS in t.value for t in at.text)
    for m in at.markdown:
        assert "<script" not in m.value and "](javascript" not in m.value
    at = _app(monkeypatch, results_copy, "Provenance")
    assert not at.exception


def test_rows_from_different_machines_say_so(monkeypatch, results_copy):  # noqa: F811
    _forge(results_copy, **{"env.cpu_model": lambda d: d["env.cpu_model"].where(d["rep"] == 0, "Other CPU 9000")})
    at = _app(monkeypatch, results_copy, "Task", task="toy-mean")
    assert any("different machines" in w.value and "Other CPU 9000" in w.value for w in at.warning)
    table = _frame(at.dataframe[0])
    assert table.loc[table["row"] == "measured here", "hardware"].str.contains("Other CPU 9000").all()
    at = _app(monkeypatch, results_copy, "Method", task="toy-mean", method="toy-noisy")
    assert any("not comparable" in w.value for w in at.warning)


def test_local_store_mode(monkeypatch, lb_source, tmp_path):  # noqa: F811
    from bench.cli import export_store_meta

    store = tmp_path / "runs"
    shutil.copytree(lb_source["store"], store)
    export_store_meta(str(store))
    at = _app(monkeypatch, tmp_path / "nothing", "Overview", store=store)
    assert "local run store" in _texts(at)
    assert len(_overview_rows(at)) == 2
    at = _app(monkeypatch, tmp_path / "nothing", "Method", store=store, task="toy-mean", method="toy-noisy")
    assert set(_frame(at.dataframe[0])["origin"]) == {"local (not published)"}


def test_an_unreadable_claim_is_reported_not_fatal(monkeypatch, results_copy):  # noqa: F811
    cpath = next((results_copy / "toy-mean").glob("*/claims.json"))
    claims = json.loads(cpath.read_text())
    claims["claims"][0]["surprise"] = 1  # a field the schema does not know
    cpath.write_text(json.dumps(claims))
    rehash(cpath.parent)
    at = _app(monkeypatch, results_copy, "Claims")
    v = _frame(at.dataframe[0]).set_index("claim")
    assert v.loc["mean-accurate", "verdict"] == "unreadable claim"
    assert v.loc["gpu-speed", "verdict"] == "not testable here"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the refused background preload
def test_the_default_task_page_comes_from_the_digests_without_reading_a_record(monkeypatch, results_copy):  # noqa: F811
    """A task page on its preferred tier, unfiltered, draws everything from the digest files; a filter reads the records."""
    import threading

    import leaderboard.data
    from bench.bundle import load_bundles

    reads = []

    def refuse(*args, **kwargs):
        reads.append(threading.current_thread().name)
        raise AssertionError("the default task page read the records")

    monkeypatch.setattr(leaderboard.data, "load_bundles", refuse)
    at = _app(monkeypatch, results_copy, "Task", task="toy-mean", plot="performance profiles")
    assert [r for r in reads if r != "bench-lb-preload"] == []  # only the background preload may try
    table = _frame(at.dataframe[0])
    ours = table[table["row"] == "measured here"]
    assert set(ours["method"]) == {"toy-sample-mean", "toy-noisy", "toy-first", "toy-refine"}
    assert set(table.loc[table["row"] == "reported by the paper", "instance"]) == {"mu0", "mu1"}  # from the claims bundle
    assert any(m.value.startswith("Who wins") for m in at.markdown) and "Friedman" in _texts(at)
    assert len(at.get("vega_lite_chart")) == 3  # the CD diagram and both profiles
    options = {w.label: w.options for w in at.multiselect}
    assert options["method kind"] == ["baseline", "method"] and "toy-noisy" in options["methods"]
    at.radio(key="plot_toy-mean").set_value("Pareto: time vs quality").run()
    assert not at.exception and [r for r in reads if r != "bench-lb-preload"] == []
    # a filter needs the records: now they are read (and here refused)
    at.multiselect(key="kind_toy-mean").set_value(["baseline"]).run()
    assert [r for r in reads if r != "bench-lb-preload"] and at.exception
    # with the records readable, the same filter shows the baselines only
    monkeypatch.setattr(leaderboard.data, "load_bundles", load_bundles)
    at.multiselect(key="kind_toy-mean").set_value(["baseline"]).run()
    assert not at.exception
    table = _frame(at.dataframe[0])
    assert set(table.loc[table["row"] == "measured here", "kind"]) == {"baseline"}


def test_privacy_table_names_a_violating_method_in_a_banner():
    from streamlit.testing.v1 import AppTest

    def page():
        from leaderboard.views import privacy_table

        row = {"method": "m", "kind": "method", "mechanism": "laplace", "accountant": "pure-dp", "runs": 3,
               "declared_delta": 0.0, "max_detectable": 3.3}  # fmt: skip
        privacy_table([
            {**row, "instance": "audit-a", "declared_epsilon": "1", "eps_lb": 2.5, "violations": 1, "status": "violates its declared epsilon"},
            {**row, "method": "ok", "instance": "audit-a", "declared_epsilon": "1", "eps_lb": 0.0, "violations": 0, "status": "no violation found"},
        ])  # fmt: skip

    at = AppTest.from_function(page, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and "m gave an empirical epsilon lower bound" in at.error[0].value
    assert "Privacy: declared, and audited" in [s.value for s in at.subheader]
    table = _frame(at.dataframe[0])
    assert list(table["status"]) == ["violates its declared epsilon", "no violation found"]


def test_a_private_task_page_shows_declared_and_audited_privacy(monkeypatch):
    at = _app(monkeypatch, ROOT / "results", "Task", task="private-classification")
    assert "Privacy: declared, and audited" in [s.value for s in at.subheader]
    table = _frame(at.dataframe[0])
    assert {"mechanism", "accountant", "declared_epsilon", "eps_lb", "status"} <= set(table.columns)
    assert "non-private reference" in set(table["status"]) and not at.error  # the SVM is a reference, not a violation


PUBLISHED = sorted(p.stem for p in (ROOT / "results" / "_digests").glob("*.json"))


@pytest.mark.long  # one AppTest run per published task: about half a minute in all
@pytest.mark.parametrize("task", PUBLISHED)
def test_every_published_task_page_renders(monkeypatch, task):
    """The default task page of every published task renders its table without an exception or an error box."""
    at = _app(monkeypatch, ROOT / "results", "Task", task=task)
    assert at.selectbox(key="task").value == task and not at.error, [e.value for e in at.error]
    assert at.dataframe, f"{task}: the task page shows no table"


@pytest.mark.long
def test_the_claims_page_lists_every_published_task(monkeypatch):
    at = _app(monkeypatch, ROOT / "results", "Claims")
    assert not at.error, [e.value for e in at.error]
    assert set(_frame(at.dataframe[0])["task"]) == set(PUBLISHED)  # every published task records claims
