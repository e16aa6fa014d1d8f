"""The ``tensor-completion`` task, its method and baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task (ids, generator,
protocol, verifier) and the faithfulness of the kernels: the implicit lifted
step against the official code's dense one, the exact update against a
per-row least-squares solve, and the tensorly baseline's rounds against one
masked ``parafac`` call.
"""

from __future__ import annotations

import numpy as np
import pytest

import tasks.tensor_completion as T
from baselines.tensor_completion.als import ExactALS
from baselines.tensor_completion.tensorly_parafac import TensorlyParafac
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from methods.tensor_completion.richardson import LiftedRichardson
from tasks.tensor_completion.cp import (
    cp_at,
    exact_mode_update,
    khatri_rao_rows,
    lifted_mode_update,
)

TASK = get_task("tensor-completion")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _run(obj, inst):
    sess = TASK.session(inst, 0)
    while (st := sess.state()) is not None:
        sess.apply(obj.select(st))
    return sess.solution()


def test_tiers_list_distinct_valid_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("3w-n30")
    with pytest.raises(ValueError, match="times as many"):
        T._check({"order": 3, "n": 40, "pct": 1, "r": 8, "seed": 0})


def test_generation_is_deterministic_disjoint_and_noisy_at_the_stated_level():
    g = T.generate(3, 20, 20, 3, 0)
    g2 = T.generate(3, 20, 20, 3, 0)
    np.testing.assert_array_equal(g["idx"], g2["idx"])
    np.testing.assert_array_equal(g["init"], g2["init"])
    obs = {tuple(i) for i in g["idx"]}
    held = {tuple(i) for i in g["hidx"]}
    assert len(obs) == g["idx"].shape[0] == round(0.2 * 20**3) and not obs & held
    assert np.std(g["y"] - cp_at(g["truth_factors"], g["idx"])) == pytest.approx(T.NOISE, rel=0.1)
    assert np.std(g["htrue"]) == pytest.approx(1.0, rel=0.3)  # unit entry variance
    assert g["init"].shape == (3, 20, 3) and np.std(g["init"]) == pytest.approx(
        T.INIT_SCALE, rel=0.2
    )


def _dense_lifted_step(factors, idx, y, n, shape):
    """The official code's step, densely: fill with the model, unfold, multiply by the Khatri-Rao matrix."""
    full = np.stack(np.unravel_index(np.arange(int(np.prod(shape))), shape), axis=1)
    X = cp_at(factors, full).reshape(shape)
    X[tuple(idx.T)] = y
    unfold = np.moveaxis(X, n, 0).reshape(shape[n], -1)
    others = [factors[m] for m in range(len(shape)) if m != n]
    K = others[0]
    for B in others[1:]:
        K = (K[:, None, :] * B[None, :, :]).reshape(-1, K.shape[1])  # row-major Khatri-Rao
    return unfold @ K @ np.linalg.pinv(K.T @ K)


def test_implicit_lifted_step_equals_the_dense_lifted_solve():
    rng = np.random.default_rng(1)
    shape, r = (7, 6, 5), 3
    F = [rng.standard_normal((s, r)) for s in shape]
    flat = rng.choice(np.prod(shape), 60, replace=False)
    idx = np.stack(np.unravel_index(flat, shape), axis=1)
    y = rng.standard_normal(60)
    for n in range(3):
        A, steps = lifted_mode_update(F, idx, y, n, epsilon=0.0, max_steps=1)
        assert steps == 1
        np.testing.assert_allclose(A, _dense_lifted_step(F, idx, y, n, shape), atol=1e-10)
    # many steps converge to the exact masked solution (Richardson's fixed point)
    A, steps = lifted_mode_update(F, idx, y, 0, epsilon=0.0, max_steps=5000)
    np.testing.assert_allclose(A, exact_mode_update(F, idx, y, 0), atol=1e-5)


def test_exact_update_solves_each_rows_masked_least_squares():
    rng = np.random.default_rng(2)
    shape, r = (5, 9, 8), 2
    F = [rng.standard_normal((s, r)) for s in shape]
    flat = rng.choice(np.prod(shape), 150, replace=False)
    idx = np.stack(np.unravel_index(flat, shape), axis=1)
    y = rng.standard_normal(150)
    A = exact_mode_update(F, idx, y, 1)
    Z = khatri_rao_rows(F, idx, skip=1)
    for i in range(shape[1]):
        sel = idx[:, 1] == i
        if sel.any():
            np.testing.assert_allclose(
                A[i], np.linalg.lstsq(Z[sel], y[sel], rcond=None)[0], atol=1e-8
            )


def test_the_stopping_rule_stops_when_the_relative_decrease_is_small():
    g = T.generate(3, 20, 20, 3, 0)
    F = list(g["init"])
    _, loose = lifted_mode_update(F, g["idx"], g["y"], 0, epsilon=0.5, max_steps=1024)
    _, tight = lifted_mode_update(F, g["idx"], g["y"], 0, epsilon=1e-6, max_steps=1024)
    assert loose == 1 and tight > 10


