"""The ``lut-quantization`` task (GANQ proxy), its method and its baselines, in-process.

The conformance suite runs every method in the sandbox on the smoke tier; these
tests check the task (ids, generator, reference, verifier) and the mathematics
of GANQ's two steps against independent computations.
"""

from __future__ import annotations

import numpy as np
import pytest

import baselines.lut_quantization.gptq as gptq
import baselines.lut_quantization.kmeans as kmeans
import baselines.lut_quantization.rtn as rtn
import methods.lut_quantization.ganq as ganq
import tasks.lut_quantization as task_module
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution

TASK = get_task("lut-quantization")


@pytest.fixture(scope="module")
def mlp3():
    return TASK.load("mlp-w3-s0")


def _problem(m=12, n=20, p=200, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    X = A @ rng.standard_normal((n, p))  # correlated inputs, full rank
    return rng.standard_normal((m, n)), X


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError, match="malformed .* expected '<model>-w<bits>-s<seed>'"):
        TASK.load("mlp_w3_s0")
    with pytest.raises(
        UnknownNameError,
        match="unknown lut-quantization instance 'mlp-w3-s99'; did you mean 'mlp-w3-s",
    ):
        TASK.load("mlp-w3-s99")


def test_generation_is_deterministic_and_read_only(mlp3):
    TASK.clear_cache()
    again = TASK.load("mlp-w3-s0")
    assert again is not mlp3 and again.digest == mlp3.digest
    assert list(mlp3.data["layers"]) == ["fc1", "fc2", "fc3"]
    assert mlp3.data["W/fc1"].shape == (128, 64) and mlp3.data["X/fc1"].shape == (64, 512)
    assert not mlp3.data["W/fc2"].flags.writeable
    assert (
        "H/fc1" in mlp3.private and "H/fc1" not in mlp3.data
    )  # held-out inputs stay on the task's side
    assert mlp3.references["fp_accuracy"].value > 0.95


def test_the_rtn_reference_is_the_rtn_baseline_and_scores_zero(mlp3):
    metrics = TASK.evaluate(mlp3, rtn.solve(mlp3, seed=0, budget=1.0))
    assert metrics["layer_error"] == pytest.approx(mlp3.references["rtn"].value, rel=1e-12)
    assert metrics["rtn_ratio"] == pytest.approx(1.0)
    assert TASK.meta.normalization.apply(metrics["layer_error"], mlp3.references) == pytest.approx(
        0.0, abs=1e-12
    )
    W = mlp3.data["W/fc2"]
    T = task_module.rtn_codebook(W, 3)
    assert (
        np.allclose(T[:, 1:] - T[:, :-1], (T[:, 1] - T[:, 0])[:, None])
        and np.any(np.isclose(T, 0.0), axis=1).all()
    )


def test_the_verifier_rebuilds_w_hat_and_refuses_bad_solutions(mlp3):
    good = rtn.solve(mlp3, seed=0, budget=1.0)
    exact = {
        n: {"codebook": np.tile(np.arange(8.0), (e["codebook"].shape[0], 1)), "codes": e["codes"]}
        for n, e in good.items()
    }
    W_hat = TASK._check(mlp3, exact)
    assert np.array_equal(W_hat["fc1"], good["fc1"]["codes"].astype(float))

    def spoil(layer, key, value):
        bad = {n: dict(e) for n, e in good.items()}
        bad[layer][key] = value
        return bad

    m, n = mlp3.data["W/fc3"].shape
    cases = [
        ([1, 2], "expected a dict"),
        ({k: v for k, v in good.items() if k != "fc2"}, r"missing layers \['fc2'\]"),
        ({**good, "fc9": good["fc1"]}, r"unknown layers \['fc9'\]"),
        (
            {**good, "fc1": {"codebook": good["fc1"]["codebook"]}},
            "layer 'fc1': expected exactly the keys",
        ),
        (
            spoil("fc3", "codebook", np.zeros((m, 16))),
            r"'codebook' must be a float array of shape \(10, 8\)",
        ),
        (
            spoil("fc3", "codebook", np.full((m, 8), np.nan)),
            "'codebook' is not finite at row 0, entry 0",
        ),
        (spoil("fc3", "codes", np.zeros((m, n))), "'codes' must be an integer array"),
        (
            spoil("fc3", "codes", np.full((m, n), 8, dtype=np.int64)),
            r"code 8 at row 0, column 0 is outside \[0, 8\)",
        ),
        (spoil("fc3", "codes", np.full((m, n), -1, dtype=np.int64)), "code -1 at row 0"),
    ]
    for bad, message in cases:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(mlp3, bad)


