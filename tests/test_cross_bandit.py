"""The ``cross-learning-bandit`` task, its method and baselines, tested in-process (seconds).

The conformance suite runs every method in the sandbox on the smoke tier; these tests check the
environments, the regret the verifier computes (against brute force), the protocol's refusals,
and that the learners compute what they claim (the cross-learning estimator is unbiased; the
paper's estimated marginal equals the oracle's when the previous epoch's contexts match nu).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from baselines.cross_bandit.exp3 import Exp3NoContext, Exp3PerContext, UniformBandit
from baselines.cross_bandit.oracle import BalseiroKnownNu
from bench.registry import UnknownNameError, get_task
from bench.task import Instance, InvalidSolution
from methods.cross_bandit.sz_cross_exp3 import SchneiderZimmert
from tasks.cross_bandit import env as E

TASK = get_task("cross-learning-bandit")
SMOKE = [spec.id for spec in TASK.instances("smoke")]
SWITCH = "switch-C5-K3-T400-R20-s0"
AUCTION = "auction-C5-K3-T400-R20-s0"
LEARNERS = {
    "sz-cross-exp3": (SchneiderZimmert, {"eta_scale": 1.0, "gamma_scale": 0.5, "epoch_scale": 1.0}),
    "balseiro-known-nu": (BalseiroKnownNu, {"eta_scale": 1.0}),
    "exp3-per-context": (Exp3PerContext, {"eta_scale": 1.0}),
    "exp3-no-context": (Exp3NoContext, {"eta_scale": 1.0}),
    "uniform-bandit": (UniformBandit, {}),
}


def _public(inst: Instance) -> Instance:
    return Instance(id=inst.id, params=inst.params, data=inst.data, tags=inst.tags, digest="public")


def play(instance_id: str, name: str, seed: int = 0) -> tuple[dict, dict]:
    """Run one learner through the task's session in-process; ``(solution, metrics)``."""
    inst = TASK.load(instance_id)
    cls, params = LEARNERS[name]
    learner = cls(_public(inst), seed=seed, budget=10.0, **params)
    session = TASK.session(inst, seed)
    while (state := session.state()) is not None:
        session.apply(learner.select(state))
    sol = session.solution()
    return sol, TASK.evaluate(inst, sol)