def test_exact_als_baseline_reproduces_the_reference_and_the_verifier_recomputes():
    inst = TASK.load(SMOKE[0])
    sol = _run(ExactALS(inst, seed=0, budget=10.0), inst)
    m = TASK.evaluate(inst, sol)
    assert len(sol["checkpoints"]) == T.ROUNDS["smoke"]
    F = T.exact_als(list(inst.private["init"]), inst.data["idx"], inst.data["y"], T.ROUNDS["smoke"])
    assert m["rmse"] == pytest.approx(T.rmse(F, inst.private["hidx"], inst.private["hy"]), rel=1e-9)
    assert m["train_rmse"] == pytest.approx(T.rmse(F, inst.data["idx"], inst.data["y"]), rel=1e-9)
    assert m["time_to_target"] <= m["method_s"] and m["reached"] == 1.0
    assert m["rmse_ratio"] >= 1.0 - 1e-12  # the reference is exact ALS's best over the same sweeps
    # the times are the session's own: a solution's claimed times are the caller's business, not the method's
    assert m["method_s"] == pytest.approx(sum(sol["round_s"]))


def test_verifier_refuses_bad_factors_naming_them():
    inst = TASK.load(SMOKE[0])
    shape = tuple(int(s) for s in inst.data["shape"])
    r = int(inst.data["rank"])
    good = [np.zeros((s, r)) for s in shape]
    nan = [A.copy() for A in good]
    nan[1][2, 0] = np.nan
    for bad, message in [
        (good[:2], "has 2 factors"),
        ([np.zeros((shape[0], r + 1))] + good[1:], r"factor 0 \(round 0\) has shape"),
        (nan, r"factor 1 \(round 0\) entry \(2, 0\) is nan"),
        ("abc", "must be a list"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, {"checkpoints": [bad], "round_s": [0.1]})
    with pytest.raises(InvalidSolution, match="rounds protocol"):
        TASK.evaluate(inst, good)
    never = TASK.evaluate(inst, {"checkpoints": [good], "round_s": [0.1]})
    assert never["reached"] == 0.0 and never["time_to_target"] == T.TTT_CAP
    assert never["rmse"] == pytest.approx(inst.references["zero_model"].value)


def test_lifted_method_reaches_exact_als_accuracy_on_a_smoke_instance():
    inst = TASK.load(SMOKE[0])
    m = TASK.evaluate(
        inst, _run(LiftedRichardson(inst, seed=0, budget=10.0, epsilon=1e-3, max_steps=1024), inst)
    )
    assert m["reached"] == 1.0 and m["rmse_ratio"] < 1.01


def test_tensorly_rounds_equal_one_masked_parafac_call():
    from tensorly.cp_tensor import CPTensor
    from tensorly.decomposition import parafac

    inst = TASK.load(SMOKE[0])
    sol = _run(TensorlyParafac(inst, seed=0, budget=10.0), inst)
    shape = tuple(int(s) for s in inst.data["shape"])
    r = int(inst.data["rank"])
    F0 = [np.array(A) for A in inst.private["init"]]
    mask = np.zeros(shape)
    mask[tuple(inst.data["idx"].T)] = 1.0
    X = np.zeros(shape)
    X[tuple(inst.data["idx"].T)] = inst.data["y"]
    filled = mask * X + (1 - mask) * cp_at(
        F0, np.stack(np.unravel_index(np.arange(X.size), shape), 1)
    ).reshape(shape)
    w, F = parafac(
        filled, r, n_iter_max=T.ROUNDS["smoke"], init=CPTensor((np.ones(r), F0)), mask=mask, tol=0
    )
    ours = sol["checkpoints"][-1]
    full = np.stack(np.unravel_index(np.arange(X.size), shape), 1)
    np.testing.assert_allclose(cp_at(ours, full), cp_at([F[0] * w, *F[1:]], full), atol=1e-8)


def test_methods_are_deterministic_in_their_factors():
    inst = TASK.load(SMOKE[1])
    a = _run(LiftedRichardson(inst, seed=0, budget=10.0, epsilon=1e-3, max_steps=1024), inst)
    b = _run(LiftedRichardson(inst, seed=1, budget=10.0, epsilon=1e-3, max_steps=1024), inst)
    for fa, fb in zip(a["checkpoints"], b["checkpoints"], strict=True):
        for A, B in zip(fa, fb, strict=True):
            np.testing.assert_array_equal(A, B)


def test_the_loop_direct_solver_takes_the_exact_als_iterates():
    from baselines.tensor_completion.als import ExactALSLoop

    inst = TASK.load(SMOKE[1])
    a = _run(ExactALSLoop(inst, seed=0, budget=10.0), inst)["checkpoints"]
    b = _run(ExactALS(inst, seed=0, budget=10.0), inst)["checkpoints"]
    for A, B in zip(a[2], b[2], strict=True):
        np.testing.assert_allclose(A, B, rtol=1e-6, atol=1e-8)