def test_ganq_s_step_is_gptq_without_damping_in_reverse_column_order():
    """Babai's nearest plane: GANQ's back-to-front S-step on a fixed grid equals undamped GPTQ on reversed columns."""
    W, X = _problem()
    T = task_module.rtn_codebook(W, 3)
    L = np.linalg.cholesky(X @ X.T)
    codes, _ = ganq._s_step(W @ L, L, T)
    _, codes_gptq = gptq.gptq_layer(W[:, ::-1], X[::-1], 3, percdamp=0.0)
    assert np.array_equal(codes, codes_gptq[:, ::-1])


def test_ganq_t_step_is_the_least_squares_codebook():
    W, X = _problem(seed=1)
    H = X @ X.T
    codes = task_module.nearest_codes(W, task_module.rtn_codebook(W, 3))
    T = ganq._t_step(codes, W @ H, H, 8)
    for i in range(3):
        S = np.eye(8)[codes[i]].T  # (8, n)
        used = S.any(axis=1)
        t, *_ = np.linalg.lstsq((S[used] @ X).T, W[i] @ X, rcond=None)
        np.testing.assert_allclose(T[i, used], t, rtol=1e-8, atol=1e-10)
        assert np.all(T[i, ~used] == 0.0)  # the pseudo-inverse gives unused codes 0


def test_ganq_keeps_its_best_round_and_the_task_scores_it(mlp3):
    W, X = mlp3.data["W/fc2"], mlp3.data["X/fc2"]
    T, codes, history = ganq.ganq_layer(W, X, 3, pre_process=False)
    assert len(history) == 10
    Xd = X.astype(np.float64)
    err = task_module.layer_errors(W, task_module.dequantize(T, codes), Xd)
    assert err * np.linalg.norm(W @ Xd) ** 2 == pytest.approx(min(history), rel=1e-9)
    # the official per-row median/IQR normalisation is a change of variables (codebook entries are free)
    Tn, codes_n, _ = ganq.ganq_layer(W, X, 3, pre_process=True)
    assert task_module.layer_errors(W, task_module.dequantize(Tn, codes_n), Xd) == pytest.approx(
        err, rel=1e-6
    )
    np.testing.assert_allclose(
        ganq.initial_codebook(W, 3)[:, [0, 3, 7]], np.quantile(W, [0, 0.5, 1], axis=1).T
    )
    assert len(np.unique(ganq.initial_codebook(W, 4)[0])) == 13


def test_ganq_beats_rtn_and_gptq_on_the_trained_mlp_at_3_bits(mlp3):
    errs = {
        "rtn": TASK.evaluate(mlp3, rtn.solve(mlp3, seed=0, budget=1.0))["layer_error"],
        "gptq": TASK.evaluate(mlp3, gptq.solve(mlp3, seed=0, budget=1.0, percdamp=0.01, blocksize=128, act_order=False))["layer_error"],
        "ganq": TASK.evaluate(mlp3, ganq.solve(mlp3, seed=0, budget=1.0, max_epoch=10, pre_process=True))["layer_error"],
    }  # fmt: skip
    assert errs["ganq"] < 0.8 * errs["gptq"] < 0.8 * errs["rtn"], errs


def test_weighted_kmeans_codebooks_have_the_rows_values(mlp3):
    W, X = mlp3.data["W/fc3"], mlp3.data["X/fc3"]
    T, codes = kmeans.kmeans_layer(W, X, 3, seed=0)
    assert np.all(T.min(axis=1) >= W.min(axis=1) - 1e-12) and np.all(
        T.max(axis=1) <= W.max(axis=1) + 1e-12
    )
    assert np.array_equal(codes, task_module.nearest_codes(W, T))


def test_the_method_template_writes_a_valid_solution(mlp3):
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    metrics = TASK.evaluate(mlp3, namespace["solve"](mlp3, seed=0, budget=1.0))
    assert (
        0.9 < metrics["rtn_ratio"] < 1.2
    )  # the plain min-max grid, without GPTQ's integer zero point


@pytest.mark.long  # imports transformers and runs the random-init GPT-2 twice (about 15 s)
def test_the_gpt2_instance_is_a_transformers_model_and_rtn_moves_its_outputs():
    inst = TASK.load("gpt2-w4-s0")
    assert len(inst.data["layers"]) == 8 and inst.data["W/transformer.h.0.attn.c_attn"].shape == (
        768,
        256,
    )
    assert inst.data["X/transformer.h.1.mlp.c_proj"].shape == (1024, 2048)
    X = inst.data["X/transformer.h.0.attn.c_attn"].astype(np.float64)
    assert np.abs(X.sum(axis=0)).max() < 1e-3  # LayerNorm outputs (unit gain, zero bias) sum to 0
    metrics = TASK.evaluate(inst, rtn.solve(inst, seed=0, budget=1.0))
    assert (
        metrics["rtn_ratio"] == pytest.approx(1.0, rel=1e-6)
        and 0 < metrics["kl"]
        and metrics["agreement"] < 1
    )
