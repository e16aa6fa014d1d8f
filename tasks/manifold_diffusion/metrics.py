"""Sample-quality metrics owned by the task: C2ST, MMD, held-out NLL of a KDE, mode coverage.

Every function is deterministic (seeds are arguments) and uses one thread.
None of them is the official code's torus "log-likelihood" (the mean log density of the
*true* target at the generated points), which rewards collapsing onto the mode; it is
kept only as :func:`official_torus_loglik`, to demonstrate that flaw in the tests.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import i0e, logsumexp

from tasks.manifold_diffusion import reproducible as R

__all__ = [
    "c2st",
    "mmd2",
    "median_bandwidth",
    "kde_nll",
    "mode_coverage",
    "mode_radius",
    "official_torus_loglik",
]


def c2st(real: np.ndarray, fake: np.ndarray, *, seed: int = 0, folds: int = 5, epochs: int = 30) -> float:
    """Classifier two-sample test accuracy in [0, 1]: 0.5 means indistinguishable.

    The classifier is fixed by the task: features standardised with the real sample's
    mean and std, an MLP ``m -> 128 -> 128 -> 1`` (SiLU), Adam (lr 1e-3, batch 128,
    ``epochs`` passes), ``folds``-fold cross-validation on the balanced pooled sample;
    the score is the mean held-out accuracy (not folded: below 0.5 is chance noise).
    Unlike the official ``C2ST_utils.py`` it is a fraction, not a percent.
    """
    n = min(len(real), len(fake))
    x = np.concatenate([real[:n], fake[:n]]).astype(np.float64)
    mu, sd = real[:n].mean(0), real[:n].std(0) + 1e-6
    x = ((x - mu) / sd).astype(np.float32)
    y = np.concatenate([np.zeros(n), np.ones(n)]).astype(np.float32)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(2 * n)
    fold_of = np.empty(2 * n, dtype=int)
    fold_of[perm] = np.arange(2 * n) % folds
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    accs = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for f in range(folds):
            tr, te = np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)
            g = torch.Generator().manual_seed(seed * 1000 + f)
            net = torch.nn.Sequential(
                torch.nn.Linear(x.shape[1], 128), torch.nn.SiLU(),
                torch.nn.Linear(128, 128), torch.nn.SiLU(), torch.nn.Linear(128, 1),
            )
            with torch.no_grad():
                for p in net.parameters():
                    p.copy_(torch.randn(p.shape, generator=g) * (1.0 / math.sqrt(p.shape[-1])) if p.ndim == 2 else torch.zeros_like(p))
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            trt = torch.from_numpy(tr)
            for _ in range(epochs):
                order = trt[torch.randperm(len(tr), generator=g)]
                for b in range(0, len(order), 128):
                    idx = order[b : b + 128]
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(net(xt[idx]).squeeze(-1), yt[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            with torch.no_grad():
                pred = (net(xt[te]).squeeze(-1) > 0).float()
            accs.append(float((pred == yt[te]).float().mean()))
    finally:
        torch.set_num_threads(threads)
    return float(np.mean(accs))


def median_bandwidth(feats: np.ndarray, max_points: int = 1000) -> float:
    """Median pairwise Euclidean distance of (up to ``max_points``) embedded points."""
    f = feats[:max_points]
    d2 = R.sq_dists(f, f)  # a fixed summation order: the bandwidth is part of the instance digest
    iu = np.triu_indices(len(f), 1)
    return float(np.sqrt(np.median(d2[iu])))


def mmd2(real: np.ndarray, fake: np.ndarray, bandwidth: float) -> float:
    """Unbiased MMD^2 with the Gaussian kernel ``exp(-|a - b|^2 / (2 h^2))`` on the embedding.

    On the torus embedding ``(cos, sin)`` this kernel is a product of von Mises kernels;
    on S^2, SO(n) and U(n) it is ``exp(kappa <a, b>)`` up to a constant (points have fixed
    norm), a characteristic kernel on these compact manifolds. 0 means equal distributions;
    it can be slightly negative by chance.
    """

    def k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d2 = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2 * a @ b.T
        return np.exp(-np.maximum(d2, 0.0) / (2 * bandwidth**2))

    m, n = len(real), len(fake)
    kxx, kyy, kxy = k(real, real), k(fake, fake), k(real, fake)
    sxx = (kxx.sum() - np.trace(kxx)) / (m * (m - 1))
    syy = (kyy.sum() - np.trace(kyy)) / (n * (n - 1))
    return float(sxx + syy - 2 * kxy.mean())


# ----------------------------------------------------------------------------- KDE NLL

_KAPPAS = np.geomspace(0.5, 2000.0, 40)


def _log_i0(k: float) -> float:
    return math.log(i0e(k)) + k


def _so3_log_norm(kappa: float) -> float:
    """log of int_{SO(3)} exp(kappa (tr R - 3) / 2) dR (Haar, total mass 1).

    The rotation angle theta has density (1 - cos theta) / pi on [0, pi] and tr R = 1 + 2 cos theta.
    """
    th = np.linspace(0.0, math.pi, 4001)
    f = np.exp(kappa * (np.cos(th) - 1.0)) * (1.0 - np.cos(th)) / math.pi
    return float(math.log(np.trapezoid(f, th)))


def _similarity(manifold: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The part of ``log k_kappa(a_i, b_j)`` that multiplies ``kappa`` (computed once per pair of sets)."""
    if manifold == "torus":
        return np.cos(a[:, None, :] - b[None, :, :]).sum(-1)
    if manifold == "sphere":
        return a @ b.T
    if manifold == "so" and a.shape[1] == 9:
        return (a @ b.T - 3.0) / 2.0  # (tr(A^T B) - 3) / 2 for flattened 3x3 matrices
    raise ValueError(f"no normalised kernel for {manifold}")


