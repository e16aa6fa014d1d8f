"""kmeans: a codebook per row from weighted k-means, SqueezeLLM-style (Kim et al., ICML 2024).

SqueezeLLM clusters each row's weights into ``2**b`` centroids with
scikit-learn's ``KMeans`` (``n_init="auto"``, ``max_iter=50``), each weight
weighted by its sensitivity; every weight then takes its nearest centroid.
SqueezeLLM's sensitivity is the Fisher information's diagonal (squared
gradients of the training loss), which a layer-wise task does not have; here
it is the layer objective's own curvature, ``H_jj = sum_x x_j^2`` (the
diagonal of ``X X^T``, shared by every row): the card's "diag(H)-weighted
k-means". Inputs that never fire (``H_jj = 0``) get a tiny weight so that a
row whose inputs are all dead is still clustered. The calibration inputs enter
only through that diagonal: no error feedback across columns.

References: Kim et al., SqueezeLLM: Dense-and-Sparse Quantization (ICML 2024),
github.com/SqueezeAILab/SqueezeLLM (``quantization/nuq.py``, read, not
copied); ``sklearn.cluster.KMeans``.
"""

from __future__ import annotations

import numpy as np

from bench import method
from tasks.lut_quantization import nearest_codes

__all__ = ["kmeans_layer", "solve"]


def kmeans_layer(
    W: np.ndarray, X: np.ndarray, bits: int, *, seed: int, max_iter: int = 50, weighted: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row weighted k-means: ``(codebook (m, 2**bits), codes (m, n) uint8)``."""
    from sklearn.cluster import KMeans

    W = np.asarray(W, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    k = 2**bits
    weights = np.einsum("np,np->n", X, X) if weighted else np.ones(W.shape[1])
    weights = np.maximum(weights, 1e-12 * max(float(weights.max()), 1e-300))
    T = np.empty((W.shape[0], k))
    for i, row in enumerate(W):
        distinct = np.unique(row)
        if len(distinct) <= k:  # fewer values than levels: each is its own centroid
            T[i] = np.concatenate([distinct, np.full(k - len(distinct), distinct[-1])])
            continue
        km = KMeans(n_clusters=k, n_init="auto", max_iter=max_iter, random_state=seed)
        km.fit(row[:, None], sample_weight=weights)
        T[i] = np.sort(km.cluster_centers_[:, 0])
    return T, nearest_codes(W, T)


@method(
    name="kmeans",
    kind="baseline",
    tasks=["lut-quantization"],
    reference="Kim et al., SqueezeLLM (ICML 2024): per-row weighted k-means with scikit-learn; weights diag(X X^T) instead of the Fisher diagonal",
    version="1",
    params={"max_iter": 50},
    description="per-row k-means codebooks (sklearn KMeans, k-means++), each weight weighted by diag(X X^T)",
)
def solve(instance, *, seed: int, budget: float, max_iter: int) -> dict:
    """Weighted k-means on every row of every layer; ``seed`` seeds KMeans' k-means++ starts."""
    bits = int(instance.data["bits"])
    out = {}
    for k, name in enumerate(instance.data["layers"]):
        state = int(np.random.default_rng([seed, k]).integers(2**32))  # KMeans takes a 32-bit seed
        T, codes = kmeans_layer(
            instance.data["W/" + name],
            instance.data["X/" + name],
            bits,
            seed=state,
            max_iter=max_iter,
        )
        out[name] = {"codebook": T, "codes": codes}
    return out
