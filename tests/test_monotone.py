"""The ``monotone-regression`` task, its layers and its verifier, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the sandbox on
the smoke tier; these tests check the instances, the query batch, the monotonicity
verdicts, and that the paper's layers are monotone by construction.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.monotone.nets import MonoNet, MonotonicLinear, SwitchConvexity
from tasks.monotone import MonotoneSession, checks
from tasks.monotone.data import truth

TASK = get_task("monotone-regression")


def _run(inst, predict, monotone: bool, seed: int = 0) -> dict:
    """Drive the two-round protocol in-process with a predictor function."""
    s = MonotoneSession(inst, seed)
    s.apply({"monotone": monotone}) if s.state() else None
    s.apply(predict(s.state()["X"]))
    assert s.state() is None
    return s.solution()


def test_tiers_list_distinct_ids_and_data_hide_the_test_rows():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    inst = TASK.load("syn-reg-n300-s0")
    assert set(inst.data) == {
        "X_train",
        "y_train",
        "mono",
        "direction",
        "feature_names",
        "task_type",
        "recipe",
    }
    assert inst.data["X_train"].shape == (300, 6) and not inst.data["X_train"].flags.writeable
    assert inst.data["direction"] == [1, 1, 1, -1]
    # the extrapolation rows leave the training range in exactly one monotone column
    out = np.abs(inst.private["X_extrap"]) > 1
    assert np.all(out.sum(1) == 1) and not out[:, 4:].any()


def test_bad_ids_are_refused_in_one_line():
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("syn-reg_300")
    with pytest.raises(UnknownNameError, match="did you mean"):
        TASK.load("syn-reg-n300-s7")


def test_real_sets_are_bundled_and_split_on_the_first_monotone_column():
    inst = TASK.load("diabetes-n280-s0")
    bmi = inst.data["feature_names"].index("bmi")
    assert inst.data["mono"][0] == bmi
    assert inst.private["X_extrap"][:, bmi].min() > inst.data["X_train"][:, bmi].max()
    cancer = TASK.load("cancer-n400-s0")
    assert cancer.data["task_type"] == "classification" and set(
        np.unique(cancer.data["y_train"])
    ) == {0.0, 1.0}


def test_generation_and_queries_are_deterministic():
    a = TASK.load("syn1d-exp-n64-s0")
    TASK.clear_cache()
    b = TASK.load("syn1d-exp-n64-s0")
    assert a.digest == b.digest
    qa = MonotoneSession(a, 3)
    qa.state()
    qa.apply({"monotone": True})
    qb = MonotoneSession(b, 3)
    qb.state()
    qb.apply({"monotone": True})
    np.testing.assert_array_equal(qa.state()["X"], qb.state()["X"])


def test_the_truth_is_monotone_scores_the_bayes_reference_and_passes():
    inst = TASK.load("syn-reg-n64-s0")
    sol = _run(inst, lambda X: truth("syn-reg", X), monotone=True)
    m = TASK.evaluate(inst, sol)
    assert m["violation_rate"] == 0.0 and m["declared_monotone"] == 1.0
    assert m["nrmse"] == pytest.approx(inst.references["bayes"].value)
    assert m["extrap_nrmse"] == pytest.approx(inst.references["bayes_extrap"].value)


def test_a_declared_monotone_predictor_that_is_not_is_refused_naming_the_feature():
    inst = TASK.load("syn-reg-n64-s0")
    # decreasing in x4 is fine (a free column); breaking x3's declared decrease is not
    sol = _run(inst, lambda X: truth("syn-reg", X) + 2.0 * X[:, 3], monotone=True)
    with pytest.raises(InvalidSolution, match=r"feature 'x3' \(column 3, declared decreasing\)"):
        TASK.evaluate(inst, sol)
    undeclared = dict(sol, monotone=False)
    m = TASK.evaluate(inst, undeclared)
    assert m["violation_rate"] > 0.1 and m["declared_monotone"] == 0.0 and m["max_violation"] > 0


def test_float_noise_below_the_tolerance_is_not_a_violation():
    inst = TASK.load("syn1d-exp-n64-s0")
    rng = np.random.default_rng(0)
    sol = _run(
        inst,
        lambda X: truth("syn1d-exp", X) * (1 + 1e-7 * rng.standard_normal(len(X))),
        monotone=True,
    )
    assert TASK.evaluate(inst, sol)["violation_rate"] == 0.0


def test_malformed_predictions_are_refused():
    inst = TASK.load("syn1d-exp-n64-s0")
    sol = _run(inst, lambda X: truth("syn1d-exp", X), monotone=True)
    n = len(sol["predictions"])
    for bad, msg in [
        (sol["predictions"][:-1], "shape"),
        (np.full(n, np.nan), "finite"),
        ("x", "got str"),
    ]:
        with pytest.raises(InvalidSolution, match=msg):
            TASK.evaluate(inst, dict(sol, predictions=bad))
    with pytest.raises(InvalidSolution, match="monotone"):
        MonotoneSession(inst, 0).apply("yes")
    clf = TASK.load("cancer-n400-s0")
    sol = _run(clf, lambda X: np.full(len(X), 1.5), monotone=False)
    with pytest.raises(InvalidSolution, match="not a probability"):
        TASK.evaluate(clf, sol)


def _monotone_along(net, d: int, cols: list[int], signs: list[int]) -> bool:
    torch.manual_seed(1)
    x = torch.randn(512, d) * 3
    ok = True
    for j, s in zip(cols, signs, strict=True):
        step = torch.zeros(d)
        step[j] = 0.37
        with torch.no_grad():
            f0 = net(x)
            f1 = net(x + step)
        ok &= bool(torch.all(s * (f1 - f0) >= -1e-5 * (1 + f0.abs() + f1.abs())))
    return ok


@pytest.mark.parametrize("kind", ["monotonic", "constrained", "sigmoid"])
def test_the_monotone_stacks_are_monotone_for_any_weights(kind):
    torch.manual_seed(0)
    net = MonoNet(kind, 5, [0, 2], [1, -1], width=8, free_layers=2, mono_hidden=3)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(
                torch.randn_like(p) * 2
            )  # both signs everywhere: the construction must hold anyway
    assert _monotone_along(net, 5, [0, 2], [1, -1])


def test_the_free_stack_is_not_monotone():
    torch.manual_seed(0)
    net = MonoNet("free", 3, [0], [1], width=8, free_layers=1, mono_hidden=2)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn_like(p))
    assert not _monotone_along(net, 3, [0], [1])


def test_monotonic_linear_is_the_sign_adaptive_formula():
    """Identity pre-activation gives |W| x + b; ReLU gives relu(x) W+ + (-relu(-x)) |W-| + b, per weight sign."""
    torch.manual_seed(0)
    lin = MonotonicLinear(4, 3, None)
    x = torch.randn(10, 4)
    torch.testing.assert_close(lin(x), x @ lin.weight.abs().T + lin.bias)
    act = MonotonicLinear(4, 3, torch.relu)
    w = act.weight.detach()
    expect = torch.stack(
        [
            sum(
                (
                    w[o, i] * torch.relu(x[:, i])
                    if w[o, i] >= 0
                    else w[o, i].abs() * -torch.relu(-x[:, i])
                )
                for i in range(4)
            )
            + act.bias[o]
            for o in range(3)
        ],
        dim=1,
    )
    torch.testing.assert_close(act(x), expect)


def test_switch_convexity_mixes_convex_and_concave_units():
    torch.manual_seed(0)
    sw = SwitchConvexity(64)
    z = torch.linspace(-2, 2, 5)[:, None].expand(5, 64)
    out = sw(z)
    convex = sw.a.bool()
    assert 0 < int(convex.sum()) < 64
    torch.testing.assert_close(out[:, convex], torch.relu(z[:, convex]))
    torch.testing.assert_close(out[:, ~convex], -torch.relu(-z[:, ~convex]))


def test_a_registered_predictor_runs_the_protocol_in_process():
    import baselines.monotone.sklearn_models  # noqa: F401  (registers isotonic)
    from bench.registry import METHODS

    inst = TASK.load("syn1d-exp-n64-s0")
    spec = METHODS.get("isotonic")
    obj = spec.target(inst, seed=0, budget=10.0, **spec.params)
    s = MonotoneSession(inst, 0)
    while (st := s.state()) is not None:
        s.apply(obj.select(st))
    m = TASK.evaluate(inst, s.solution())
    assert m["violation_rate"] == 0.0 and m["nrmse"] < 0.5
    assert spec.check_supports(TASK.load("syn-reg-n64-s0"), spec.params) != True  # noqa: E712


def test_the_method_template_is_a_valid_predictor():
    namespace: dict = {}
    exec(
        TASK.scaffold("my-predictor", "baseline").replace("@method(", "_unused = dict("), namespace
    )
    inst = TASK.load("syn-reg-n64-s0")
    obj = namespace["Predictor"](inst, seed=0, budget=1.0, monotone=False)
    s = MonotoneSession(inst, 0)
    while (st := s.state()) is not None:
        s.apply(obj.select(st))
    assert 0 < TASK.evaluate(inst, s.solution())["nrmse"] < 1.5


def test_checks_count_grid_steps_and_pairs():
    q = checks.make_queries(
        np.zeros((5, 2)) + [[0, 0], [1, 1], [0, 1], [1, 0], [0.5, 0.5]],
        np.random.default_rng(0).uniform(size=(20, 2)),
        np.ones((3, 2)),
        [1],
        [1],
        0,
        12345,
    )
    f0 = q.unshuffle(q.X[:, 1].copy())  # predictions of the shuffled rows, back in block order
    v = checks.violations(q, f0, ["a", "b"])
    assert (v.pairs, v.steps, v.pair_checks, v.step_checks) == (
        0,
        0,
        checks.N_PAIRS,
        checks.N_GRID_ANCHORS * (checks.N_GRID - 1),
    )
    v = checks.violations(q, -f0, ["a", "b"])
    assert v.pairs == checks.N_PAIRS and v.steps == v.step_checks and "feature 'b'" in v.first


def test_the_query_batch_is_the_same_on_every_cpu():
    """The batch comes from integers (job seed, private query key), not from the digest of floats.

    Version 1 seeded it with the instance digest, which differed between an AVX-512 and an
    AVX2 machine, so every published solution failed to re-score on the other one.
    """
    inst = TASK.load("syn1d-ramp-n200-s0")
    assert inst.private["query_key"] == checks.query_key("syn1d-ramp", 200, 0)
    assert checks.query_key("syn1d-ramp", 200, 1) != inst.private["query_key"]
    d, p = inst.data, inst.private
    args = (d["X_train"], p["X_test"], p["X_extrap"], d["mono"], d["direction"], 3, int(p["query_key"]))
    a = checks.make_queries(*args)
    # the same instance, its floats one ulp away (another CPU's rounding): the same batch order
    nudged = [np.nextafter(x, np.inf) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x for x in args]
    b = checks.make_queries(*nudged)
    assert np.array_equal(a.perm, b.perm)
    np.testing.assert_allclose(a.X, b.X, rtol=1e-14)