def _log_norm(manifold: str, d: int, kappa: float) -> float:
    """log of the kernel's normaliser w.r.t. the uniform measure."""
    if manifold == "torus":
        return d * (math.log(2 * math.pi) + _log_i0(kappa))
    if manifold == "sphere":
        # vMF on S^2: C = kappa / (4 pi sinh kappa)
        return -(math.log(kappa) - math.log(2 * math.pi) - kappa - math.log1p(-math.exp(-2 * kappa)))
    return _so3_log_norm(kappa)


def _kernel_logs(manifold: str, a: np.ndarray, b: np.ndarray, kappa: float) -> np.ndarray:
    """``log k_kappa(a_i, b_j)``: normalised kernels (densities in the second argument)."""
    return kappa * _similarity(manifold, a, b) - _log_norm(manifold, a.shape[1], kappa)


def kde_nll(manifold: str, fake: np.ndarray, held_out: np.ndarray, fit_points: int = 1000) -> float:
    """Held-out negative log-likelihood (nats per point) of a KDE fit to the generated samples.

    Kernels: product von Mises (torus), von Mises-Fisher (S^2), matrix-Fisher on SO(3)
    (``exp(kappa (tr(A^T B) - 3)/2)``), each with its exact normaliser w.r.t. the uniform
    (Haar / Lebesgue on angles / area) measure, so values are comparable across methods.
    The concentration is chosen from a fixed grid by leave-one-out likelihood on the
    generated samples alone; the held-out points are used only to score.
    ``fake`` and ``held_out`` are raw points (torus angles, unit vectors, flattened SO(3)).
    """
    fit = fake[:fit_points]
    sim = _similarity(manifold, fit, fit)
    np.fill_diagonal(sim, -np.inf)
    best, best_k = -np.inf, _KAPPAS[0]
    for kappa in _KAPPAS:
        lk = kappa * sim - _log_norm(manifold, fit.shape[1], float(kappa))
        loo = float(np.mean(logsumexp(lk, axis=1) - math.log(len(fit) - 1)))
        if loo > best:
            best, best_k = loo, float(kappa)
    out = []
    for s in range(0, len(held_out), 500):
        lk = _kernel_logs(manifold, held_out[s : s + 500], fake, best_k)
        out.append(logsumexp(lk, axis=1) - math.log(len(fake)))
    return float(-np.mean(np.concatenate(out)))


def mode_radius(held_feats: np.ndarray, centre_feats: np.ndarray, q: float = 0.95) -> float:
    """The ``q`` quantile of the held-out sample's embedding distance to its nearest centre."""
    d2 = R.sq_dists(held_feats, centre_feats)  # fixed order: part of the instance digest
    return float(np.quantile(np.sqrt(d2.min(1)), q))


def mode_coverage(feats: np.ndarray, centre_feats: np.ndarray, radius: float, min_share: float = 0.5) -> float:
    """Fraction of the ``K`` equal-weight modes holding at least ``min_share / K`` of the samples
    within ``radius`` of their centre (embedding distance).

    ``radius`` is :func:`mode_radius` of the held-out sample, so a perfect sampler puts about
    ``0.95 / K`` of its points in each ball and scores 1; one collapsed onto a single mode scores
    ``1 / K``, and a uniform sampler (balls are small) about 0.
    """
    d2 = ((feats[:, None, :] - centre_feats[None, :, :]) ** 2).sum(-1)
    near = np.sqrt(d2.min(1)) <= radius
    counts = np.bincount(d2.argmin(1)[near], minlength=len(centre_feats))
    share = counts / max(len(feats), 1)
    return float(np.mean(share >= min_share / len(centre_feats)))


def official_torus_loglik(x: np.ndarray, var: float = 0.2, wraps: int = 10) -> float:
    """The official code's torus metric (``utils/eval_utils.py``): mean log density of the
    *true* wrapped ``N(0, var)`` per coordinate at the generated points. Kept only to show
    it rewards mode collapse (research note 3.2); never reported as a task metric.
    """
    k = np.arange(-wraps, wraps + 1)
    z = x[..., None] + 2 * math.pi * k
    dens = np.exp(-(z**2) / (2 * var)).sum(-1) / math.sqrt(2 * math.pi * var)
    return float(np.mean(np.log(dens)))
