"""Regenerate ``paper_results.csv`` and ``best_known.csv`` from the research notes (maintainers only).

    python scripts/maxcut/make_paper_results.py [--shared ../shared]

Inputs, all under ``shared/`` (the notes that came with the task):

- ``data/maxcut/ros_icml2025_table6_gset_maxcut.csv`` and
  ``ros_icml2025_table7_gset_max3cut.csv``: the ROS paper's Tables 6 (k=2) and
  7 (k=3), every method's cut and time on the 71 Gset graphs.
- ``data/maxcut/gset_best_known_k2_k3.csv``: best-known k=2 values from several
  sources, with the "max of listed" column, and MOH's k=3 values.
- ``specs/maxcut.md`` §1.4: Table 2 (random regular graphs, mean ± std over 20
  graphs) and Tables 3/8/9 (weighted Gset), copied below as they appear there.

Outputs, in ``tasks/maxcut/`` (task data): ``paper_results.csv`` (what the
paper reports, never mixed with our results) and ``best_known.csv`` (the
references the task scores against).
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = ROOT / "tasks" / "maxcut"

PAPER = "Qiu et al., ICML 2025 (ROS)"
#: Paper column names -> our method names (ours where one exists, else the paper's name, lower case).
METHODS = {
    "GW": "gw",
    "MD": "md",
    "PI-GNN": "pignn",
    "Genetic": "genetic",
    "BQP": "bqp",
    "ECO-DQN": "eco-dqn",
    "ANYCSP": "anycsp",
    "MOH": "moh",
    "LPI": "lpi",
    "ROS-vanilla": "ros-vanilla",
    "ROS": "ros",
}
HARDWARE = (
    "measured by the ROS authors on their machine (one NVIDIA RTX 3090, PyTorch 2.2.0; paper §4.1); "
    "not comparable with timings here"
)
QUOTED = {
    "moh": "quoted in the ROS paper from Ma & Hao 2017 (MOH), not re-run; other hardware",
    "lpi": "quoted in the ROS paper from Goudet et al. 2024 (LPI), not re-run; other hardware",
}

# Table 2 of the paper, copied from shared/specs/maxcut.md §1.4 (cut, mean ± std over 20 graphs).
# k=2 rows use 3-regular graphs and k=3 rows 5-regular graphs (ROS runner scripts).
TABLE2 = """\
| method | N=100 k=2 | N=100 k=3 | N=1,000 k=2 | N=1,000 k=3 | N=10,000 k=2 | N=10,000 k=3 |
| GW | 130.20±2.79 | – | N/A | – | N/A | – |
| BQP | 131.55±2.42 | 239.70±1.82 | 1324.45±6.34 | 2419.15±6.78 | N/A | N/A |
| Genetic | 127.55±2.82 | 235.50±3.15 | 1136.65±10.37 | 2130.30±8.49 | N/A | N/A |
| MD | 127.20±2.16 | 235.50±3.29 | 1250.35±11.21 | 2344.85±9.86 | 12428.85±26.13 | 23341.20±32.87 |
| PI-GNN | 122.95±3.83 | – | 1210.45±44.56 | – | 12655.05±94.25 | – |
| ECO-DQN | 135.60±1.53 | – | 1366.20±5.20 | – | N/A | – |
| ANYCSP | 131.65±3.35 | 247.90±0.89 | 1366.05±5.25 | 2494.50±2.99 | 13692.35±11.27 | 24929.80±7.53 |
| ROS-vanilla | 132.80±1.99 | 243.20±1.80 | 1322.95±6.57 | 2443.9±4.10 | 13239.80±14.71 | 24413.30±16.02 |
| ROS | 128.20±2.82 | 240.30±2.59 | 1283.75±6.89 | 2405.75±5.72 | 12856.85±26.50 | 24085.95±21.88 |
"""

# Tables 3 ([0,10]), 8 ([0.9,1.1]) and 9 ([0,100]), copied from shared/specs/maxcut.md §1.4 (cut).
WEIGHTED = """\
| range | table | method | G70 k=2 | G70 k=3 | G72 k=2 | G72 k=3 | G77 k=2 | G77 k=3 | G81 k=2 | G81 k=3 |
| 0_10 | 3 | MD | 45490.21 | 49615.85 | 33449.49 | 38798.78 | 47671.94 | 55147.26 | 67403.00 | 78065.07 |
| 0_10 | 3 | PI-GNN | 44275.72 | – | 31469.65 | – | 44359.72 | – | 62439.97 | – |
| 0_10 | 3 | ANYCSP | 46420.48 | 48831.32 | −280.74 | −208.01 | 845.72 | 988.96 | −13.52 | 271.01 |
| 0_10 | 3 | ROS-vanilla | 47140.07 | 49826.90 | 36697.11 | 42067.80 | 52226.53 | 59636.36 | 74051.42 | 84498.44 |
| 0_10 | 3 | ROS | 46707.60 | 49813.45 | 35733.11 | 40987.92 | 50790.44 | 58253.31 | 72057.24 | 82450.68 |
| 0.9_1.1 | 8 | MD | 8594.38 | 9709.56 | 5647.28 | 6585.04 | 8051.81 | 9337.31 | 11326.30 | 13179.33 |
| 0.9_1.1 | 8 | PI-GNN | 8422.79 | – | 5309.65 | – | 7470.89 | – | 10416.44 | – |
| 0.9_1.1 | 8 | ANYCSP | 5198.87 | 5375.92 | −15.57 | −25.33 | 81.76 | 114.36 | 33.49 | −4.25 |
| 0.9_1.1 | 8 | ROS-vanilla | 9177.21 | 9991.95 | 6542.78 | 7733.87 | 9265.65 | 10944.35 | 13132.52 | 15456.28 |
| 0.9_1.1 | 8 | ROS | 8941.80 | 9970.72 | 6165.62 | 7366.54 | 8737.59 | 10359.25 | 12325.85 | 14570.04 |
| 0_100 | 9 | MD | 456581.30 | 497167.48 | 338533.07 | 392908.80 | 482413.19 | 558264.21 | 682809.47 | 790089.41 |
| 0_100 | 9 | PI-GNN | 442650.59 | – | 312802.48 | – | 442354.44 | – | 623256.74 | – |
| 0_100 | 9 | ANYCSP | 467696.98 | 491654.75 | −1903.50 | −2498.86 | 9712.13 | 10130.89 | 2842.64 | 2845.46 |
| 0_100 | 9 | ROS-vanilla | 472067.14 | 498273.60 | 367795.62 | 421189.97 | 524010.92 | 597597.50 | 742432.41 | 846395.85 |
| 0_100 | 9 | ROS | 470268.97 | 498269.90 | 362910.89 | 415905.88 | 515991.31 | 590312.40 | 731468.67 | 835424.19 |
"""

# Readable names of the source codes in gset_best_known_k2_k3.csv's BKV_attained_by column.
SOURCES = {
    "BLS2013": "Benlic & Hao 2013 (BLS, paper)",
    "BLS-page": "BLS authors' page",
    "LinGuan2016-Best": "Lin & Guan 2016 (column 'Best')",
    "MOH2017": "Ma & Hao 2017 (MOH, via ROS paper Table 6)",
    "LPI2024": "Goudet et al. 2024 (LPI, via ROS paper Table 6)",
    "SBM2019-compilation": "Toshiba SBM 2019 best-known list",
}


def _fmt(value: float) -> str:
    """Shortest exact decimal: 45490.21 stays 45490.21, 1228.0 becomes 1228."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.strip().splitlines()]


