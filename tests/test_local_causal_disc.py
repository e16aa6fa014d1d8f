"""The discrete mode of ``local-causal-relations``: seeded binary data, the task's G^2 oracle, the methods on it.

The G^2 answers are causal-learn's own ``gsq`` test (``tasks.local_causal.graphs.GSquare``);
these tests check the generator's determinism, that the oracle answers and counts, that it
sees a clear dependence and mostly accepts independence for d-separated pairs, and that
every learner runs through the session on one standard discrete instance.
"""

from __future__ import annotations

import numpy as np

from bench.registry import get_task
from tasks.local_causal.graphs import (
    GSquare,
    d_separated,
    dag_lists,
    random_dag,
    sample_discrete,
)

TASK = get_task("local-causal-relations")
DISC = "disc-p20-h15-n2000-s0"


def _drive(inst, method) -> dict:
    sess = TASK.session(inst, 0)
    while (st := sess.state()) is not None:
        sess.apply(method.select(st))
    return TASK.evaluate(inst, sess.solution())


def test_discrete_ids_are_listed_and_existing_ids_unchanged():
    std = [s.id for s in TASK.instances("standard")]
    assert [i for i in std if i.startswith("disc-")] == [
        f"disc-p20-h15-n2000-s{s}" for s in range(3)
    ]
    assert len(std) == 15 and std[:12] == [
        f"{m}-p{p}-h15-n{n}-s{s}"
        for m, n in (("oracle", 0), ("gauss", 2000))
        for p in (20, 30)
        for s in range(3)
    ]
    assert any(s.id == "disc-p50-h20-n5000-s4" for s in TASK.instances("full"))


def test_discrete_sampler_is_seeded_binary_and_dependent():
    dag = random_dag(20, 15, 0)
    a = sample_discrete(dag, 500, 0)
    assert a.shape == (500, 20) and a.dtype == np.int64 and set(np.unique(a)) <= {0, 1}
    assert np.array_equal(a, sample_discrete(dag, 500, 0))
    assert not np.array_equal(a, sample_discrete(dag, 500, 1))
    inst = TASK.load(DISC)
    again = TASK.generate({"mode": "disc", "p": 20, "h": 15, "n": 2000, "seed": 0})[1]["discrete"]
    assert np.array_equal(inst.private["discrete"], again)
    assert inst.private["discrete"].shape == (2000, inst.data["n_vars"])


def test_gsq_oracle_detects_edges_and_mostly_accepts_separated_pairs():
    dag = random_dag(20, 15, 1)
    x = sample_discrete(dag, 5000, 1)[:, dag.observed]
    g = GSquare(x)
    obs = [int(v) for v in dag.observed]
    lists = dag_lists(dag.adj)
    edges, seps = [], []
    for i in range(len(obs)):
        for j in range(i + 1, len(obs)):
            if dag.adj[obs[i], obs[j]] or dag.adj[obs[j], obs[i]]:
                edges.append(g(i, j, []))
            elif d_separated(dag.adj, obs[i], obs[j], set(), lists):
                seps.append(g(i, j, []))
    assert len(edges) >= 10 and len(seps) >= 50
    # a direct edge is mostly seen marginally (7 of 8 here: Dirichlet rows can be close by chance)
    assert np.mean(np.array(edges) < 0.01) >= 0.8
    assert np.mean(np.array(seps) > 0.01) >= 0.9  # separated pairs mostly judged independent
    # the p-value is symmetric and ignores the order of S (causal-learn sorts nothing: we do)
    assert g(0, 1, [2, 3]) == g(1, 0, [3, 2])


def test_session_answers_gsq_and_counts_on_a_discrete_instance():
    inst = TASK.load(DISC)
    q = inst.data["n_vars"]
    sess = TASK.session(inst, 0)
    s = np.zeros((2, q), dtype=bool)
    s[:, 2] = True
    sess.apply({"x": np.array([0, 1]), "y": np.array([1, 0]), "S": s})
    pv = sess.state()["p_values"]
    ref = GSquare(inst.private["discrete"])(0, 1, [2])
    assert pv[0] == pv[1] == ref and 0.0 <= ref <= 1.0
    sol = sess.solution()
    assert sol["ci_queries"] == 2 and sol["ci_tests"] == 1 and sol["max_cond"] == 1


def test_methods_run_on_a_discrete_instance():
    from baselines.local_causal.all_possible import AllPossible
    from baselines.local_causal.fci_causallearn import FCICausalLearn
    from baselines.local_causal.mmb_readoff import MMBReadoff
    from methods.local_causal.locicr import LocICR

    inst = TASK.load(DISC)
    triv = _drive(inst, AllPossible(inst, seed=0, budget=30.0))
    for cls in (LocICR, MMBReadoff):
        m = _drive(inst, cls(inst, seed=0, budget=30.0, alpha=0.01, max_k=10))
        assert m["ci_tests"] > 0 and 0.0 <= m["macro_f1"] <= 1.0
        assert m == _drive(inst, cls(inst, seed=1, budget=30.0, alpha=0.01, max_k=10))
    f = _drive(inst, FCICausalLearn(inst, seed=0, budget=30.0, alpha=0.01))
    assert f["ci_tests"] > 0 and f["macro_f1"] > triv["macro_f1"]
