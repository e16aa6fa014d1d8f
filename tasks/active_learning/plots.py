"""Balanced-accuracy-against-labels plots and the label-saving table, from published results.

``python -m tasks.active_learning.plots [--results results] [--out tasks/active_learning/figures]``
reads the active-learning bundles (records only: every number comes from a
verified run), draws one figure per instance (mean over seeds ± standard
error), and prints a markdown table of DIRECT's label saving against each
method (:func:`bench.stats.label_saving` on mean curves), which the README
quotes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from bench.stats import label_saving, labels_to_reach

__all__ = ["curves_by_method", "saving_table", "labels_to_target_table", "plot_instance"]

TASK = "active-learning"


def curves_by_method(df: pd.DataFrame, instance: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(n_labels (R,), {method: (n_seeds, R) balanced accuracies})`` for one instance's ``ok`` runs."""
    sub = df[(df["instance"] == instance) & (df["status"] == "ok")]
    bcols = sorted(c for c in sub.columns if c.startswith("metric.bacc_r"))
    xcols = sorted(c for c in sub.columns if c.startswith("metric.labels_r"))
    if xcols:
        x = sub[xcols].iloc[0].to_numpy(dtype=float)
    else:  # records written before the labels_rXX metrics existed: the protocol gives the counts
        row = sub.iloc[0]
        x = float(row["iparam.n_init"]) + float(row["iparam.batch_size"]) * np.arange(len(bcols))
    out = {m: g.sort_values("rep")[bcols].to_numpy(dtype=float) for m, g in sub.groupby("method")}
    return x, out


def saving_table(df: pd.DataFrame, method: str = "direct") -> pd.DataFrame:
    """DIRECT's label saving against every other method, per instance (mean curves over seeds)."""
    rows = []
    for inst in sorted(df["instance"].unique()):
        x, curves = curves_by_method(df, inst)
        if method not in curves:
            continue
        a = curves[method].mean(axis=0)
        for m, c in sorted(curves.items()):
            if m == method:
                continue
            rows.append(
                {
                    "instance": inst,
                    "vs": m,
                    "saving": label_saving(x, a, c.mean(axis=0)),
                    "final_bacc_vs": float(c[:, -1].mean()),
                    "final_bacc_direct": float(curves[method][:, -1].mean()),
                    "seeds": int(min(c.shape[0], curves[method].shape[0])),
                }
            )
    return pd.DataFrame(rows)


def labels_to_target_table(df: pd.DataFrame, reference: str = "random-sampling") -> pd.DataFrame:
    """Labels each method needs to reach ``reference``'s final balanced accuracy (mean curves, cumulative max).

    Rows: methods; columns: instances; NaN where a method never reaches it.
    """
    out: dict[str, dict[str, float]] = {}
    for inst in sorted(df["instance"].unique()):
        x, curves = curves_by_method(df, inst)
        if reference not in curves:
            continue
        target = float(np.max(curves[reference].mean(axis=0)))
        for m, c in curves.items():
            out.setdefault(m, {})[inst] = labels_to_reach(x, np.maximum.accumulate(c.mean(axis=0)), target)
    return pd.DataFrame(out).T.sort_index()


def plot_instance(df: pd.DataFrame, instance: str, out: Path) -> Path:
    """One figure: mean balanced accuracy against labels per method, ± standard error over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x, curves = curves_by_method(df, instance)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    for m in sorted(curves, key=lambda m: (m != "direct", m)):
        c = curves[m]
        mu = c.mean(axis=0)
        se = c.std(axis=0, ddof=1) / np.sqrt(c.shape[0]) if c.shape[0] > 1 else np.zeros_like(mu)
        lw = 2.4 if m == "direct" else 1.2
        (line,) = ax.plot(x, mu, label=f"{m} (n={c.shape[0]})", lw=lw, color="black" if m == "direct" else None)
        ax.fill_between(x, mu - se, mu + se, alpha=0.12, color=line.get_color(), lw=0)
    ax.set_xlabel("labels")
    ax.set_ylabel("balanced test accuracy")
    ax.set_title(instance)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{instance}.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tasks.active_learning.plots", description=__doc__.split("\n\n")[0])
    p.add_argument("--results", default="results")
    p.add_argument("--store", help="read a local run store instead of published bundles")
    p.add_argument("--tier", default="standard")
    p.add_argument("--out", default=str(Path(__file__).parent / "figures"))
    a = p.parse_args(argv)
    if a.store:
        from bench.store import Store

        df = Store(a.store).frame(TASK)
    else:
        from bench.bundle import load_bundles

        df = load_bundles(a.results, TASK).records
    if df.empty:
        print(f"error: no {TASK} results under {a.store or a.results}", file=sys.stderr)
        return 1
    from bench.registry import get_task

    df = df[(df["task_version"] == get_task(TASK).meta.version) & (df["tier"] == a.tier)]
    for inst in sorted(df["instance"].unique()):
        print(f"wrote {plot_instance(df, inst, Path(a.out))}")
    tab = saving_table(df)
    if not tab.empty:
        piv = tab.pivot(index="vs", columns="instance", values="saving")
        print("\nDIRECT's label saving against each method (mean curves over seeds; negative: the other method needs fewer labels)\n")
        print("| vs | " + " | ".join(piv.columns) + " |")
        print("|---|" + "---|" * len(piv.columns))
        for m, row in piv.iterrows():
            print(f"| {m} | " + " | ".join("–" if v != v else f"{v:+.0%}" for v in row.to_numpy()) + " |")
        lab = labels_to_target_table(df)
        print("\nLabels needed to reach random sampling's final balanced accuracy (mean curves, cumulative max; – never)\n")
        print("| method | " + " | ".join(lab.columns) + " |")
        print("|---|" + "---|" * len(lab.columns))
        for m, row in lab.iterrows():
            print(f"| {m} | " + " | ".join("–" if v != v else f"{v:.0f}" for v in row.to_numpy()) + " |")
        fin = df[df["status"] == "ok"].groupby(["instance", "method"])["metric.final_bacc"].agg(["mean", "std", "count"])
        print("\nFinal balanced accuracy (mean ± std over seeds)\n")
        piv2 = fin.reset_index().pivot(index="method", columns="instance", values="mean")
        sd2 = fin.reset_index().pivot(index="method", columns="instance", values="std")
        print("| method | " + " | ".join(piv2.columns) + " |")
        print("|---|" + "---|" * len(piv2.columns))
        for m in piv2.index:
            print(f"| {m} | " + " | ".join(f"{piv2.loc[m, c]:.3f} ± {sd2.loc[m, c]:.3f}" for c in piv2.columns) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
