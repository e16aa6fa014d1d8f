"""f-divergence generators, the f-softargmax by parallel bisection, and the Fenchel–Young loss.

Registers nothing: ``fsoftargmax.py`` registers one method per divergence, and
the tests and ``scripts/sparse_losses/`` import these functions.

The construction (Roulet et al., ICML 2025, §3–4; the operator formula is the
Fenchel–Young one, UNVERIFIED against the paper's equations, see the family
README): the regulariser is ``Ω(p) = D_f(p, q) = Σ_j q_j f(p_j / q_j)`` on the
simplex, the operator is

    f-softargmax(θ)_j = q_j · g(θ_j − τ),   g = (f')⁻¹ extended by 0 below f'(0),

with the scalar ``τ`` chosen so that the output sums to one, and the loss is
``ℓ(θ, y) = Ω*(θ) + Ω(e_y) − θ_y`` with ``∇_θ ℓ = f-softargmax(θ) − e_y``.
``Σ_j q_j g(θ_j − τ)`` decreases in ``τ``, and with ``θ_max = max_j θ_j``:

- at ``τ_lo = θ_max − f'(1 / q_max)`` it is ``≥ 1`` (the largest term alone is 1);
- at ``τ_hi = θ_max − f'(1 / Σ_j q_j)`` it is ``≤ 1`` (every term is at most the largest),

so the bisection works on every row at once (parallel over rows and classes)
and ends with a renormalisation, as ``entmax.entmax_bisect`` does.
``q = 1`` (the unit reference measure) by default: the paper's abstract states
the equivalence with Tsallis α-negentropy, hence entmax-α, for unit measures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

__all__ = ["DIVERGENCES", "Divergence", "alpha_divergence", "fsoftargmax", "fy_loss", "fy_surrogate"]


@dataclass(frozen=True)
class Divergence:
    """A generator ``f`` of an f-divergence, with what the operator needs.

    ``f`` (on ratios ``t >= 0``, ``inf`` where undefined), ``fprime`` (``f'``,
    at ``t > 0``), ``ginv`` (``(f')⁻¹`` extended: 0 below ``f'(0⁺)``; its
    argument stays below ``sup f'`` inside the bisection's bracket).
    """

    name: str
    f: Callable[[torch.Tensor], torch.Tensor]
    fprime: Callable[[float], float]
    ginv: Callable[[torch.Tensor], torch.Tensor]


def alpha_divergence(alpha: float) -> Divergence:
    """``f(t) = (t^α − 1 − α(t − 1)) / (α(α − 1))`` for ``α > 1``: ``f'(t) = (t^{α−1} − 1)/(α − 1)``.

    ``(f')⁻¹(u) = [1 + (α − 1) u]_+^{1/(α−1)}``; with ``q = 1`` the operator is
    entmax-α (α = 2: sparsemax).
    """
    if not alpha > 1:
        raise ValueError(f"alpha_divergence needs alpha > 1 here (sparse family), got {alpha}")
    a = float(alpha)

    def f(t: torch.Tensor) -> torch.Tensor:
        return (t.clamp_min(0) ** a - 1 - a * (t - 1)) / (a * (a - 1))

    return Divergence(
        name=f"alpha{a:g}",
        f=f,
        fprime=lambda t: (t ** (a - 1) - 1) / (a - 1),
        ginv=lambda u: (1 + (a - 1) * u).clamp_min(0) ** (1 / (a - 1)),
    )


def _xlogx(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t > 0, t * torch.log(t.clamp_min(1e-300)), torch.zeros_like(t))


KL = Divergence(
    name="kl",  # f(t) = t log t − t + 1; the operator is softargmax
    f=lambda t: _xlogx(t) - t + 1,
    fprime=math.log,
    ginv=torch.exp,
)
REVERSE_KL = Divergence(
    name="reverse-kl",  # f(t) = −log t + t − 1; f' = 1 − 1/t; dense output, f(0) = inf
    f=lambda t: torch.where(t > 0, -torch.log(t.clamp_min(1e-300)) + t - 1, torch.full_like(t, math.inf)),
    fprime=lambda t: 1 - 1 / t,
    ginv=lambda u: 1 / (1 - u),  # u < 1 inside the bracket
)
HELLINGER = Divergence(
    name="hellinger",  # f(t) = (√t − 1)²; f' = 1 − t^{-1/2}; dense output
    f=lambda t: (t.clamp_min(0).sqrt() - 1) ** 2,
    fprime=lambda t: 1 - t**-0.5,
    ginv=lambda u: (1 - u) ** -2,  # u < 1 inside the bracket
)
JS = Divergence(
    name="js",  # f(t) = t log t − (t + 1) log((t + 1)/2); f' = log(2t/(t + 1)); dense output
    f=lambda t: _xlogx(t) - (t + 1) * torch.log((t + 1) / 2),
    fprime=lambda t: math.log(2 * t / (t + 1)),
    ginv=lambda u: torch.exp(u) / (2 - torch.exp(u)),  # u < log 2 inside the bracket
)

#: The divergences registered as methods, by the name their method carries.
DIVERGENCES: dict[str, Divergence] = {
    "alpha15": alpha_divergence(1.5),
    "alpha2": alpha_divergence(2.0),
    "kl": KL,
    "reverse-kl": REVERSE_KL,
    "hellinger": HELLINGER,
    "js": JS,
}


def fsoftargmax(theta: torch.Tensor, div: Divergence, *, q: torch.Tensor | None = None, n_iter: int = 50) -> torch.Tensor:
    """f-softargmax of logits ``theta`` (``(..., k)``) along the last axis, by bisection on ``τ``.

    ``q``: reference measure (``(k,)``, positive; ``None`` = all ones).
    Returns probabilities of ``theta``'s shape and dtype. Not differentiable
    (no autograd through the loop): the loss's gradient is ``p − e_y`` in
    closed form (:func:`fy_surrogate`).
    """
    with torch.no_grad():
        k = theta.shape[-1]
        qv = torch.ones(k, dtype=theta.dtype, device=theta.device) if q is None else q.to(theta)
        qmax, qsum = float(qv.max()), float(qv.sum())
        tmax = theta.max(dim=-1, keepdim=True).values
        lo = tmax - div.fprime(1.0 / qmax)
        hi = tmax - div.fprime(1.0 / qsum)
        for _ in range(n_iter):
            mid = (lo + hi) / 2
            total = (qv * div.ginv(theta - mid)).sum(dim=-1, keepdim=True)
            above = total >= 1  # root lies at or right of mid
            lo = torch.where(above, mid, lo)
            hi = torch.where(above, hi, mid)
        p = qv * div.ginv(theta - lo)  # lo keeps total >= 1: never an empty support
        return p / p.sum(dim=-1, keepdim=True)


def omega(p: torch.Tensor, div: Divergence, q: torch.Tensor | None = None) -> torch.Tensor:
    """``Ω(p) = Σ_j q_j f(p_j / q_j)`` along the last axis."""
    qv = torch.ones(p.shape[-1], dtype=p.dtype) if q is None else q.to(p)
    return (qv * div.f(p / qv)).sum(dim=-1)


def fy_loss(theta: torch.Tensor, y: torch.Tensor, div: Divergence, *, q: torch.Tensor | None = None, n_iter: int = 50) -> torch.Tensor:
    """The Fenchel–Young loss per row, ``⟨θ, p⟩ − Ω(p) + Ω(e_y) − θ_y`` at ``p = f-softargmax(θ)``.

    Its value is ``inf`` where ``f(0) = inf`` (reverse KL: ``Ω(e_y)`` is
    infinite, a constant that training never needs). ``y``: int64 labels.
    """
    p = fsoftargmax(theta, div, q=q, n_iter=n_iter)
    onehot = torch.nn.functional.one_hot(y, theta.shape[-1]).to(theta)
    return (theta * (p - onehot)).sum(-1) - omega(p, div, q) + omega(onehot, div, q)


def fy_surrogate(theta: torch.Tensor, y: torch.Tensor, div: Divergence, *, q: torch.Tensor | None = None, n_iter: int = 50) -> torch.Tensor:
    """Mean over rows of ``⟨θ, sg(p) − e_y⟩``: the loss's gradient ``(p − e_y) / n``, without its constants.

    ``sg`` stops the gradient, so autograd gives exactly the Fenchel–Young
    gradient (Danskin); the value is the loss up to terms constant in ``θ``'s
    gradient, which is all a first-order optimiser uses.
    """
    p = fsoftargmax(theta, div, q=q, n_iter=n_iter)
    onehot = torch.nn.functional.one_hot(y, theta.shape[-1]).to(theta)
    return (theta * (p - onehot)).sum(-1).mean()
