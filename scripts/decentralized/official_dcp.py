"""Side-by-side of our H-DCP and Q-DCP with the official code, and the rounds-to-coverage table.

Usage (from the repository root)::

    python scripts/decentralized/official_dcp.py side-by-side PATH [--instances ID ...]
    python scripts/decentralized/official_dcp.py rounds [--instances ID ...]

``PATH`` is a checkout of https://github.com/HaifengWen/Distributed-Conformal-Prediction
(a work tree, or the bare git directory that the ``fetch`` tool returns). The
script reads ``src/DCP_pinball_smooth.py`` and ``src/Decentralized_CP_NonIID.py``
from it at run time (``git show HEAD:...`` for a bare directory) into a
temporary directory and imports them; nothing of the official code is kept in
this repository. ``ddsketch`` and ``tdigest`` (imported at the top of both
files, used only by their federated baselines) are stubbed.

On the same calibration softmax matrices and the same mixing matrix ``W``
(Metropolis, ours) and graph (ours, with the self-loops the official
``helpers.graph_construct`` adds), it runs

- H-DCP: the official ``get_decentralized_coverage_size_over_alphas(...,
  decentral=True)``, capturing the per-device thresholds ``qhat_K`` it builds
  (a wrapper around the module's ``torch`` records the tensor that
  ``torch.zeros(size=(K,))`` returns), once with the official levels
  ``linspace(min, max, M + 1)`` of the calibration softmax matrix and once
  with ``linspace(0, 1, M + 1)`` (the code's commented-out line; ours);
- Q-DCP: the official ``get_decentralized_quantile(..., opt_method='ADMM')``
  (non-IID branch for ``noniid`` instances; for ``iid`` ones the IID branch
  with its random permutation replaced by the identity, so the devices hold
  our rows), which returns ``q_hat``;

and prints a markdown table of the thresholds beside ours (``run_inline``).

``rounds`` prints, per graph, the spectral gap and the rounds each scheme
needs until its mean coverage stays within 0.01 of centralised split CP's
(the task's ``rounds_to_cov``), for H-DCP (T = 1000, reporting every round)
and Q-DCP (T = 1500, ``eps0`` 0.1 and 0).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import subprocess
import sys
import tempfile
import types
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.registry import get_task  # noqa: E402
from methods.decentralized.h_dcp import HDCP  # noqa: E402
from methods.decentralized.q_dcp import QDCP  # noqa: E402
from tasks.decentralized.conformal import CATALOG  # noqa: E402
from tasks.decentralized.conformal.scores import make_scores  # noqa: E402
from tasks.decentralized.gossip import make_graph, metropolis, run_inline  # noqa: E402

SIDE_BY_SIDE = [
    "digits-noniid-ring-k10-a0.1-s0",
    "digits-noniid-torus-k16-a0.1-s0",
    "dirichlet-iid-torus-k16-a0.05-s0",
    "synth-noniid-er-k16-a0.1-s0",
    "digits-iid-complete-k16-a0.05-s0",
    "dirichlet-noniid-star-k16-a0.1-s0",
]
FILES = ("src/DCP_pinball_smooth.py", "src/Decentralized_CP_NonIID.py", "src/class_CP_QQ.py")


def load_official(path: Path) -> tuple[types.ModuleType, types.ModuleType]:
    """Import the two official modules from ``path`` (work tree or bare git dir)."""
    tmp = Path(tempfile.mkdtemp(prefix="official_dcp_"))
    pkg = tmp / "dcp_official"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for f in FILES:
        if (path / f).exists():
            text = (path / f).read_text()
        else:
            text = subprocess.run(["git", "--git-dir", str(path), "show", f"HEAD:{f}"], check=True, capture_output=True, text=True).stdout
        (pkg / Path(f).name).write_text(text)
    for name, attr in (("ddsketch", "DDSketch"), ("tdigest", "TDigest")):
        stub = types.ModuleType(name)
        setattr(stub, attr, object)
        sys.modules.setdefault(name, stub)
    import matplotlib

    matplotlib.use("Agg")
    sys.path.insert(0, str(tmp))
    return importlib.import_module("dcp_official.DCP_pinball_smooth"), importlib.import_module("dcp_official.Decentralized_CP_NonIID")


class _TorchSpy:
    """The real ``torch``, but ``zeros`` records what it returns and ``min``/``max`` may be pinned.

    ``quantile`` casts its level to the input's dtype: the official
    ``calibrate_lac`` builds a float32 level (its scores were float32 ``.pth``
    files) and torch refuses it on our float64 scores; the value it computes
    is not used by H-DCP or Q-DCP.
    """

    def __init__(self, torch: types.ModuleType, unit_grid: bool) -> None:
        self._torch, self._unit = torch, unit_grid
        self.made: list = []

    def __getattr__(self, name: str):
        return getattr(self._torch, name)

    def quantile(self, x, q, *a, **kw):
        return self._torch.quantile(x, q.to(x.dtype) if hasattr(q, "to") else q, *a, **kw)

    def zeros(self, *a, **kw):
        t = self._torch.zeros(*a, **kw)
        self.made.append(t)
        return t

    # as Python floats: np.linspace of two 0-d tensors is an object array on torch 2.x
    def min(self, *a, **kw):
        return 0.0 if self._unit else float(self._torch.min(*a, **kw))

    def max(self, *a, **kw):
        return 1.0 if self._unit else float(self._torch.max(*a, **kw))


def official_inputs(iid: str):
    """Softmax matrices, targets, client masks, ``W`` and the self-looped graph of an instance."""
    import networkx as nx
    import torch

    f = CATALOG.form.parse(iid)
    sc = make_scores(f["data"], f["split"], f["k"], f["seed"])
    K, n, C = sc.calib_probs.shape
    cal = torch.from_numpy(sc.calib_probs.reshape(K * n, C).copy())
    tgt = torch.from_numpy(sc.calib_labels.reshape(-1).copy())
    rows = np.repeat(np.arange(K), n)
    masks = {f"client_{k}": torch.from_numpy(rows == k) for k in range(K)}
    g = make_graph(f["graph"], f["k"], f["seed"])
    W = metropolis(g).toarray()
    G = nx.Graph()
    G.add_nodes_from(range(K))
    G.add_edges_from(map(tuple, g.edges))
    G.add_edges_from((k, k) for k in range(K))
    test = torch.from_numpy(1.0 - sc.test)
    return f, sc, cal, tgt, masks, W, G, test, torch.from_numpy(sc.test_labels.copy())


def official_hdcp(mod, iid: str, unit_grid: bool, T: int = 150, M: int = 1000) -> np.ndarray:
    f, sc, cal, tgt, masks, W, G, test, test_t = official_inputs(iid)
    spy = _TorchSpy(mod.torch, unit_grid)
    real, quantize = mod.torch, mod.quantize_array
    mod.torch = spy
    # quantize_array's numpy calls on a torch tensor fail on torch 2.x (np.sum(tensor, axis=...)); the
    # official environment's older torch converted; so do we, before the call (values unchanged)
    mod.quantize_array = lambda s, levels: quantize(np.asarray(s), levels)
    try:
        mod.get_decentralized_coverage_size_over_alphas(
            cal, tgt, test, test_t, [f["alpha"]], method="lac", allow_empty_sets=True, decentral=True,
            client_index_map=masks, gossip=T, quantization_M=M, W=W,
        )
    finally:
        mod.torch, mod.quantize_array = real, quantize
    qhat = [t for t in spy.made if tuple(t.shape) == (f["k"],)]
    return qhat[-1].double().numpy()  # torch.zeros is float32: the official thresholds are float32


@contextlib.contextmanager
def _identity_permutation():
    real = np.random.permutation
    np.random.permutation = lambda n: np.arange(n)
    try:
        yield
    finally:
        np.random.permutation = real


class _NumpySpy:
    """The real ``numpy``, but ``linalg.norm`` counts its calls and may disable the ADMM's early stop.

    The official function calls ``np.linalg.norm`` once before its loop (for
    ``beta``), then twice per ADMM iteration: first for its NMSE trace
    ``err[t]``, then for the stop test ``np.linalg.norm(X0 - X_t) < 1e-6``.
    With ``no_stop`` the stop tests (calls 3, 5, 7, ...) answer ``inf``, so
    the loop runs all ``T`` iterations, as ours does.
    """

    def __init__(self, no_stop: bool) -> None:
        self.calls, self.no_stop = 0, no_stop
        spy = self

        class _Linalg:
            def __getattr__(self, name):
                return getattr(np.linalg, name)

            def norm(self, x, *a, **kw):
                spy.calls += 1
                if spy.no_stop and spy.calls >= 3 and spy.calls % 2 == 1:
                    return np.inf
                return np.linalg.norm(x, *a, **kw)

        self.linalg = _Linalg()

    def __getattr__(self, name):
        return getattr(np, name)


def official_qdcp(mod, iid: str, T: int = 1500, no_stop: bool = False) -> tuple[float, int]:
    """Official ``q_hat`` and the ADMM iterations it ran."""
    f, sc, cal, tgt, masks, W, G, *_ = official_inputs(iid)
    if f["split"] == "iid":
        import torch

        masks = {k: torch.ones_like(v) for k, v in masks.items()}  # the IID notebook: every client "holds" all rows
    real, fsolve, real_np = mod.torch, mod.fsolve, mod.np
    mod.torch = _TorchSpy(real, unit_grid=False)
    mod.np = spy = _NumpySpy(no_stop)
    # numpy 2 refuses `X0[k] = fsolve(...)` (a (1,) array into a scalar slot); older numpy took its one element
    mod.fsolve = lambda f, x0, *a, **kw: fsolve(f, x0, *a, **kw)[0]
    try:
        with warnings.catch_warnings(), _identity_permutation():
            warnings.simplefilter("ignore")
            q, _ = mod.get_decentralized_quantile(
                cal, tgt, alpha=f["alpha"], method="lac", gossip=T, W=W, G=G, R=1, epsilon_0=0.1,
                client_index_map=masks, iid_flag=f["split"] == "iid",
            )
    finally:
        mod.torch, mod.fsolve, mod.np = real, fsolve, real_np
    return float(q), (spy.calls - 1) // 2


def side_by_side(path: Path, ids: list[str]) -> None:
    smooth, noniid = load_official(path)
    task = get_task("conformal-decentralized")
    print("| instance | H-DCP ours (q range) | official, levels of [0, 1] | max abs diff | official, levels of [min p, max p] | max abs diff "
          "| Q-DCP ours | official, no early stop | abs diff | official as is (iterations) | abs diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for iid in ids:
        inst = task.load(iid)
        ours_h = _answer(task, inst, HDCP)
        off_unit = official_hdcp(noniid, iid, unit_grid=True)
        off_mm = official_hdcp(noniid, iid, unit_grid=False)
        ours_q = _answer(task, inst, QDCP)
        off_full, _ = official_qdcp(smooth, iid, no_stop=True)
        off_q, its = official_qdcp(smooth, iid)
        print(
            f"| `{iid}` | {ours_h.min():.6f}-{ours_h.max():.6f} | {off_unit.min():.6f}-{off_unit.max():.6f} | "
            f"{np.abs(ours_h - off_unit).max():.2e} | {off_mm.min():.6f}-{off_mm.max():.6f} | {np.abs(ours_h - off_mm).max():.2e} | "
            f"{ours_q.mean():.9f} | {off_full:.9f} | {abs(ours_q.mean() - off_full):.2e} | "
            f"{off_q:.9f} ({its}) | {abs(ours_q.mean() - off_q):.2e} |"
        )


def _answer(task, inst, program, params=None) -> np.ndarray:
    session = task.session(inst, 0)
    from bench.task import Instance

    public = Instance(id=inst.id, params=inst.params, data=inst.data, tags=inst.tags, digest="public")
    obj = program(public, seed=0, budget=float("inf"), **(params or {}))
    while (state := session.state()) is not None:
        session.apply(obj.select(state))
    return np.asarray(session.solution()["x"])[:, 0]


def rounds_table(ids: list[str]) -> None:
    task = get_task("conformal-decentralized")
    print("| instance | spectral gap | H-DCP rounds (T=1000) | Q-DCP rounds, eps0=0.1 | Q-DCP rounds, eps0=0 | centralised coverage |")
    print("|---|---|---|---|---|---|")
    for iid in ids:
        inst = task.load(iid)
        h = run_inline(task, inst, HDCP, params={"rounds": 1000, "levels": 1000})
        q = run_inline(task, inst, QDCP)
        q0 = run_inline(task, inst, QDCP, params={"eps0": 0.0})
        print(
            f"| `{iid}` | {inst.data['spectral_gap']:.4f} | {h['rounds_to_cov']:.0f} | {q['rounds_to_cov']:.0f} | "
            f"{q0['rounds_to_cov']:.0f} | {inst.references['centralized_coverage'].value:.4f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("side-by-side")
    a.add_argument("path", type=Path, help="checkout of HaifengWen/Distributed-Conformal-Prediction (work tree or bare git dir)")
    a.add_argument("--instances", nargs="*", default=SIDE_BY_SIDE)
    b = sub.add_parser("rounds")
    b.add_argument("--instances", nargs="*", default=[
        f"digits-noniid-{g}-k16-a0.1-s0" for g in ("ring", "torus", "er", "star", "complete")
    ] + ["digits-noniid-ring-k36-a0.1-s0", "digits-noniid-chords-k36-a0.1-s0"])
    args = ap.parse_args()
    if args.cmd == "side-by-side":
        side_by_side(args.path, args.instances)
    else:
        rounds_table(args.instances)


if __name__ == "__main__":
    main()
