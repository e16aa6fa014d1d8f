"""The ``sparse-probability-losses`` task, its f-softargmax methods and its baselines, in-process.

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task (ids, generator, simplex
check, metrics), the faithfulness of the bisection operator (entmax-1.5,
sparsemax, softmax) and of the Fenchel–Young gradient, and that every method
trains with the task's recipe.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from entmax import entmax15, entmax_bisect, sparsemax

import tasks.sparse_losses as task_module
from bench.registry import UnknownNameError, discover_methods, get_task
from bench.task import InvalidSolution
from methods.sparse_losses.fdiv import DIVERGENCES, fsoftargmax, fy_loss, fy_surrogate
from tasks.sparse_losses.training import train_and_predict

TASK = get_task("sparse-probability-losses")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _logits(rows: int, k: int, seed: int = 0, scale: float = 3.0) -> torch.Tensor:
    return scale * torch.randn(rows, k, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_tiers_list_distinct_ids_that_load():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    inst = TASK.load(SMOKE[0])
    assert inst.params["epochs"] == task_module.RECIPES["linear"]["epochs"]


def test_bad_ids_are_refused_in_one_line():
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("digits_linear")
    with pytest.raises(UnknownNameError, match="unknown sparse-probability-losses instance"):
        TASK.load("digits-linear-n64-noise0-s9")


def test_generation_is_deterministic_private_and_noisy():
    d1 = task_module.generate("covtype", 200, 20, 3)
    d2 = task_module.generate("covtype", 200, 20, 3)
    for key in ("X_train", "y_train", "X_test", "y_test"):
        np.testing.assert_array_equal(d1[key], d2[key])
    clean = task_module.generate("covtype", 200, 0, 3)
    np.testing.assert_array_equal(clean["X_train"], d1["X_train"])  # noise flips labels only ...
    assert np.sum(clean["y_train"] != d1["y_train"]) == 40  # ... exactly 20 % of them, to another class
    np.testing.assert_array_equal(clean["y_test"], d1["y_test"])  # test labels stay clean
    inst = TASK.load(SMOKE[0])
    assert "y_test" not in inst.data and "y_test" in inst.private
    assert inst.data["X_test"].shape == (540, 64) and not inst.data["X_train"].flags.writeable


def test_simplex_check_names_the_field():
    inst = TASK.load(SMOKE[0])
    n, k = inst.data["X_test"].shape[0], int(inst.data["n_classes"])
    good = np.full((n, k), 1.0 / k)
    assert TASK.evaluate(inst, good)["accuracy"] >= 0
    negative = good.copy()
    negative[3, 2], negative[3, 1] = -0.1, negative[3, 1] + 0.1
    too_much = good.copy()
    too_much[5] *= 1.01
    for bad, message in [
        (negative, r"probabilities\[3, 2\] = -0.1 is negative"),
        (too_much, "probabilities row 5 sums to 1.01"),
        (good[:, :-1], "shape"),
        (good.astype(np.float32), "dtype float32"),
        (np.full((n, k), np.nan), r"not finite at \(row, class\)"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_metrics_on_a_hand_case():
    p = np.array([[0.7, 0.3, 0.0], [0.2, 0.2, 0.6], [0.0, 1.0, 0.0]])
    y = np.array([0, 1, 1])
    m = task_module.score(p, y)
    assert m["accuracy"] == pytest.approx(2 / 3)
    brier = ((0.3**2 + 0.3**2) + (0.2**2 + 0.8**2 + 0.6**2) + 0.0) / 3
    assert m["brier"] == pytest.approx(brier)
    assert m["true_mass"] == pytest.approx((0.7 + 0.2 + 1.0) / 3)
    inst = TASK.load(SMOKE[0])
    y_test, k = inst.private["y_test"], int(inst.data["n_classes"])
    assert TASK.evaluate(inst, np.eye(k)[y_test]) == {"accuracy": 1.0, "brier": 0.0, "true_mass": 1.0}


@pytest.mark.parametrize("k", [2, 10, 1000])
def test_alpha15_with_unit_q_is_entmax15(k):
    theta = _logits(64, k, seed=k)
    p = fsoftargmax(theta, DIVERGENCES["alpha15"])
    assert (p - entmax15(theta, dim=-1)).abs().max().item() < 1e-6  # exact sort-based entmax-1.5
    assert (p - entmax_bisect(theta, alpha=1.5, dim=-1)).abs().max().item() < 1e-6
    assert (fsoftargmax(theta, DIVERGENCES["alpha2"]) - sparsemax(theta, dim=-1)).abs().max().item() < 1e-6
    assert (fsoftargmax(theta, DIVERGENCES["kl"]) - torch.softmax(theta, dim=-1)).abs().max().item() < 1e-6


def test_uniform_q_is_entmax15_of_rescaled_logits():
    """With q = 1/k (the card's "uniform q") α = 1.5 gives entmax15(θ / √k), not entmax15(θ): the abstract's unit q is ours."""
    k = 10
    theta = _logits(64, k, seed=5)
    p = fsoftargmax(theta, DIVERGENCES["alpha15"], q=torch.full((k,), 1.0 / k, dtype=torch.float64))
    assert (p - entmax15(theta / k**0.5, dim=-1)).abs().max().item() < 1e-6
    assert (p - entmax15(theta, dim=-1)).abs().max().item() > 1e-2


@pytest.mark.parametrize("name", sorted(DIVERGENCES))
def test_outputs_lie_on_the_simplex(name):
    p = fsoftargmax(_logits(32, 50, scale=10.0), DIVERGENCES[name])
    assert p.min().item() >= 0 and (p.sum(-1) - 1).abs().max().item() < 1e-12


@pytest.mark.parametrize("name", sorted(set(DIVERGENCES) - {"reverse-kl"}))  # reverse KL: Ω(e_y) = inf
def test_fenchel_young_gradient_is_operator_minus_onehot(name):
    div, theta = DIVERGENCES[name], _logits(4, 6, seed=1, scale=1.5)
    y = torch.tensor([0, 3, 5, 2])
    expected = fsoftargmax(theta, div) - torch.nn.functional.one_hot(y, 6)
    eps, fd = 1e-6, torch.zeros_like(theta)
    for i in range(4):
        for j in range(6):
            e = torch.zeros_like(theta)
            e[i, j] = eps
            fd[i, j] = (fy_loss(theta + e, y, div)[i] - fy_loss(theta - e, y, div)[i]) / (2 * eps)
    assert (fd - expected).abs().max().item() < 1e-6
    assert fy_loss(theta, y, div).min().item() >= -1e-12  # Fenchel–Young: nonnegative
    t = theta.clone().requires_grad_(True)
    fy_surrogate(t, y, div).backward()
    torch.testing.assert_close(t.grad, expected / 4)


def test_every_method_trains_with_the_recipe():
    """Each method's probabilities equal a direct call of the task's recipe with its loss and operator."""
    inst = TASK.load(SMOKE[0])
    ours = {n: s for n, s in discover_methods(families=["sparse_losses"]).items() if "sparse-probability-losses" in s.tasks}
    assert len(ours) >= 10
    div = DIVERGENCES["alpha15"]
    direct = train_and_predict(
        inst.data, seed=4, loss=lambda z, y: fy_surrogate(z, y, div), operator=lambda z: fsoftargmax(z, div)
    )
    p = ours["fsoftargmax-alpha15"].target(inst, seed=4, budget=10.0, **ours["fsoftargmax-alpha15"].params)
    np.testing.assert_array_equal(p, direct)
    ce = ours["softmax-ce"].target(inst, seed=4, budget=10.0)
    direct_ce = train_and_predict(
        inst.data, seed=4, loss=torch.nn.functional.cross_entropy, operator=lambda z: torch.softmax(z, -1)
    )
    np.testing.assert_array_equal(ce, direct_ce)
    kl = ours["fsoftargmax-kl"].target(inst, seed=4, budget=10.0, **ours["fsoftargmax-kl"].params)
    np.testing.assert_allclose(kl, ce, atol=1e-8)  # KL's f-softargmax is softmax, its FY loss the CE
    assert TASK.evaluate(inst, p)["accuracy"] > 0.5  # a tiny run learns (chance is 0.1)


def test_the_method_template_writes_a_valid_solution():
    namespace: dict = {"np": np}
    exec("def solve(instance, *, seed, budget):\n" + TASK.template, namespace)
    inst = TASK.load(SMOKE[0])
    assert "accuracy" in TASK.evaluate(inst, namespace["solve"](inst, seed=0, budget=1.0))


def test_char_lm_track_reads_the_stdlib_offline_and_learns():
    """The full tier's char-level LM: stdlib sources as corpus, disjoint train and test files, a model that learns."""
    assert not set(task_module.LM_TRAIN_FILES) & set(task_module.LM_TEST_FILES)
    full = [spec.id for spec in TASK.instances("full") if spec.id.startswith("pystdlib")]
    assert full and all("-charlm-" in i for i in full)
    with pytest.raises(ValueError, match="charlm model goes with the pystdlib"):
        task_module._check({"data": "digits", "model": "charlm", "n": 100, "noise": 0, "seed": 0})
    d = task_module.generate("pystdlib", 20000, 0, 0)
    X, y, k = d["X_train"], d["y_train"], d["n_classes"]
    assert X.shape == (20000, task_module.CONTEXT) and k == len(task_module.VOCAB) + 1
    assert np.array_equal(X[1:, -1], y[:-1])  # consecutive windows: the next example's context ends with this target
    text = "".join(task_module.VOCAB[i] if i < len(task_module.VOCAB) else "?" for i in y[:200])
    assert "def " in text or "return" in text or "self" in text  # Python source, decoded back
    again = task_module.generate("pystdlib", 20000, 0, 0)
    np.testing.assert_array_equal(again["X_test"], d["X_test"])
    data = {**d, **task_module.RECIPES["charlm"]}
    p = train_and_predict(
        data, seed=0, loss=lambda z, t: torch.nn.functional.cross_entropy(z, t), operator=lambda z: torch.softmax(z, -1)
    )
    task_module.check_simplex(p, (len(d["y_test"]), k))
    majority = np.mean(d["y_test"] == np.bincount(y, minlength=k).argmax())
    assert task_module.score(p, d["y_test"])["accuracy"] > majority + 0.03
