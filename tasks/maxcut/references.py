"""Reference values of maxcut instances, each with its source.

- ``best_known``: Gset only, k=2 and k=3, from ``best_known.csv`` (generated
  by ``scripts/maxcut/make_paper_results.py`` from the research notes; sources in each row).
  There is no k=4 reference: MOH 2017 reports k=4 values, but its tables could
  not be consulted, and no number is quoted from memory.
- ``random``: the expected cut of a uniformly random k-labelling, exactly
  ``(k-1)/k`` of the total weight (each edge is cut with probability (k-1)/k).
- ``upper_bound``: the total positive weight. No cut exceeds it; a best-known
  value equal to it is therefore optimal (noted on the reference).
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

from bench.task import Reference
from tasks.maxcut.graph import positive_weight, random_cut_expectation

__all__ = ["best_known", "references"]

_HERE = Path(__file__).resolve().parent


@functools.cache
def _best_known_table() -> dict[tuple[str, int], Reference]:
    with open(_HERE / "best_known.csv", newline="") as fh:
        rows = csv.DictReader(line for line in fh if not line.startswith("#"))
        return {
            (r["graph"], int(r["k"])): Reference(value=float(r["value"]), source=r["source"], note=r["note"])
            for r in rows
        }


def best_known(graph: str, k: int) -> Reference | None:
    """Best-known cut of Gset graph ``graph`` for ``k`` parts, or ``None`` (k=4, generated graphs)."""
    return _best_known_table().get((graph, int(k)))


def references(graph: str, data: dict[str, Any], *, gset: bool) -> dict[str, Reference]:
    """All references of one instance; ``data`` is its public data (n, k, edges, weights)."""
    k = int(data["k"])
    bound = positive_weight(data)
    refs = {
        "random": Reference(
            value=random_cut_expectation(data),
            source="exact: (k-1)/k of the total weight",
            note="expected cut of a uniformly random k-labelling",
        ),
        "upper_bound": Reference(
            value=bound,
            source="exact: total positive edge weight",
            note="no cut exceeds it; it is loose when negative or uncuttable edges exist",
        ),
    }
    best = best_known(graph, k) if gset else None
    if best is not None:
        if best.value == bound:
            best = best.model_copy(
                update={"note": best.note + f"; provably optimal: equals the total positive weight {bound:g}"}
            )
        refs["best_known"] = best
    return refs
