"""How much of a method's SO(n) C2ST gap is the eigenvector signs? A diagnostic, not a metric.

``python scripts/manifold_diffusion/sign_diagnostic.py --bundle results/manifold-diffusion/<id> --instance so6``

Two readings, both from the task's own data and the task's own C2ST:

1. **Where the sign gauge cuts the data.** For each row ``i`` of the training matrices and each
   mixture component, the share of rows whose gauge sign is the minority sign, for the official
   first-entry gauge and for ``projected-diffusion-tuned``'s ``sign_ref="data"`` reference. A
   share near 0.5 means the gauge boundary runs through the component, so a model that carries
   signs on a separate torus (the paper's model) must learn signs that flip inside it.
2. **C2ST with oracle signs.** For each method's solution of the smallest repetition in the
   bundle, the task's C2ST against its held-out sample, as published and after replacing each
   sample's row signs (``det = +1`` patterns only) by those that bring it nearest to a mixture
   centre. Applied to the held-out sample's own twin this moves C2ST by noise only, since the
   target's samples already sit near their centres; a large drop for a method means its signs,
   not its rotations, are what the classifier sees. The oracle uses the target's centres, which
   no method knows: it bounds what better signs could buy, it is not a result.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from bench.wire import load_npz
from common.manifold_diffusion.models import canonical_rows, data_reference
from tasks.manifold_diffusion import _load, _mixture, spec
from tasks.manifold_diffusion import metrics as M
from tasks.manifold_diffusion import targets as T
from tasks.manifold_diffusion.manifolds import features

__all__ = ["centre_distances", "minority_shares", "oracle_signs", "main"]


def minority_shares(x: np.ndarray, labels: np.ndarray, ref: np.ndarray | None) -> np.ndarray:
    """``(components, n)``: per component and row, the share of the minority gauge sign."""
    _, th = canonical_rows(torch.from_numpy(np.array(x)), None if ref is None else torch.from_numpy(np.array(ref)))
    neg = (th.numpy() > 1.0).astype(float)
    out = []
    for k in np.unique(labels):
        p = neg[labels == k].mean(0)
        out.append(np.minimum(p, 1.0 - p))
    return np.array(out)


def centre_distances(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """``(N, K)`` Frobenius distances of ``N`` matrices to ``K`` centres."""
    return np.sqrt(((x[:, None] - centres[None]) ** 2).sum((-1, -2)))


def oracle_signs(x: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each rotation with the ``det = +1`` row-sign pattern that brings it nearest to a centre."""
    n = x.shape[1]
    best = np.full(len(x), np.inf)
    out = x.copy()
    for s in itertools.product((1.0, -1.0), repeat=n):
        if np.prod(s) < 0:
            continue
        xs = np.asarray(s)[None, :, None] * x
        d = centre_distances(xs, centres).min(1)
        better = d < best
        best[better], out[better] = d[better], xs[better]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", type=Path, required=True, help="a published bundle directory")
    ap.add_argument("--instance", default="so6", help="an SO(n) mixture instance (so3, so6, so9)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    inst = _load(a.instance)
    if inst.data["manifold"] != "so" or "centres" not in inst.private:
        raise SystemExit(f"error: {a.instance}: not an SO(n) mixture instance")
    centres = np.asarray(inst.private["centres"])
    train = np.asarray(inst.data["train"])
    # component labels of the training sample: the nearest centre (the components are far apart)
    labels = centre_distances(train, centres).argmin(1)
    print(f"{a.instance}: minority share of the gauge sign per row, worst component")
    for name, ref in (("first entry (official)", None), ('sign_ref="data"', data_reference(train))):
        sh = minority_shares(train, labels, ref).max(0)
        print(f"  {name:24s}", " ".join(f"{v:.3f}" for v in sh))
    held = np.asarray(inst.private["held_out"])
    fh = features("so", held)
    twin = T.sample_so(_mixture(spec(a.instance)), len(held), np.random.default_rng(12345))[0]
    print(f"{a.instance}: C2ST as published -> with oracle signs (repetition 0 of each method)")
    print(f"  {'a fresh target sample':28s} {M.c2st(fh, features('so', twin), seed=0):.3f} -> "
          f"{M.c2st(fh, features('so', oracle_signs(twin, centres)), seed=0):.3f}")
    rec = pd.read_parquet(a.bundle / "records.parquet")
    rec = rec[(rec.instance == a.instance) & (rec.status == "ok")].sort_values("rep")
    for method, g in rec.groupby("method", sort=True):
        row = g.iloc[0]
        path = a.bundle / "solutions" / Path(str(row.solution_file)).name
        if not path.exists():
            print(f"  {method:28s} solution not in the bundle")
            continue
        x = np.asarray(load_npz(str(path))["samples"])
        print(f"  {method:28s} {M.c2st(fh, features('so', x), seed=0):.3f} -> "
              f"{M.c2st(fh, features('so', oracle_signs(x, centres)), seed=0):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
