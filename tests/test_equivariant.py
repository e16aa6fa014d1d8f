"""The ``equivariant-regression`` task, its EKAN method and its baselines, in-process.

The conformance suite (tests/test_conformance.py) runs every method in the sandbox on the smoke
tier; these tests check the task (ids, the data formulas against their symmetries, the group
sampler, the two-round protocol and the verifier), the constraint solve against known
dimensions, the B-splines against scipy, and that every model is equivariant by construction.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.interpolate import BSpline

import tasks.equivariant as task_module
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.equivariant.layers import EKAN, EMLP, b_splines
from common.equivariant.reps import Group
from tasks.equivariant.problems import ETA, PROBLEMS, act, generate, group_generators, sample_group

TASK = get_task("equivariant-regression")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_that_load():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    inst = TASK.load(SMOKE[0])
    assert inst.params["steps"] == task_module.RECIPES["smoke"]["steps"]
    assert "Y_test" not in inst.data and inst.private["Y_test"].shape == (task_module.N_TEST, 1)
    assert not inst.data["X_train"].flags.writeable


def test_bad_ids_are_refused_in_one_line():
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("o5_n100")
    with pytest.raises(UnknownNameError, match="unknown equivariant-regression instance"):
        TASK.load("o5-n100-smoke-s9")


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_sampled_elements_belong_to_the_group(name):
    p = PROBLEMS[name]
    g = sample_group(p.group, 20, np.random.default_rng(1))
    metric = ETA if name == "lorentz" else np.eye(p.d)
    np.testing.assert_allclose(
        np.einsum("nji,jk,nkl->nil", g, metric, g), np.broadcast_to(metric, g.shape), atol=1e-10
    )
    assert {round(float(np.linalg.det(x))) for x in g} == {-1, 1}  # both components are drawn


@pytest.mark.parametrize("name", ["o5", "inertia", "lorentz"])
def test_targets_transform_as_the_output_representation(name):
    p = PROBLEMS[name]
    rng = np.random.default_rng(2)
    x, y = generate(name, 50, 10, 0)["X_train"], generate(name, 50, 10, 0)["Y_train"]
    g = sample_group(p.group, 50, rng)
    gx = act(x, g, p.rep_in)
    # the generators are pure functions of x: recompute them on the moved inputs
    from tasks.equivariant import problems as pr

    f = {"o5": pr._o5, "inertia": pr._inertia, "lorentz": pr._lorentz}[name]

    class Fixed:
        def standard_normal(self, shape):
            return gx if name != "inertia" else _unsoftplus(gx)

    y_g = f(50, Fixed())[1] if name != "lorentz" else f(50, _Scaled(gx))[1]
    np.testing.assert_allclose(y_g, act(y, g, p.rep_out), rtol=1e-8, atol=1e-10)


class _Scaled:
    def __init__(self, x):
        self.x = x

    def standard_normal(self, shape):
        return self.x * 4  # _lorentz divides by 4


def _unsoftplus(x):
    out = x.copy()
    out[:, :5] = np.log(np.expm1(x[:, :5]))
    return out


def test_inertia_matches_the_direct_formula():
    d = generate("inertia", 5, 1, 3)
    x, y = d["X_train"][0], d["Y_train"][0].reshape(3, 3)
    m, r = x[:5], x[5:].reshape(5, 3)
    direct = sum(m[i] * (r[i] @ r[i] * np.eye(3) - np.outer(r[i], r[i])) for i in range(5))
    np.testing.assert_allclose(y, direct, rtol=1e-12)
    assert np.all(m > 0)


def test_threebody_orbits_are_rotation_equivariant():
    from tasks.equivariant.problems import _threebody_orbit

    orbit = _threebody_orbit(np.random.default_rng(4))
    # energy is conserved along the orbit (unit masses, G = 1): the integrator is accurate
    q, pm = orbit[:, :6].reshape(-1, 3, 2), orbit[:, 6:].reshape(-1, 3, 2)
    pot = -sum(1 / np.linalg.norm(q[:, i] - q[:, j], axis=1) for i, j in [(0, 1), (0, 2), (1, 2)])
    energy = 0.5 * (pm**2).sum((1, 2)) + pot
    assert np.ptp(energy) < 1e-5 * abs(energy[0])
    x, y = generate("threebody", 60, 46, 0)["X_train"], generate("threebody", 60, 46, 0)["Y_train"]
    assert x.shape == (60, 48) and y.shape == (60, 12)
    np.testing.assert_allclose(x[1, 12:24], x[0, 24:36])  # windows slide by one state


def test_constraint_solve_finds_the_known_invariants():
    o3 = Group(**group_generators("O(3)"))
    assert [
        o3.basis(2, 2).shape[1],
        o3.basis(1, 2).shape[1],
        o3.basis(2, 0).shape[1],
        o3.basis(1, 1).shape[1],
    ] == [3, 0, 1, 1]
    lor = Group(**group_generators("O(1,3)"))
    assert lor.basis(1, 1).shape[1] == 1 and lor.basis(1, 0).shape[1] == 0
    m = lor.metric.numpy()
    np.testing.assert_allclose(m / m[0, 0], ETA, atol=1e-6)
    o2 = Group(**group_generators("O(2)"))
    assert o2.basis(1, 1).shape[1] == 1  # SO(2) alone would allow the rotation by 90 degrees too


def test_b_splines_match_scipy():
    grid = torch.tensor([[-1.0, -1 / 3, 1 / 3, 1.0]], dtype=torch.float64)
    x = torch.linspace(-0.99, 0.99, 41, dtype=torch.float64)[None, :]
    ours = b_splines(x, grid, 3)[0].numpy()  # (G + k, n)
    knots = np.linspace(-1 - 3 * 2 / 3, 1 + 3 * 2 / 3, 10)
    ref = np.stack(
        [BSpline.basis_element(knots[j : j + 5], extrapolate=False)(x[0].numpy()) for j in range(6)]
    )
    np.testing.assert_allclose(ours, np.nan_to_num(ref), atol=1e-12)
    np.testing.assert_allclose(ours.sum(0), 1.0, atol=1e-12)  # a partition of unity inside the grid


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_ekan_and_emlp_are_equivariant_by_construction(name):
    torch.manual_seed(0)
    p = PROBLEMS[name]
    grp = Group(**group_generators(p.group))
    hidden = (4, 4, 2 if name == "inertia" else 0)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((30, p.rep_in[0] + p.rep_in[1] * p.d)) * (
        0.25 if name == "lorentz" else 1
    )
    g = sample_group(p.group, 30, rng)
    for model in (
        EKAN(p.rep_in, p.rep_out, [hidden], grp),
        EMLP(p.rep_in, p.rep_out, [hidden, hidden], grp),
    ):
        with torch.no_grad():
            f = model(torch.tensor(x, dtype=torch.float32)).double().numpy()
            fg = model(torch.tensor(act(x, g, p.rep_in), dtype=torch.float32)).double().numpy()
        assert task_module.equivariance_error(fg, act(f, g, p.rep_out)) < 1e-5
        assert np.abs(f).max() > 1e-3  # and not trivially zero


def _run(inst, answer_params, answer_pred, seed=0):
    s = TASK.session(inst, seed)
    s.apply(answer_params if s.state() else None)
    q = s.state()["X"]
    s.apply(answer_pred(q))
    assert s.state() is None
    return s.solution()


def test_oracle_scores_zero_and_the_verifier_unshuffles():
    inst = TASK.load(SMOKE[0])  # o5
    from tasks.equivariant.problems import _o5

    class Fixed:
        def __init__(self, q):
            self.q = q

        def standard_normal(self, shape):
            return self.q

    sol = _run(inst, {"w": np.zeros(3)}, lambda q: _o5(len(q), Fixed(q))[1])
    m = TASK.evaluate(inst, sol)
    assert (
        m["mse"] < 1e-20
        and m["equi_err"] < 1e-12
        and m["n_params"] == 3
        and m["log10_params"] == pytest.approx(math.log10(3))
    )
    const = _run(inst, {"w": np.zeros(3)}, lambda q: np.ones((len(q), 1)))
    assert TASK.evaluate(inst, const)["equi_err"] == 0.0  # a constant is invariant


def test_the_verifier_refuses_with_the_field_named():
    inst = TASK.load(SMOKE[0])
    good = lambda q: np.zeros((len(q), 1))  # noqa: E731
    for params, pred, message in [
        ([1.0], good, "params: the training round must return a non-empty dict"),
        ({"w": np.array([np.nan])}, good, r"params\['w'\]: not finite"),
        ({"w": np.array([1], dtype=np.int64)}, good, "expected a float numpy array"),
        ({"w": np.zeros(2)}, lambda q: np.zeros((len(q), 2)), "shape"),
        ({"w": np.zeros(2)}, lambda q: np.full((len(q), 1), np.nan), "not finite"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, _run(inst, params, pred))


def test_the_method_template_answers_both_rounds():
    namespace: dict = {}
    exec(
        TASK.scaffold("mean-model", "baseline").replace(
            "from bench import method", "method = lambda **k: (lambda c: c)"
        ),
        namespace,
    )
    inst = TASK.load(SMOKE[1])
    model = namespace["Model"](inst, seed=0, budget=1.0)
    s = TASK.session(inst, 0)
    while (st := s.state()) is not None:
        s.apply(model.select(st))
    m = TASK.evaluate(inst, s.solution())
    assert m["rel_mse"] >= 0.99 and m["n_params"] == 9


def test_ekan_trains_and_beats_the_mean():
    from methods.equivariant.ekan import HIDDEN, EKANMethod

    inst = TASK.load(SMOKE[0])
    model = EKANMethod(inst, seed=0, budget=60.0, hidden=HIDDEN, grid=3, k=3)
    s = TASK.session(inst, 0)
    st = dict(s.state())
    st["steps"] = 200
    s.apply(model.select(st))
    s.apply(model.select(s.state()))
    m = TASK.evaluate(inst, s.solution())
    assert m["rel_mse"] < 0.5 and m["equi_err"] < 1e-5, m
