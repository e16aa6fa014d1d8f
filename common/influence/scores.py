"""Influence scores shared by the method and the baselines of ``influence-attribution``.

Every score matrix is ``(n, n_test)``: row ``i`` estimates
``f_j(theta_{-i}) - f_j(theta_hat)`` (the change of test quantity ``j`` when
training point ``i`` is removed), up to a positive factor where the method
has no scale (TracIn). All derivatives come from ``torch.func``.

Signs: at the optimum ``grad L(theta_hat) = 0``, so one Newton step for the
objective without ``i`` gives ``theta_{-i} - theta_hat ~ H^{-1} (grad L(theta_hat)
- grad L_{-i}(theta_hat))``, ``H`` the Hessian of the full objective.
"""

from __future__ import annotations

import torch
from torch.func import grad, hessian, jacrev, vmap

from common.influence.autodiff import Problem

__all__ = ["hessian_solve", "vif", "naive_if", "tracin", "warm_up"]


def hessian_solve(p: Problem) -> torch.Tensor:
    """``H^{-1} grad f(theta_hat)^T``, ``(d, n_test)``: the full objective's Hessian by autodiff, solved
    against the test quantities' Jacobian."""
    H = hessian(p.full_loss)(p.theta)
    G = jacrev(p.test_quantities)(p.theta)  # (n_test, d)
    return torch.linalg.solve(H, G.T)


def vif(p: Problem, *, batch: int = 0) -> torch.Tensor:
    """VIF: ``grad f^T H^{-1} (grad L(theta_hat; 1) - grad L(theta_hat; 1 - e_i))`` for every ``i``.

    ``batch = 0``: one autodiff gradient per removed point, in a Python loop
    (the official code's ``score_cox.py``). ``batch > 0``: the same gradients,
    ``batch`` removals at a time through ``vmap`` (identical up to rounding).
    """
    V = hessian_solve(p)
    g = grad(p.loss)
    ones = p.ones()
    g_full = g(p.theta, ones)
    if batch <= 0:
        diffs = torch.empty(p.n, p.d, dtype=torch.float64)
        for i in range(p.n):
            w = ones.clone()
            w[i] = 0.0
            diffs[i] = g_full - g(p.theta, w)
    else:
        batched = vmap(g, in_dims=(None, 0))
        parts = []
        for start in range(0, p.n, batch):
            W = torch.ones(min(batch, p.n - start), p.n, dtype=torch.float64)
            rows = torch.arange(W.shape[0])
            W[rows, start + rows] = 0.0
            parts.append(g_full - batched(p.theta, W))
        diffs = torch.cat(parts)
    return diffs @ V


def naive_if(p: Problem) -> torch.Tensor:
    """The classical influence function with the loss read as a sum of per-point terms.

    Point ``i`` owns its own term only (its event's partial likelihood term,
    zero for a censored point; its place's ListMLE term); removing it drops
    that term and leaves the risk sets and lists as they were:
    ``grad f^T H^{-1} grad term_i(theta_hat)``.
    """
    V = hessian_solve(p)
    J = jacrev(p.terms)(p.theta)  # (n, d)
    return J @ V


def tracin(p: Problem) -> torch.Tensor:
    """TracIn-style gradient similarity at the trained model: ``grad term_i(theta_hat) . grad f_j(theta_hat)``.

    One checkpoint (the model is trained by Newton's method, not SGD, so there
    is no trajectory) and no Hessian; the per-point terms as in :func:`naive_if`.
    """
    J = jacrev(p.terms)(p.theta)
    G = jacrev(p.test_quantities)(p.theta)
    return J @ G.T


def warm_up() -> None:
    """Run every score once on a tiny problem, so that torch.func's lazy set-up is not timed in a job."""
    import numpy as np

    rng = np.random.default_rng(0)
    for loss in ("cox", "listmle"):
        data = {
            "loss": loss,
            "X": rng.standard_normal((12, 2)),
            "theta": np.zeros(2),
            "ridge": 1.0,
            "X_test": rng.standard_normal((4, 2)),
            "time": rng.random(12),
            "event": np.ones(12),
            "query": np.repeat(np.arange(3), 4),
            "position": np.tile(np.arange(4), 3),
            "query_test": np.zeros(4, dtype=np.int64),
            "position_test": np.arange(4),
        }
        p = Problem(data)
        vif(p)
        vif(p, batch=4)
        naive_if(p)
        tracin(p)
