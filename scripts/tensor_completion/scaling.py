"""Scaling and speed-ups of the tensor-completion runs, from records: slopes, a table, and the README's PNG.

Reads the task's ``ok`` records, from a published results folder
(``--results results``) or a local store (``--store .bench/runs``), and

1. fits, per method, the least-squares slope of ``log(round_s)`` (the
   task-timed median time of one round, one ALS sweep for the ALS variants)
   on ``log(size)`` over the 3-way, 20%-observed, rank-4 series (sides 40,
   60, 80, 120: four sizes), with a 95% bootstrap interval resampling runs
   within each size; at a fixed observed fraction ``|Omega|`` is
   proportional to the size, so the per-sweep complexities of all methods
   (exact ALS ``O(|Omega| r^2)``, a Richardson step ``O(|Omega| r)``, tensorly's
   dense sweep ``O(prod I_n r)``) have slope 1;
2. prints, per instance, the median time_to_target of every method and the
   speed-up of lifted-richardson over exact-als, exact-als-loop and
   tensorly-parafac (the
   ratio of medians; "-" where one of them never reached the target), and
   the largest speed-up and where it occurs;
3. draws round_s against size (log-log), one line per method, into
   ``tasks/tensor_completion/scaling.png`` (``--out`` to change).

Run from the repository root::

    python scripts/tensor_completion/scaling.py --results results
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TASK = "tensor-completion"
METHOD = "lifted-richardson"
ORDER = [
    "lifted-richardson",
    "lifted-richardson-e2",
    "exact-als",
    "exact-als-loop",
    "em-als",
    "tensorly-parafac",
    "adam",
]
VERSUS = ("exact-als", "exact-als-loop", "tensorly-parafac")
CAP = 1000.0


def records(args: argparse.Namespace):
    from bench.bundle import task_records

    df = task_records(TASK, results=args.results, store=args.store)
    df = df[df["status"] == "ok"].copy()
    if df.empty:
        raise SystemExit(f"no ok runs of {TASK} in {args.results or args.store}")
    return df


def slope_ci(
    x: np.ndarray, groups: list[np.ndarray], reps: int, rng: np.random.Generator
) -> tuple[float, float, float]:
    """Slope of log(median y) on log(x), and a 95% CI resampling the runs within each x."""
    lx = np.log(x)
    est = float(np.polyfit(lx, np.log([np.median(g) for g in groups]), 1)[0])
    boot = [
        np.polyfit(lx, np.log([np.median(rng.choice(g, g.size)) for g in groups]), 1)[0]
        for _ in range(reps)
    ]
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return est, float(lo), float(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--results", help="a published results folder (e.g. results)")
    src.add_argument("--store", help="a local run store (e.g. .bench/runs)")
    ap.add_argument("--out", default="tasks/tensor_completion/scaling.png")
    ap.add_argument("--boot", type=int, default=2000)
    args = ap.parse_args()
    df = records(args)
    rng = np.random.default_rng(0)

    series = df[(df["iparam.order"] == 3) & (df["iparam.pct"] == 20) & (df["iparam.r"] == 4)]
    sizes = np.sort(series["iparam.size"].unique())
    print(
        f"scaling series: 3-way, 20% observed, rank 4, sizes {', '.join(f'{int(s):,}' for s in sizes)}"
    )
    print(
        "slope of log(round_s) on log(size) [95% CI, runs resampled within each size]; claimed per-sweep: 1"
    )
    lines = {}
    for m in [m for m in ORDER if m in set(series["method"])]:
        sub = series[series["method"] == m]
        groups = [sub[sub["iparam.size"] == s]["metric.round_s"].to_numpy(float) for s in sizes]
        if len(sizes) < 2 or any(g.size == 0 for g in groups):
            continue
        est, lo, hi = slope_ci(sizes.astype(float), groups, args.boot, rng)
        lines[m] = (sizes, np.array([np.median(g) for g in groups]))
        print(
            f"  {m:22s} {est:+.2f} [{lo:+.2f}, {hi:+.2f}]   median round_s: "
            + ", ".join(f"{v:.4f}" for v in lines[m][1])
        )

    print("\nmedian time_to_target (s) per instance; '>' = never reached (censored at 1000 s)")
    methods = [m for m in ORDER if m in set(df["method"])]
    print(
        "  "
        + "instance".ljust(20)
        + "".join(m[:14].rjust(15) for m in methods)
        + "".join(("x " + v)[:14].rjust(15) for v in VERSUS)
    )
    best = (0.0, "", "")
    for inst in sorted(
        df["instance"].unique(), key=lambda i: (i[0], int(i.split("-n")[1].split("-")[0]))
    ):
        sub = df[df["instance"] == inst]
        med = {
            m: float(np.median(sub[sub["method"] == m]["metric.time_to_target"]))
            for m in methods
            if (sub["method"] == m).any()
        }
        cells = "".join(
            (">" if med.get(m, CAP) >= CAP else f"{med[m]:.3f}").rjust(15) for m in methods
        )
        ratios = []
        for other in VERSUS:
            a, b = med.get(other, CAP), med.get(METHOD, CAP)
            if a >= CAP or b >= CAP:
                ratios.append("-")
                continue
            ratios.append(f"{a / b:.2f}")
            if a / b > best[0]:
                best = (a / b, inst, other)
        print("  " + inst.ljust(20) + cells + "".join(x.rjust(15) for x in ratios))
    if best[1]:
        print(f"\nlargest speed-up of {METHOD}: {best[0]:.2f}x over {best[2]} on {best[1]}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.2))
    for m, (x, y) in lines.items():
        ax.loglog(x, y, marker="o", label=m)
    if lines:
        x0, y0 = lines[next(iter(lines))][0][0], lines[next(iter(lines))][1][0]
        ax.loglog(sizes, y0 * sizes / x0, "k:", lw=1, label="slope 1")
    ax.set_xlabel("tensor size prod I_n (3-way, 20% observed, rank 4)")
    ax.set_ylabel("median time of one round (s), task-timed")
    ax.set_title("tensor-completion: time per ALS sweep vs size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
