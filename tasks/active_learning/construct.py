"""Settings, imbalance, noise and the prepared pools of the active-learning task.

One *setting* fixes everything the trusted side needs: the raw dataset, how
classes are merged (GALAXY / LabelBench "k-1 classes vs others") or
long-tail subsampled, the noise rate of the persistent noisy oracle, the
learner's head, the AL protocol (initial batch, batch size, rounds) and the
embedding (standardise + PCA fitted on the unlabelled pool).

Instance ids read ``<dataset>-k<k>-p<noise %>`` with optional suffixes
``-lt<rho>`` (long-tail, imbalance ratio 1/rho, after ``<dataset>``),
``-mlp`` (MLP head) and ``-cleanoracle`` (LabelBench's mode: strategies see
clean labels). Examples: ``digits-k3-p00``, ``letter-k10-p10``,
``letter-lt100-p20``.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tasks.active_learning.datasets import RAW, cache_dir, load_raw, raw_digest

__all__ = [
    "Setting",
    "Pool",
    "PROTOCOL",
    "parse_id",
    "merge_classes",
    "longtail_counts",
    "corrupt_labels",
    "build_pool",
    "prepared_pool",
    "load_pool",
    "fingerprint",
]

#: Version of the construction; part of every fingerprint (bump on any change).
CONSTRUCTION_VERSION = "1"
#: Seed of the class permutation before merging (fixed per instance, as GALAXY's is).
PERM_SEED = 0
#: Seed of the pool/test split (LabelBench splits with RandomState(42)).
SPLIT_SEED = 42
#: Seed of the noise (LabelBench's random corrupter uses RandomState(321)).
NOISE_SEED = 321
#: Seed of the long-tail subsample.
LT_SEED = 7
TEST_FRACTION = 0.3

#: Per dataset: (initial batch, batch size B, rounds, PCA dimensions).
PROTOCOL: dict[str, tuple[int, int, int, int]] = {
    "digits": (20, 20, 5, 32),
    "penbased": (50, 50, 20, 16),
    "letter": (100, 100, 20, 16),
    "caravan": (50, 50, 20, 32),
    "blobs10": (50, 50, 10, 16),
}
#: Long-tail pools are smaller (letter-lt100: 3,303 points), so their protocol is too.
PROTOCOL_LONGTAIL: dict[str, tuple[int, int, int, int]] = {
    "letter": (50, 25, 20, 16),
}


@dataclass(frozen=True)
class Setting:
    """Everything that defines one instance.

    ``k`` is the number of classes after merging (``k - 1`` kept classes plus
    "others"); ``0`` keeps every class (used with ``longtail``). ``noise`` is
    the fraction of pool labels flipped once. ``oracle`` is ``"noisy"`` (our
    default: strategies see what the annotator said) or ``"clean"``
    (LabelBench: strategies see clean labels; the learner still trains on
    noisy ones).
    """

    dataset: str
    k: int
    noise: float
    n_init: int
    batch: int
    rounds: int
    pca: int
    longtail: int = 0
    head: str = "logreg"
    oracle: str = "noisy"

    @property
    def budget(self) -> int:
        """Total labels: the initial batch plus ``rounds`` batches."""
        return self.n_init + self.rounds * self.batch

    def instance_id(self) -> str:
        lt = f"-lt{self.longtail}" if self.longtail else ""
        kk = f"-k{self.k}" if self.k else ""
        head = "-mlp" if self.head == "mlp" else ""
        orc = "-cleanoracle" if self.oracle == "clean" else ""
        return f"{self.dataset}{lt}{kk}-p{round(self.noise * 100):02d}{head}{orc}"


_ID = re.compile(
    r"^(?P<ds>[a-z0-9]+?)(?:-lt(?P<lt>[1-9][0-9]*))?(?:-k(?P<k>[1-9][0-9]*))?-p(?P<p>[0-9]{2})"
    r"(?P<mlp>-mlp)?(?P<clean>-cleanoracle)?$"
)
ID_FORMAT = "'<dataset>[-lt<rho>][-k<k>]-p<noise %, 2 digits>[-mlp][-cleanoracle]', e.g. 'letter-k10-p10'"


def parse_id(instance_id: str) -> Setting:
    """The :class:`Setting` an id names (``ValueError`` with the expected form otherwise)."""
    m = _ID.match(instance_id) if isinstance(instance_id, str) else None
    if m is None:
        raise ValueError(f"malformed active-learning instance id {instance_id!r}; expected {ID_FORMAT}")
    ds = m["ds"]
    if ds not in PROTOCOL:
        raise ValueError(f"instance {instance_id!r}: unknown dataset {ds!r}; known: {', '.join(sorted(PROTOCOL))}")
    k = int(m["k"]) if m["k"] else 0
    lt = int(m["lt"]) if m["lt"] else 0
    if lt and ds not in PROTOCOL_LONGTAIL:
        raise ValueError(f"instance {instance_id!r}: no long-tail protocol for {ds}; long-tail datasets: {', '.join(PROTOCOL_LONGTAIL)}")
    n_init, batch, rounds, pca = PROTOCOL_LONGTAIL[ds] if lt else PROTOCOL[ds]
    n_raw = RAW[ds].n_classes
    if not k and not lt:
        raise ValueError(f"instance {instance_id!r}: give -k<k> (merged classes) or -lt<rho> (long tail)")
    if k and not 2 <= k <= n_raw:
        raise ValueError(f"instance {instance_id!r}: k={k} must be in [2, {n_raw}] for {ds}")
    return Setting(
        dataset=ds,
        k=k,
        noise=int(m["p"]) / 100.0,
        n_init=n_init,
        batch=batch,
        rounds=rounds,
        pca=pca,
        longtail=lt,
        head="mlp" if m["mlp"] else "logreg",
        oracle="clean" if m["clean"] else "noisy",
    )


# ----------------------------------------------------------------------------- constructions


def merge_classes(y: np.ndarray, k: int, n_classes: int, seed: int = PERM_SEED) -> np.ndarray:
    """GALAXY/LabelBench imbalance: permute class ids, keep ``k - 1`` classes, merge the rest.

    ``y' = min(perm[y], k - 1)``: classes ``0..k-2`` keep their points, class
    ``k - 1`` ("others") holds every other point.
    """
    perm = np.random.default_rng(seed).permutation(n_classes)
    return np.minimum(perm[y], k - 1).astype(np.int64)


def longtail_counts(counts: np.ndarray, rho: int) -> np.ndarray:
    """CIFAR-LT class sizes ``n_c = n_max * rho^(-c/(K-1))`` capped by what each class has.

    ``counts`` are the available points per class (shape ``(K,)``); class
    ``c`` is the ``c``-th in the given order.
    """
    K = counts.size
    n_max = int(counts.max())
    want = np.floor(n_max * float(rho) ** (-np.arange(K) / (K - 1))).astype(np.int64)
    return np.minimum(np.maximum(want, 1), counts)


def corrupt_labels(y: np.ndarray, rate: float, n_classes: int, seed: int = NOISE_SEED) -> np.ndarray:
    """Persistent noise (LabelBench's ``random`` corrupter): flip ``floor(rate * n)`` labels once.

    Each chosen label moves to a uniformly random *other* class. The returned
    array is what the oracle answers, every time it is asked.
    """
    rng = np.random.default_rng(seed)
    out = y.copy()
    n_flip = int(np.floor(rate * y.size))
    if n_flip == 0:
        return out
    idx = rng.choice(y.size, size=n_flip, replace=False)
    shift = rng.integers(1, n_classes, size=n_flip)
    out[idx] = (y[idx] + shift) % n_classes
    return out


@dataclass
class Pool:
    """A prepared instance as numpy arrays (the trusted side keeps all of them).

    ``features``/``test_features`` are the learner's inputs (standardised,
    PCA; shape ``(n, d)``); ``clean``/``test_y`` the true classes; ``noisy`` the
    persistent oracle's answers on the pool.
    """

    setting: Setting
    features: np.ndarray
    clean: np.ndarray
    noisy: np.ndarray
    test_features: np.ndarray
    test_y: np.ndarray
    n_classes: int
    fingerprint: str

    @property
    def class_counts(self) -> np.ndarray:
        return np.bincount(self.clean, minlength=self.n_classes)

    @property
    def imbalance_ratio(self) -> float:
        c = self.class_counts
        return float(c.min() / c.max())


def fingerprint(setting: Setting) -> str:
    """sha256 of everything that defines the prepared pool (settings, raw data, versions)."""
    import sklearn

    # The learner's head and the oracle mode do not change the pool's data.
    base = replace(setting, head="logreg", oracle="noisy")
    blob = json.dumps(
        {
            "construction": CONSTRUCTION_VERSION,
            "setting": asdict(base),
            "raw": raw_digest(setting.dataset),
            "seeds": [PERM_SEED, SPLIT_SEED, NOISE_SEED, LT_SEED],
            "test_fraction": TEST_FRACTION,
            "sklearn_major": sklearn.__version__.split(".")[0],
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _embed(X_pool: np.ndarray, X_test: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """Standardise and project with PCA, both fitted on the (unlabelled) pool only."""
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X_pool)
    Zp, Zt = scaler.transform(X_pool), scaler.transform(X_test)
    dims = min(dims, X_pool.shape[1])
    pca = PCA(n_components=dims, svd_solver="full", random_state=0).fit(Zp)
    return pca.transform(Zp), pca.transform(Zt)


def build_pool(setting: Setting) -> Pool:
    """Build an instance's pool from the raw data (deterministic)."""
    from sklearn.model_selection import train_test_split

    X, y = load_raw(setting.dataset)
    n_raw = RAW[setting.dataset].n_classes
    if setting.k and setting.k < n_raw:
        y = merge_classes(y, setting.k, n_raw)
        K = setting.k
    else:
        K = n_raw
    idx_pool, idx_test = train_test_split(
        np.arange(y.size), test_size=TEST_FRACTION, stratify=y, random_state=SPLIT_SEED
    )
    idx_pool, idx_test = np.sort(idx_pool), np.sort(idx_test)
    if setting.longtail:
        rng = np.random.default_rng(LT_SEED)
        yp = y[idx_pool]
        order = rng.permutation(K)  # which class gets which tail position
        counts = np.bincount(yp, minlength=K)
        keep_n = longtail_counts(counts[order], setting.longtail)
        keep = []
        for pos, c in enumerate(order):
            members = idx_pool[yp == c]
            keep.append(np.sort(rng.choice(members, size=int(keep_n[pos]), replace=False)))
        idx_pool = np.sort(np.concatenate(keep))
    Zp, Zt = _embed(X[idx_pool], X[idx_test], setting.pca)
    clean = y[idx_pool].astype(np.int64)
    noisy = corrupt_labels(clean, setting.noise, K)
    return Pool(setting, Zp, clean, noisy, Zt, y[idx_test].astype(np.int64), K, fingerprint(setting))