def _num(cell: str) -> float | None:
    cell = cell.replace("−", "-").strip()
    if cell in ("N/A", "–", "-", ""):
        return None
    return float(cell)


def paper_rows(shared: Path) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []

    def add(instance: str, method: str, metric: str, value: float, source: str, note: str = "") -> None:
        out.append(
            {"instance": instance, "method": method, "metric": metric, "value": _fmt(value), "source": source, "note": note}
        )

    for k, table in ((2, "ros_icml2025_table6_gset_maxcut.csv"), (3, "ros_icml2025_table7_gset_max3cut.csv")):
        tno = 6 if k == 2 else 7
        with open(shared / "data" / "maxcut" / table, newline="") as fh:
            for row in csv.DictReader(fh):
                for col, name in METHODS.items():
                    if f"{col}_obj" not in row:
                        continue
                    src = f"{PAPER}, Table {tno}"
                    obj, t = _num(row[f"{col}_obj"]), _num(row[f"{col}_time_s"])
                    cut_note = QUOTED.get(name, "")
                    time_note = QUOTED.get(name) or HARDWARE
                    if name == "anycsp":
                        time_note += "; ANYCSP ran with its default 180 s limit"
                    if obj is not None:
                        add(f"{row['instance']}-k{k}", name, "cut", obj, src, cut_note)
                    if t is not None:
                        add(f"{row['instance']}-k{k}", name, "time_s", t, src, time_note)

    cols = _rows(TABLE2)
    for cells in cols[1:]:
        name = METHODS[cells[0]]
        for head, cell in zip(cols[0][1:], cells[1:], strict=True):
            size, kk = head.replace("N=", "").replace(",", "").split()
            k = int(kk[2:])
            d = {2: 3, 3: 5}[k]
            if _num(cell.split("±")[0]) is None:
                continue
            mean, std = (float(x) for x in cell.split("±"))
            inst = f"reg{d}-n{size}-k{k}-mean"
            note = f"mean over the 20 graphs of seeds 0-19 (our reg{d}-n{size}-s*-k{k}); ± {std:g} std over graphs"
            add(inst, name, "cut", mean, f"{PAPER}, Table 2", note)
            add(inst, name, "cut_std", std, f"{PAPER}, Table 2", "std over the 20 graphs")

    cols = _rows(WEIGHTED)
    for cells in cols[1:]:
        rng, tno, name = cells[0], cells[1], METHODS[cells[2]]
        for head, cell in zip(cols[0][3:], cells[3:], strict=True):
            graph, kk = head.split()
            value = _num(cell)
            if value is None:
                continue
            note = (
                f"weights x U[{rng.replace('_', ', ')}], 10 instances (seeds 0-9, our {graph}-w{rng}-s*-{kk.replace('=', '')}); "
                "probably the mean over them: the decimals suggest it, the paper does not say (inferred)"
            )
            add(f"{graph}-w{rng}-{kk.replace('=', '')}-mean", name, "cut", value, f"{PAPER}, Table {tno}", note)
    return out


