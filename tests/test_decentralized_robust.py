"""The ``robust-gossip`` task (CS+-RG): placement, attacks, the F-RG rules, the verifier, a real run.

The rules are checked against their definitions on hand-built cases and
against an independent loop transcription of the paper's code
(``aggregators/robust_gossip.py`` of github.com/renaudgaucher/Byzantine-Robust-Gossip:
the node's own zero difference first in the sorted list, cumulative weights,
``searchsorted``), the faithfulness check of this family (README, "Faithfulness").
Methods run in-process against the task's session (``run_inline``), except
one small sweep through the real runner.
"""

from __future__ import annotations

import numpy as np
import pytest

from baselines.decentralized.rg_clipped_gossip import ClippedGossip
from baselines.decentralized.rg_gossip import PlainGossip
from baselines.decentralized.rg_nna import NNA
from baselines.decentralized.rg_trimmed_mean import TrimmedMean
from bench.registry import get_task
from bench.task import InvalidSolution
from common.decentralized.robust import (
    clipped_sum_he,
    cs_plus,
    cs_plus_threshold,
    plain_sum,
    trimmed_mean_update,
    trimmed_sum,
)
from methods.decentralized.cs_plus_rg import CSPlusRG
from tasks.decentralized.gossip import make_graph, metropolis, run_inline
from tasks.decentralized.robust import (
    CATALOG,
    _check,
    _honest_connected,
    place_byzantine,
    task_graph,
)
from tasks.decentralized.robust.attacks import (
    LARGE,
    SPECTRAL_TOL,
    fiedler,
    honest_laplacian,
    make_attack,
)

TASK = get_task("robust-gossip")
SPECTRAL = "consensus-twoworlds-n20-d10-b3-cut-spectral-r100-s0"
LARGE_DSGD = "dsgd-chords-n16-d10-b1-random-large-r100-s0"


def test_tiers_and_ids():
    assert [s.id for s in TASK.instances("smoke")] == [SPECTRAL, LARGE_DSGD]
    assert len(TASK.instances("standard")) == 201
    with pytest.raises(KeyError, match="did you mean 'spectral'"):
        CATALOG.form.parse("consensus-twoworlds-n20-d10-b3-cut-spectrl-r100-s0")
    # the catalogue checks its tiers at import with this rule
    with pytest.raises(ValueError, match="attack 'none' goes with b=0"):
        _check(CATALOG.form.parse("consensus-er-n20-d10-b2-cut-none-r200-s0"))


@pytest.mark.parametrize(("kind", "n", "b", "place"), [("twoworlds", 20, 4, "cut"), ("cliques", 20, 2, "cut"), ("er", 20, 3, "random"), ("torus", 16, 2, "cut")])
def test_placement_keeps_the_honest_graph_connected_and_cut_nodes_sit_on_the_cut(kind, n, b, place):
    g = task_graph(kind, n, 0)
    W = metropolis(g)
    byz = place_byzantine(g, W, b, place, 0)
    assert byz.sum() == b and _honest_connected(g, ~byz)
    if place == "cut":
        _, v, _ = fiedler(np.eye(n) - W.toarray())
        side = v >= 0
        cut = side[g.edges[:, 0]] != side[g.edges[:, 1]]
        on_cut = set(g.edges[cut].ravel().tolist())
        assert set(np.flatnonzero(byz).tolist()) & on_cut  # at least the first one is on a cut edge
    # two cliques joined by 2 bridges: both ends of the last bridge are never taken
    if kind == "cliques":
        assert not (byz[1] and byz[11]) and not (byz[0] and byz[1])


# ----------------------------------------------------------------------------- attacks


def _ring_attack(name, n=8, byz_nodes=(3,)):
    g = make_graph("ring", n)
    W = metropolis(g)
    byz = np.zeros(n, dtype=bool)
    byz[list(byz_nodes)] = True
    return g, W, byz, make_attack(name, W, g.neighbours, ~byz)


def test_signflip_sends_minus_the_honest_mean_and_large_sends_large():
    g, W, byz, att = _ring_attack("signflip")
    x = np.random.default_rng(0).standard_normal((8, 3))
    x[3] = 1e6  # a Byzantine row is never used
    out = att(x, 1)
    assert out.shape == (8, g.neighbours.shape[1], 3)
    assert np.allclose(out[2, 0], -x[~byz].mean(axis=0)) and np.allclose(out[4, 1], -x[~byz].mean(axis=0))
    _, _, _, att = _ring_attack("large")
    assert (att(x, 1) == LARGE).all()