# ----------------------------------------------------------------------------- Hugging Face pools


def _to_hf(pool: Pool) -> Any:
    import datasets
    import pyarrow as pa

    datasets.disable_progress_bars()

    def table(feats: np.ndarray, cols: dict[str, np.ndarray]) -> pa.Table:
        d = feats.shape[1]
        arr = pa.FixedSizeListArray.from_arrays(pa.array(feats.astype(np.float64).ravel()), d)
        return pa.table({"features": arr, **{k: pa.array(v) for k, v in cols.items()}})

    fp = pool.fingerprint
    pool_ds = datasets.Dataset(
        table(pool.features, {"label": pool.noisy, "clean_label": pool.clean}), fingerprint=fp[:32] + "pool"
    )
    test_ds = datasets.Dataset(table(pool.test_features, {"label": pool.test_y}), fingerprint=fp[:32] + "test")
    return datasets.DatasetDict({"pool": pool_ds, "test": test_ds})


def _pool_path(setting: Setting) -> Path:
    base = replace(setting, head="logreg", oracle="noisy")
    return cache_dir() / "pools" / f"{base.instance_id()}-{fingerprint(setting)[:16]}"


def prepared_pool(instance_id: str) -> tuple[Any, Path]:
    """The prepared pool of an instance as a ``datasets.DatasetDict`` (``pool``, ``test``).

    Built from the raw data on first use and saved under the cache directory
    by fingerprint; later calls load the saved Arrow files.
    """
    import datasets

    setting = parse_id(instance_id)
    path = _pool_path(setting)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Several workers may ask for the same pool at once: one builds it, the others wait and load it.
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        meta = path / "bench_pool.json"
        if meta.exists() and json.loads(meta.read_text()).get("fingerprint") == fingerprint(setting):
            return datasets.load_from_disk(str(path)), path
        pool = build_pool(setting)
        dd = _to_hf(pool)
        tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        dd.save_to_disk(str(tmp))
        (tmp / "bench_pool.json").write_text(
            json.dumps({"fingerprint": pool.fingerprint, "n_classes": pool.n_classes, "setting": asdict(pool.setting)})
        )
        shutil.rmtree(path, ignore_errors=True)
        tmp.replace(path)
    return datasets.load_from_disk(str(path)), path


@functools.lru_cache(maxsize=16)
def load_pool(instance_id: str) -> Pool:
    """:class:`Pool` of an instance, read from its prepared Hugging Face pool."""
    setting = parse_id(instance_id)
    dd, path = prepared_pool(instance_id)
    info = json.loads((path / "bench_pool.json").read_text())
    p = dd["pool"].with_format("numpy")
    t = dd["test"].with_format("numpy")
    pool = Pool(
        setting=setting,
        features=np.asarray(p["features"], dtype=np.float64),
        clean=np.asarray(p["clean_label"], dtype=np.int64),
        noisy=np.asarray(p["label"], dtype=np.int64),
        test_features=np.asarray(t["features"], dtype=np.float64),
        test_y=np.asarray(t["label"], dtype=np.int64),
        n_classes=int(info["n_classes"]),
        fingerprint=info["fingerprint"],
    )
    for a in (pool.features, pool.clean, pool.noisy, pool.test_features, pool.test_y):
        a.setflags(write=False)
    return pool