def best_known_rows(shared: Path) -> list[dict[str, str]]:
    out = []
    with open(shared / "data" / "maxcut" / "gset_best_known_k2_k3.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        who = "; ".join(SOURCES[s] for s in r["BKV_attained_by"].split(";"))
        note = (
            "max over BLS 2013 (paper and authors' page), Lin & Guan 2016, MOH 2017, LPI 2024 and the SBM 2019 "
            "list; MOH and LPI values were transcribed from the ROS paper's Table 6, not from their papers"
        )
        if r["later_unverified_claim"]:
            note += (
                f". A later claim of {r['later_unverified_claim']} ({r['later_claim_source'].replace(', unverified', '')}) "
                "is UNVERIFIED and not used"
            )
        out.append({"graph": r["instance"], "k": "2", "value": r["BKV_max_of_listed"], "source": f"max of listed: {who}", "note": note})
    for r in rows:
        out.append(
            {
                "graph": r["instance"],
                "k": "3",
                "value": r["MOH2017_k3"],
                "source": "Ma & Hao 2017 (MOH), Ann. Oper. Res. 248:365-403, as printed in the ROS paper's Table 7",
                "note": (
                    "transcribed from the ROS paper (Qiu et al., ICML 2025) Table 7; the MOH paper itself was "
                    "not consulted, and whether later work improved the value is UNVERIFIED"
                ),
            }
        )
    return out


def _write(path: Path, header: str, fields: list[str], rows: list[dict[str, str]]) -> None:
    buf = io.StringIO()
    buf.write(header)
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    a = ap.parse_args()
    _write(
        TASK_DIR / "paper_results.csv",
        "# Numbers the ROS paper (Qiu et al., ICML 2025) reports; generated by scripts/maxcut/make_paper_results.py.\n"
        "# Tables 6/7: Gset k=2/k=3, cut and time_s per graph; 'N/A' (30-minute timeout) and '–' (cannot run) are omitted.\n"
        "# Table 2 (regular graphs) and Tables 3/8/9 (weighted Gset) are aggregates over 20 / 10 graphs: ids end in -mean.\n"
        "# Times are from the paper's hardware (RTX 3090), or quoted from other papers (moh, lpi).\n",
        ["instance", "method", "metric", "value", "source", "note"],
        paper_rows(a.shared),
    )
    _write(
        TASK_DIR / "best_known.csv",
        "# Best-known Max-k-Cut values of the Gset graphs; generated by scripts/maxcut/make_paper_results.py\n"
        "# from shared/data/maxcut/gset_best_known_k2_k3.csv. No k=4 values: none were verified (see README).\n",
        ["graph", "k", "value", "source", "note"],
        best_known_rows(a.shared),
    )


if __name__ == "__main__":
    main()