def test_the_simulator_replaces_only_byzantine_senders():
    inst = TASK.load(SPECTRAL)
    sess = TASK.session(inst, 0)
    byz = np.asarray(inst.private["byzantine"])
    x = np.asarray(inst.private["values"])
    got = sess.sim.exchange(x)
    nb, mask = inst.data["neighbours"], inst.data["neighbour_mask"]
    honest_slot = mask & ~byz[np.where(mask, nb, 0)]
    assert np.array_equal(got[honest_slot], x[nb[honest_slot]])
    assert not np.allclose(got[mask & ~honest_slot], x[nb[mask & ~honest_slot]])


@pytest.mark.parametrize("name", ["spectral", "dissensus", "alie", "spectralbig"])
def test_scaled_attacks_point_where_they_say_at_the_reach_of_the_farthest_honest_neighbour(name):
    g = task_graph("twoworlds", 12, 0)
    W = metropolis(g)
    byz = place_byzantine(g, W, 2, "cut", 0)
    att = make_attack(name, W, g.neighbours, ~byz)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((12, 4))
    out = att(x, 1)[:, 0, :]
    h = np.flatnonzero(~byz)
    _, v, _ = fiedler(honest_laplacian(W, ~byz))
    scale = 4.0 if name.endswith("big") else 1.0
    for i in h:
        nbrs = [j for j in g.neighbours[i] if j >= 0 and not byz[j]]
        reach = max(np.linalg.norm(x[j] - x[i]) for j in nbrs)
        step = out[i] - x[i]
        if name.startswith("spectral") and abs(v[list(h).index(i)]) <= SPECTRAL_TOL:
            # a node the Fiedler vector does not move (zero by symmetry: one Byzantine node in each
            # world) gets no push, on every CPU; version 1 pushed it along its rounding error
            assert np.linalg.norm(step) == 0.0
            continue
        assert np.linalg.norm(step) == pytest.approx(scale * reach)
        if name.startswith("spectral"):
            want = v[list(h).index(i)] * (v @ x[h])
        elif name == "dissensus":
            want = sum(W[i, j] * (x[i] - x[j]) for j in nbrs)
        else:
            want = x[h].std(axis=0)
        cos = step @ want / (np.linalg.norm(step) * np.linalg.norm(want))
        assert cos == pytest.approx(1.0)


# ----------------------------------------------------------------------------- the rules


def _paper_cs_plus(diffs, w, w_self, b):
    """One node, a loop transcription of the paper code's CS+ (own zero difference first)."""
    d = np.r_[0.0, np.linalg.norm(diffs, axis=1)]
    ww = np.r_[w_self, w]
    order = np.argsort(d, kind="stable")
    ds, cum = d[order], np.cumsum(ww[order])
    target = cum[-1] - 2 * b
    idx = int(np.searchsorted(cum, target))
    if b == 0 or idx >= len(d):
        tau = np.inf
    elif np.isclose(cum[idx], target, rtol=0, atol=1e-12):
        tau = ds[idx]
    else:
        tau = ds[idx - 1] if idx - 1 >= 0 else 0.0
    nrm = np.linalg.norm(diffs, axis=1)
    clipped = np.where((nrm > tau)[:, None], diffs * (tau / np.where(nrm > 0, nrm, 1))[:, None], diffs)
    return (w[:, None] * clipped).sum(axis=0), tau


def test_cs_plus_agrees_with_the_paper_codes_rule_on_random_neighbourhoods():
    rng = np.random.default_rng(0)
    for trial in range(300):
        K = int(rng.integers(1, 9))
        d = int(rng.integers(1, 5))
        diffs = rng.standard_normal((1, K, d)) * rng.exponential(1.0, (1, K, 1))
        # equal weights half of the time, so that "exactly 2b" happens
        w = np.full((1, K), 1.0 / (K + 1)) if trial % 2 else rng.dirichlet(np.ones(K + 1))[None, :K]
        b = float(w[0].max()) * int(rng.integers(0, 3))
        ours = cs_plus(diffs, w, b)
        ref, tau = _paper_cs_plus(diffs[0], w[0], 1.0 - w.sum(), b)
        assert np.allclose(ours[0], ref), (trial, tau, cs_plus_threshold(np.linalg.norm(diffs, axis=2), w, b))