def test_tiers_and_ids():
    for tier in ("smoke", "standard", "full"):
        ids = [s.id for s in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    assert SWITCH in SMOKE and AUCTION in SMOKE
    with pytest.raises(UnknownNameError, match="expected '<env>-C<contexts>"):
        TASK.load("switch_C5")
    with pytest.raises(UnknownNameError, match="did you mean 'switch'"):
        TASK.load("swich-C5-K3-T400-R20-s0")


def test_tables_are_oblivious_losses_in_range():
    for env in E.ENVS:
        a = E.loss_table(env, 5, 3, 400, 0)
        b = E.loss_table(env, 5, 3, 400, 0)
        assert a.shape == (400, 3, 5) and a.dtype == np.float32
        np.testing.assert_array_equal(a, b)
        assert a.min() >= 0 and a.max() <= 1
    # auction: the loss is (1 - (v - b) 1[b >= m]) / 2, so at bid 0 (never above m > 0) it is 1/2
    auc = E.loss_table("auction", 5, 4, 64, 3)
    assert np.all(auc[:, 0, :] == 0.5)
    # a higher value gains more from the same winning bid: losses fall with the value
    assert np.all(np.diff(auc[:, 1:, :], axis=2) <= 1e-7)


def test_switch_best_action_is_the_late_one():
    C, K, H = 6, 4, 20000
    table = E.loss_table("switch", C, K, H, 1)
    sw = int(round(E.SWITCH_AT * H))
    early = table[:sw].mean(axis=0).argmin(axis=0)
    late = table[sw:].mean(axis=0).argmin(axis=0)
    best = E.best_policy(table)
    assert np.all(early != late)
    np.testing.assert_array_equal(best, late)


def test_regret_matches_brute_force():
    rng = np.random.default_rng(0)
    H, K, C, R = 30, 3, 2, 4
    table = rng.random((H, K, C)).astype(np.float32)
    ctx = rng.integers(0, C, size=(R, H))
    acts = rng.integers(0, K, size=(R, H))
    # best fixed policy in expectation: brute force over all K^C policies, context by context sums
    sums = table.sum(axis=0, dtype=np.float64)
    best = min(
        itertools.product(range(K), repeat=C), key=lambda pi: sum(sums[pi[c], c] for c in range(C))
    )
    np.testing.assert_array_equal(E.best_policy(table), best)
    want = [
        sum(
            float(table[t, acts[r, t], ctx[r, t]]) - float(table[t, best[ctx[r, t]], ctx[r, t]])
            for t in range(H)
        )
        for r in range(R)
    ]
    np.testing.assert_allclose(E.regret(table, ctx, acts), want, rtol=1e-9)
    # in hindsight, per replication: the best policy on its own contexts, also brute force
    for r in range(R):
        played = sum(float(table[t, acts[r, t], ctx[r, t]]) for t in range(H))
        opt = min(
            sum(float(table[t, pi[ctx[r, t]], ctx[r, t]]) for t in range(H))
            for pi in itertools.product(range(K), repeat=C)
        )
        assert E.hindsight_regret(table, ctx, acts)[r] == pytest.approx(played - opt)
    assert np.all(E.hindsight_regret(table, ctx, acts) >= E.regret(table, ctx, acts) - 1e-9)


def test_uniform_reference_matches_simulated_uniform_play():
    inst = TASK.load(SWITCH)
    _, m = play(SWITCH, "uniform-bandit", seed=3)
    ref = inst.references["uniform"].value
    # 20 replications of 400 Bernoulli rounds: the mean is within a few standard errors
    assert m["regret_mean"] == pytest.approx(ref, rel=0.25)
    assert TASK.meta.normalization.apply(0.0, inst.references) == pytest.approx(1.0)


def test_session_refuses_bad_actions_and_verifier_bad_records():
    inst = TASK.load(SWITCH)
    s = TASK.session(inst, 0)
    st = s.state()
    n = len(st["contexts"])
    assert n == 4 * 20 and st["feedback"].shape == (0, 5)
    with pytest.raises(
        InvalidSolution, match=r"round 0: expected an integer array of shape \(80,\)"
    ):
        s.apply(np.zeros(n - 1, dtype=np.int64))
    with pytest.raises(InvalidSolution, match="outside \\[0, 3\\)"):
        s.apply(np.full(n, 3))
    with pytest.raises(InvalidSolution, match="integer array"):
        s.apply(np.zeros(n))
    s.apply(np.ones(n, dtype=np.int64))
    st = s.state()
    assert st["t"] == 1 and st["feedback"].shape == (n, 5)
    # the feedback is the loss row of the played action, in every context
    np.testing.assert_array_equal(st["feedback"][0], E.loss_table("switch", 5, 3, 400, 0)[0, 1, :])
    sol, _ = play(SWITCH, "uniform-bandit")
    with pytest.raises(InvalidSolution, match="actions1: expected an integer array of shape"):
        TASK.evaluate(inst, {**sol, "actions1": sol["actions1"][:, :-1]})
    with pytest.raises(InvalidSolution, match="must lie in"):
        TASK.evaluate(inst, {**sol, "actions0": sol["actions0"] + 5})
    with pytest.raises(InvalidSolution, match="seed"):
        TASK.evaluate(inst, {k: v for k, v in sol.items() if k != "seed"})


def test_horizons_retire_longest_last():
    inst = TASK.load(SWITCH)
    s = TASK.session(inst, 0)
    sizes = []
    while (st := s.state()) is not None:
        sizes.append(len(st["contexts"]))
        s.apply(np.zeros(len(st["contexts"]), dtype=np.int64))
    assert len(sizes) == 400
    assert (
        sizes[0] == 80
        and sizes[49] == 80
        and sizes[50] == 60
        and sizes[100] == 40
        and sizes[200] == 20
    )


def test_cross_learning_estimate_is_unbiased_with_known_nu():
    """Balseiro et al.'s estimator l(a, c) 1[A = a] / f(a) has mean l(a, c) when f(a) = E_nu pi(a|c)."""
    rng = np.random.default_rng(1)
    C, K, n = 4, 3, 200000
    nu = np.array([0.1, 0.2, 0.3, 0.4])
    pi = rng.dirichlet(np.ones(K), size=C)  # (C, K)
    loss = rng.random((K, C))
    f = nu @ pi
    c = rng.choice(C, size=n, p=nu)
    a = (rng.random(n)[:, None] > np.cumsum(pi[c], axis=1)).sum(axis=1)
    est = np.zeros((K, C))
    np.add.at(est, a, loss[a] / f[a][:, None])
    np.testing.assert_allclose(est / n, loss, rtol=0.03)


def test_sz_marginal_equals_oracle_when_epoch_frequencies_match_nu():
    inst = _public(TASK.load(SWITCH))
    sz = SchneiderZimmert(inst, seed=0, budget=1.0, eta_scale=1.0, gamma_scale=0.5, epoch_scale=1.0)
    oracle = BalseiroKnownNu(inst, seed=0, budget=1.0, eta_scale=1.0)
    rng = np.random.default_rng(2)
    pi = rng.dirichlet(np.ones(3), size=(sz.S, 5))
    sz.prev[:] = inst.data["nu_oracle"]
    sz.have_prev[:] = True
    t = int(sz.L.max()) + 1  # not an epoch boundary of the longest streams
    f_sz, learns = sz.marginal(t, pi)
    f_or, _ = oracle.marginal(t, pi)
    keep = t % sz.L != 0
    np.testing.assert_allclose(f_sz[keep], f_or[keep])
    # epoch 0 makes no update (no previous epoch to estimate nu from)
    fresh = SchneiderZimmert(
        inst, seed=0, budget=1.0, eta_scale=1.0, gamma_scale=0.5, epoch_scale=1.0
    )
    assert not fresh.marginal(0, pi)[1].any()


@pytest.mark.parametrize("instance_id", [SWITCH, AUCTION])
def test_learners_run_and_cross_learning_beats_uniform(instance_id):
    means = {name: play(instance_id, name)[1]["regret_mean"] for name in LEARNERS}
    # same seed, same solution
    a, _ = play(instance_id, "sz-cross-exp3", seed=5)
    b, _ = play(instance_id, "sz-cross-exp3", seed=5)
    np.testing.assert_array_equal(a["actions0"], b["actions0"])
    assert means["sz-cross-exp3"] < means["uniform-bandit"]
    assert means["balseiro-known-nu"] < means["uniform-bandit"]


def test_verifier_recomputes_contexts_from_the_seed():
    inst = TASK.load(SWITCH)
    sol, m = play(SWITCH, "sz-cross-exp3", seed=7)
    again = TASK.evaluate(inst, sol)
    assert again == pytest.approx(m, nan_ok=True)
    forged = TASK.evaluate(inst, {**sol, "seed": 8})  # the same actions against other contexts
    assert forged["regret_mean"] != pytest.approx(m["regret_mean"])
    assert {"regret_q99", "slope_q99", "q99_T8", "hindsight_q99"} <= set(m)
