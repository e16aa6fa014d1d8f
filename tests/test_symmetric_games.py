"""The ``symmetric-games`` task: games, opponent suite, verifier and the learners' guarantees (fast: seconds)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from baselines.symmetric_games.hedge_plain import HedgePlain
from baselines.symmetric_games.selfplay import BestResponseSelfPlay, SelfPlayFP, SelfPlayReplicator
from bench.registry import UnknownNameError, get_task
from bench.task import InvalidSolution
from common.symmetric_games.online import SAOL, Hedge
from common.symmetric_games.selfplay import exploitability, fictitious_play, replicator
from methods.symmetric_games.mimic import MimicOpponents
from methods.symmetric_games.saol_hedge import SaolHedge
from tasks.symmetric_games.games import (
    compositions,
    constant_sum_residual,
    expected_payoffs,
    others_probs,
    plurality,
    random_game,
)

TASK = get_task("symmetric-games")
SMOKE = [spec.id for spec in TASK.instances("smoke")]


def _play(cls, inst, seed=0, **kw):
    sess = TASK.session(inst, seed)
    m = cls(inst, seed=seed, budget=1.0, **kw)
    while (st := sess.state()) is not None:
        sess.apply(m.select(st))
    return sess.solution()


def test_tiers_and_ids():
    for tier in ("smoke", "standard", "full"):
        ids = [spec.id for spec in TASK.instances(tier)]
        assert ids and len(set(ids)) == len(ids)
    with pytest.raises(UnknownNameError):
        TASK.load("plurality-n3-a2-g0-T7")


def test_games_are_symmetric_constant_sum_and_brute_force_payoffs_agree():
    for U, n in [(plurality(3, 2), 3), (plurality(5, 3), 5), (random_game(4, 3, 1), 4)]:
        assert constant_sum_residual(U, n) < 1e-12
        A = U.shape[0]
        comps = {tuple(r): j for j, r in enumerate(compositions(n - 1, A).tolist())}
        y = np.random.default_rng(0).dirichlet(np.ones(A))
        # brute force over every opponents' pure profile
        brute = np.zeros(A)
        for prof in itertools.product(range(A), repeat=n - 1):
            p = math.prod(y[b] for b in prof)
            m = tuple(np.bincount(prof, minlength=A).tolist())
            brute += p * U[:, comps[m]]
        np.testing.assert_allclose(
            expected_payoffs(U, compositions(n - 1, A), y[None])[0], brute, atol=1e-12
        )
        # playing the opponents' own strategy pays exactly C/n (the equal share)
        assert y @ brute == pytest.approx(1.0 / n, abs=1e-12)


def test_majority_vote_values():
    U = plurality(3, 2)  # Majority Vote: 2-1 pays the majority 1/2 each, 3-0 pays 1/3 each
    c = compositions(2, 2)
    np.testing.assert_allclose(expected_payoffs(U, c, np.array([[1.0, 0.0]]))[0], [1 / 3, 0.0])
    np.testing.assert_allclose(expected_payoffs(U, c, np.array([[0.5, 0.5]]))[0], [1 / 3, 1 / 3])


def test_others_probs_matches_enumeration():
    x, y = np.array([[0.2, 0.5, 0.3]]), np.array([[0.6, 0.1, 0.3]])
    n, A = 4, 3
    idx = {tuple(r): j for j, r in enumerate(compositions(n - 1, A).tolist())}
    want = np.zeros(len(idx))
    for a in range(A):
        for prof in itertools.product(range(A), repeat=n - 2):
            m = np.bincount([*prof, a], minlength=A)
            want[idx[tuple(m.tolist())]] += x[0, a] * math.prod(y[0, b] for b in prof)
    np.testing.assert_allclose(others_probs(x, y, n)[0], want, atol=1e-12)


def test_verifier_replays_and_refuses():
    inst = TASK.load(SMOKE[0])
    sol = _play(SelfPlayReplicator, inst)
    m = TASK.evaluate(inst, sol)
    assert set(m) >= {"min_gap", "mean_gap", "gap_switching"}
    assert m["min_gap"] <= m["mean_gap"]
    again = TASK.evaluate(inst, _play(SelfPlayReplicator, inst))
    assert again == m  # same seed, same numbers
    x = sol["x"]
    for bad, msg in [
        ({"x": x[:, :-1], "seed": 0}, "shape"),
        ({"x": x * 2, "seed": 0}, "sums to"),
        ({"x": x.astype(np.int64), "seed": 0}, "dtype"),
        ({"x": x}, "'x' and 'seed'"),
        ({"x": -x, "seed": 0}, "negative"),
    ]:
        with pytest.raises(InvalidSolution, match=msg):
            TASK.evaluate(inst, bad)


def test_selfplay_finds_symmetric_equilibria():
    for U, n in [(plurality(3, 2), 3), (random_game(5, 3, 0), 5)]:
        c = compositions(n - 1, U.shape[0])
        y0 = np.random.default_rng(3).dirichlet(np.ones(U.shape[0]))
        assert exploitability(U, c, replicator(U, c, y0)) < 1e-3
        assert exploitability(U, c, fictitious_play(U, c, y0)) < 2e-2


def test_hedge_secures_equal_share_against_fixed_opponents():
    """The paper's Hedge guarantee: regret <= sqrt(T ln A / 2) against the opponents' own strategy (pays C/n)."""
    U, n, T = random_game(4, 3, 2), 4, 400
    c = compositions(n - 1, 3)
    ys = np.random.default_rng(1).dirichlet(np.ones(3), size=6)
    r = expected_payoffs(U, c, ys)  # fixed opponents: the same reward vector every round
    h = Hedge(6, 3, math.sqrt(8 * math.log(3) / T))
    total = np.zeros(6)
    for _ in range(T):
        total += np.einsum("ka,ka->k", r, h.play())
        h.update(r)
    assert (total / T >= 1.0 / n - math.sqrt(math.log(3) / (2 * T))).all()


def test_saol_tracks_a_switch_that_hedge_misses():
    """Two phases with opposite best actions: SAOL adapts in the second phase, plain Hedge does not."""
    T = 2000
    r1, r2 = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    s, h = SAOL(1, 2), Hedge(1, 2, math.sqrt(8 * math.log(2) / T))
    got_s = got_h = 0.0
    for t in range(T):
        r = r1 if t < T // 2 else r2
        xs, xh = s.play(), h.play()
        if t >= T // 2:
            got_s += float(r[0] @ xs[0])
            got_h += float(r[0] @ xh[0])
        s.update(r)
        h.update(r)
    assert got_s / (T // 2) > 0.8 and got_h / (T // 2) < 0.6


def test_on_majority_vote_selfplay_fails_and_the_adaptive_learners_do_not():
    inst = TASK.load("plurality-n3-a2-g0-T200")
    sp = [
        TASK.evaluate(inst, _play(cls, inst))["gap_fixed_pure"]
        for cls in (SelfPlayReplicator, SelfPlayFP, BestResponseSelfPlay)
    ]
    assert max(sp) < -0.3  # the opponents settled on the other equilibrium: payoff 0
    assert TASK.evaluate(inst, _play(HedgePlain, inst))["gap_fixed_pure"] > -0.05
    assert TASK.evaluate(inst, _play(MimicOpponents, inst, window=1))["gap_fixed_pure"] > -0.02
    assert TASK.evaluate(inst, _play(SaolHedge, inst))["gap_fixed_pure"] > -0.2