def test_cs_plus_clips_exactly_the_intended_weight():
    # five neighbours of weight 0.1 at distances 1..5, b = 0.1: the two largest (weight 2b) are clipped at 3
    diffs = np.zeros((1, 5, 2))
    diffs[0, :, 0] = [5.0, 1.0, 4.0, 2.0, 3.0]
    w = np.full((1, 5), 0.1)
    assert cs_plus_threshold(np.abs(diffs[..., 0]), w, 0.1)[0] == 3.0
    assert np.allclose(cs_plus(diffs, w, 0.1)[0], [0.1 * (1 + 2 + 3 + 3 + 3), 0.0])
    # b = 0.15: weight 0.3 must be clipped, the three largest: threshold 2
    assert cs_plus_threshold(np.abs(diffs[..., 0]), w, 0.15)[0] == 2.0
    # 2b above all the neighbours' weight: clip everything (the node does not move); b = 0: plain sum
    assert cs_plus_threshold(np.abs(diffs[..., 0]), w, 0.3)[0] == 0.0
    assert np.allclose(cs_plus(diffs, w, 0.0), plain_sum(diffs, w, 0.0))


def test_clipped_gossip_threshold_and_nna_trimmed_weight():
    diffs = np.zeros((1, 5, 1))
    diffs[0, :, 0] = [5.0, 1.0, 4.0, 2.0, 3.0]
    w = np.full((1, 5), 0.1)
    # ClippedGossip, b = 0.1: the entries strictly below the level 0.5 - 0.1 = 0.4 are 1, 2, 3
    tau = np.sqrt(0.1 * (1 + 4 + 9) / 0.1)
    want = 0.1 * sum(min(v, tau) for v in (1, 2, 3, 4, 5))
    assert clipped_sum_he(diffs, w, 0.1)[0, 0] == pytest.approx(want)
    # NNA (GTS), b = 0.15: drop 5 and half of 4
    assert trimmed_sum(diffs, w, 0.15)[0, 0] == pytest.approx(0.1 * (1 + 2 + 3) + 0.05 * 4)
    assert trimmed_sum(diffs, w, 0.0)[0, 0] == pytest.approx(1.5)


def test_trimmed_mean_drops_the_extremes_per_coordinate():
    x = np.array([[0.0, 0.0]])
    got = np.array([[[1.0, -9.0], [100.0, 2.0], [-3.0, 1.0], [0.0, 0.0]]])
    mask = np.array([[True, True, True, False]])
    out = trimmed_mean_update(x, got, mask, 1)  # values per coordinate: own + 3 neighbours
    assert np.allclose(out, [[(0.0 + 1.0) / 2, (0.0 + 1.0) / 2]])


def test_every_rule_is_plain_gossip_on_a_complete_graph_without_byzantine_nodes():
    inst = TASK.load("consensus-complete-n20-d10-b0-random-none-r200-s0")
    ref = run_inline(TASK, inst, PlainGossip)
    assert ref["max_err"] < 1e-12  # the complete graph's Metropolis matrix averages in one round
    for prog in (CSPlusRG, ClippedGossip, NNA):
        assert run_inline(TASK, inst, prog)["max_err"] == pytest.approx(ref["max_err"], abs=1e-12)


# ----------------------------------------------------------------------------- behaviour and verifier


def test_plain_gossip_breaks_under_the_large_value_attack_and_cs_plus_stays_bounded():
    inst = TASK.load(LARGE_DSGD)
    gossip = run_inline(TASK, inst, PlainGossip)
    ours = run_inline(TASK, inst, CSPlusRG)
    assert gossip["max_err"] > 1e3 and gossip["bounded"] == 0.0
    assert ours["bounded"] == 1.0 and ours["excess_test_loss"] < 0.1 < gossip["excess_test_loss"]
    assert ours["oracle_calls"] == 100 and ours["rounds"] == 100


class _ClipTooLittle(CSPlusRG):
    """CS+ broken on purpose: it clips the largest differences of weight ``b``, not ``2 b``."""

    rule = staticmethod(lambda diffs, w, b: cs_plus(diffs, w, np.asarray(b) / 2))


