"""The ``eigenvalue-augmentation`` task, its methods and baselines, tested in-process (seconds).

The conformance suite (tests/test_conformance.py) runs every method in the
sandbox on the smoke tier; these tests check the task itself (ids, the
generator, the certified bound, the verifier) and the rounding rules.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tasks.eigen_augment as T
from baselines.eigen_augment import eigvec_greedy, greedy
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from methods.eigen_augment import randomized_rounding as rr

TASK = get_task("eigenvalue-augmentation")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def test_tiers_list_distinct_ids_and_bad_ids_are_refused():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError, match="malformed"):
        TASK.load("edges-n30")
    with pytest.raises(ValueError, match="k < min"):
        T._check({"kind": "design", "n": 10, "m": 50, "k": 10, "r": 2, "seed": 0})


def test_generation_is_deterministic_and_the_graphs_are_what_they_say():
    M, F = T.generate("edges", 30, 100, 1, 0)
    M2, F2 = T.generate("edges", 30, 100, 1, 0)
    np.testing.assert_array_equal(F, F2)
    L = M - T.J_WEIGHT * np.ones_like(M)
    assert np.allclose(L.sum(axis=1), 0) and np.trace(L) == 2 * 29  # a tree: n - 1 edges
    tree = {(a, b) for a in range(30) for b in range(a + 1, 30) if L[a, b] == -1}
    cand = {tuple(sorted(np.flatnonzero(f[:, 0]))) for f in F}
    assert len(cand) == 100 and not cand & tree  # distinct non-edges
    w = np.linalg.eigvalsh(L)
    assert T.lambda_min(M) == pytest.approx(w[1])  # J lifts the null space above lambda_2
    _, S = T.generate("stars", 30, 20, 5, 0)
    A = np.einsum("ir,jr->ij", S[0], S[0])
    assert (
        np.trace(A) == 10 and np.count_nonzero(np.diag(A)) == 6
    )  # a centre of degree 5 and 5 leaves


def _brute_force(M, F, k):
    best = -np.inf
    for s in itertools.combinations(range(len(F)), k):
        w = np.zeros(len(F))
        w[list(s)] = 1
        best = max(best, T.lambda_min(T.augmented(M, F, w)))
    return best


@pytest.mark.parametrize("kind,r", [("design", 3), ("edges", 1), ("stars", 3)])
def test_the_bound_is_certified_against_brute_force(kind, r):
    M, F = T.generate(kind, 8, 12, r, 1)
    k = 3
    relax = T.solve_relaxation(M, F, k)
    opt = _brute_force(M, F, k)
    assert relax["lower"] <= relax["upper"] + 1e-9
    assert opt <= relax["upper"] + 1e-9
    assert relax["upper"] - relax["lower"] < 1e-4 * max(1.0, relax["upper"])  # SCS converged
    # any PSD, unit-trace Y gives a valid (weaker) bound
    rng = np.random.default_rng(0)
    G = rng.standard_normal((8, 8))
    assert T.dual_bound(M, F, k, G @ G.T) >= relax["upper"] - 1e-6


def test_verifier_recomputes_and_refuses():
    inst = TASK.load(SMOKE[0])
    k, m = inst.data["k"], len(inst.data["F"])
    metrics = TASK.evaluate(inst, np.arange(k, dtype=np.int64))
    w = np.zeros(m)
    w[:k] = 1
    assert metrics["lambda_min"] == pytest.approx(
        T.lambda_min(T.augmented(inst.data["M"], inst.data["F"], w))
    )
    assert metrics["gain_ratio"] == pytest.approx(
        TASK.meta.normalization.apply(metrics["lambda_min"], inst.references)
    )
    assert 0 < metrics["ratio"] <= 1 and metrics["size"] == k
    assert TASK.evaluate(inst, np.array([], dtype=np.int64))["gain_ratio"] == pytest.approx(0.0)
    for bad, message in [
        (np.arange(k + 1), "budget is k"),
        (np.array([0, 0]), "distinct"),
        (np.array([m]), rf"\[0, {m}\)"),
        (np.array([0.0, 1.0]), "float"),
    ]:
        with pytest.raises(InvalidSolution, match=message):
            TASK.evaluate(inst, bad)


def test_roundings_are_feasible_and_follow_x():
    rng = np.random.default_rng(0)
    x = np.r_[np.ones(3), np.zeros(5), 0.5 * np.ones(4)]  # sum 5
    for s in rr.round_bernoulli(x, 5, 200, rng):
        assert len(s) <= 5 and set(range(3)) <= set(s) and not set(s) & set(range(3, 8))
    assert all(
        len(s) <= 5 and not set(s) & set(range(3, 8)) for s in rr.round_sampling(x, 5, 50, rng)
    )
    # nothing feasible: the first draw cut to its k largest x
    (only,) = rr.round_bernoulli(np.ones(6), 2, 3, rng)
    assert len(only) == 2


def test_greedy_breaks_ties_by_first_order_gain_and_eigvec_greedy_is_ghosh_boyd():
    inst = TASK.load(next(i for i in SMOKE if i.startswith("edges")))
    M, F = inst.data["M"], inst.data["F"]
    first = int(eigvec_greedy.solve(inst, seed=0, budget=1.0)[0])
    v = np.linalg.eigh(M)[1][:, 0]  # the Fiedler vector (J lifts the constant one)
    ab = [np.flatnonzero(f[:, 0]) for f in F]
    assert first == int(np.argmax([(v[a] - v[b]) ** 2 for a, b in ab]))
    design = TASK.load(
        next(i for i in SMOKE if i.startswith("design"))
    )  # lambda_min(M + A_i) = lambda_0 for every i: all tied
    assert len(set(greedy.solve(design, seed=0, budget=1.0))) == design.data["k"]