def test_cs_plus_beats_nna_under_the_spectral_attack_on_the_smoke_instance():
    """CS+ clips the weight ``2 b`` that the spectral attack needs to stay hidden; clipping less lets it through.

    The instance's Byzantine placement and attack direction come from an
    eigenvector; in task version 1 they moved with the platform's LAPACK. Since
    version 2 they do not (this machine, and under OPENBLAS_CORETYPE=Prescott:
    CS+ 0.0036, NNA 0.059-0.060, plain gossip 0.027, CS+ clipping weight ``b``
    0.023). The bounds keep 2x headroom on the smaller gap: a rule that clips
    too little, or not at all, sits near plain gossip and fails the second line.
    """
    inst = TASK.load(SPECTRAL)
    ours, nna = run_inline(TASK, inst, CSPlusRG)["max_err"], run_inline(TASK, inst, NNA)["max_err"]
    gossip = run_inline(TASK, inst, PlainGossip)["max_err"]
    too_little = run_inline(TASK, inst, _ClipTooLittle)["max_err"]
    assert ours < nna / 1.5, (ours, nna)
    assert ours < min(gossip, too_little) / 3, (ours, gossip, too_little)
    assert run_inline(TASK, inst, TrimmedMean)["bounded"] == 1.0


def _solution(inst, x):
    return {"x": x, "rounds": 0, "oracle": {}, "steps": 0, "trace": {}}


def test_byzantine_rows_are_ignored_by_every_metric():
    inst = TASK.load(SPECTRAL)
    byz = np.asarray(inst.private["byzantine"])
    x = np.asarray(inst.private["values"]).copy()
    base = TASK.evaluate(inst, _solution(inst, x))
    assert base["max_err"] == pytest.approx(1.0)  # the start is at relative error 1 by definition
    x[byz] = 1e9
    assert TASK.evaluate(inst, _solution(inst, x)) == base
    x[~byz] = inst.private["target"]
    assert TASK.evaluate(inst, _solution(inst, x))["max_err"] < 1e-12


def test_evaluate_refuses_bad_answers_naming_the_field():
    inst = TASK.load(SPECTRAL)
    with pytest.raises(InvalidSolution, match="session's dict"):
        TASK.evaluate(inst, np.zeros((20, 10)))
    with pytest.raises(InvalidSolution, match=r"field 'x': expected 10 column"):
        TASK.evaluate(inst, _solution(inst, np.zeros((20, 3))))
    bad = np.zeros((20, 10))
    bad[4, 2] = np.nan
    with pytest.raises(InvalidSolution, match=r"field 'x': entry \(4, 2\) is nan"):
        TASK.evaluate(inst, _solution(inst, bad))
    with pytest.raises(InvalidSolution, match=r"expected shape \(20, d\)"):
        TASK.evaluate(inst, _solution(inst, np.zeros((19, 10))))


def test_the_wrong_oracle_for_the_workload_is_refused():
    sess = TASK.session(TASK.load(SPECTRAL), 0)
    sess.state()
    with pytest.raises(InvalidSolution, match="has oracle value only"):
        sess.apply({"op": "oracle", "name": "grad", "x": np.zeros((20, 10))})


@pytest.mark.long
def test_a_tiny_sweep_through_the_real_runner(tmp_path):
    """Two jobs through the sandboxed runner (about 15 s, most of it starting the workers)."""
    from bench.runner import RunOptions, run_sweep
    from bench.store import Store

    run_sweep(RunOptions(task="robust-gossip", store=tmp_path, progress=False, instances=[SPECTRAL], methods=["cs-plus-rg", "rg-nna"], jobs=2))
    recs = {r.method: r for r in Store(tmp_path).iter_records("robust-gossip")}
    assert {m: r.status for m, r in recs.items()} == {"cs-plus-rg": "ok", "rg-nna": "ok"}
    inline = run_inline(TASK, TASK.load(SPECTRAL), CSPlusRG)
    assert recs["cs-plus-rg"].metrics["max_err"] == pytest.approx(inline["max_err"], rel=1e-12)
    assert recs["cs-plus-rg"].metrics["max_err"] < recs["rg-nna"].metrics["max_err"]
