"""Pieces every manifold-diffusion model shares: the two-round protocol, budgets, networks, schedules.

The task asks each model twice (see ``tasks/manifold_diffusion``): ``{"phase": "train"}``
then ``{"phase": "sample", "n"}``. :class:`TrainThenSample` turns that into ``fit`` and
``sample`` calls and enforces the instance's training budget: at most ``train_iters``
steps of ``batch_size`` and at most ``train_seconds`` of wall time (and never past
the job's own deadline, :func:`bench.time_left`, less a reserve for sampling).
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from bench import time_left, truncated

__all__ = ["TrainThenSample", "MLP", "VPSchedule", "batched_polar", "to_numpy_points", "canonical_rows", "data_reference", "gauge_coordinate", "torus_seams"]

TWO_PI = 2.0 * math.pi


class VPSchedule:
    """Linear ``beta(s) = beta_min + (beta_max - beta_min) s`` on forward time ``s in [0, 1]``.

    ``B(s) = int_0^s beta``; ``Z_s | Z_0 ~ N(exp(-B/2) Z_0, (1 - exp(-B)) I)``.
    """

    def __init__(self, beta_min: float, beta_max: float) -> None:
        self.b0, self.b1 = float(beta_min), float(beta_max)

    def beta(self, s: torch.Tensor) -> torch.Tensor:
        return self.b0 + (self.b1 - self.b0) * s

    def big_b(self, s: torch.Tensor) -> torch.Tensor:
        return self.b0 * s + 0.5 * (self.b1 - self.b0) * s**2

    def mean_std(self, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = self.big_b(s)
        return torch.exp(-0.5 * b), torch.sqrt(-torch.expm1(-b))


class MLP(nn.Module):
    """``[x, t] -> hidden x layers -> out``; ``act`` is ``"sin"`` (the official torus net) or ``"silu"``."""

    def __init__(self, d_in: int, d_out: int, hidden: int = 256, layers: int = 3, act: str = "silu") -> None:
        super().__init__()
        dims = [d_in + 1] + [hidden] * layers
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True))
        self.out = nn.Linear(hidden, d_out)
        self.act = torch.sin if act == "sin" else nn.functional.silu

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = torch.cat([x, t.reshape(-1, 1).to(x.dtype)], dim=1)
        for lin in self.lins:
            h = self.act(lin(h))
        return self.out(h)


def batched_polar(m: torch.Tensor) -> torch.Tensor:
    """Nearest orthogonal/unitary matrix ``U V^H`` of each matrix (SVD)."""
    u, _, vh = torch.linalg.svd(m)
    return u @ vh


def gauge_coordinate(u: torch.Tensor, ref: torch.Tensor | None = None) -> torch.Tensor:
    """``(..., n)``: the coordinate of each row that :func:`canonical_rows` makes real and ``>= 0``.

    The first entry (``ref=None``, the official gauge) or the inner product ``<u_i, ref_i>``.
    """
    return u[..., :, 0] if ref is None else (u * ref.to(u.dtype).conj()).sum(-1)


def canonical_rows(u: torch.Tensor, ref: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotate each row's phase so a reference coordinate is real and >= 0; returns ``(canonical, phases)``.

    ``u = diag(exp(i phases)) canonical``. For real matrices the phases are 0 or pi.

    Parameters
    ----------
    u
        ``(..., n, n)`` orthogonal or unitary matrices; the rows are the eigenvectors.
    ref
        ``None`` (the official code's gauge): the first entry of each row is made real and
        ``>= 0``. An ``(n, n)`` matrix: row ``i``'s inner product ``<u_i, ref_i> = sum_j u_ij
        conj(ref_ij)`` is made real and ``>= 0`` instead (see :func:`data_reference`).
    """
    first = gauge_coordinate(u, ref)
    if u.is_complex():
        ph = torch.angle(first)
        ph = torch.where(first.abs() < 1e-30, torch.zeros_like(ph), ph)
        return u * torch.exp(-1j * ph)[..., None], ph
    sign = torch.where(first < 0, -1.0, 1.0).to(u.dtype)
    return u * sign[..., None], torch.where(first < 0, math.pi, 0.0).to(u.dtype)


def data_reference(x: np.ndarray, iters: int = 100) -> np.ndarray:
    """Per-row reference directions for :func:`canonical_rows`, fitted to training matrices ``(N, n, n)``.

    Row ``i`` of the result is a unit direction ``r`` that (locally) maximises ``E |<u_i, r>|``
    over the data's ``i``-th rows ``u_i``, a quantity that does not depend on the rows' signs or
    phases: start at the top eigenvector of ``E[u_i u_i^H]``, then iterate ``r <- mean of the rows
    gauged against r``, normalised (the fixed-point step of that maximisation). Gauging against
    ``r`` keeps the sign boundary ``<u_i, r> = 0`` away from the data, where the first-entry gauge
    can cut through a mixture component: on this task's SO(6) target a row's first-entry sign is
    close to 50/50 inside one component, against at most about 15 % with this reference.
    The mean absolute inner product, not the mean square, is maximised because the latter is
    indifferent between a reference through one component's row and one between two
    orthogonal components' rows, while only the second keeps both away from the boundary.
    """
    x = np.asarray(x)
    n = x.shape[1]
    out = np.empty((n, n), dtype=x.dtype)
    for i in range(n):
        v = x[:, i, :]
        r = np.linalg.eigh(v.T @ v.conj() / len(v))[1][:, -1]
        for _ in range(iters):
            c = v @ r.conj()
            gauge = np.conj(c) / np.maximum(np.abs(c), 1e-30)
            nxt = (v * gauge[:, None]).mean(0)
            nxt /= np.linalg.norm(nxt)
            done = np.allclose(nxt, r, rtol=0.0, atol=1e-12)
            r = nxt
            if done:
                break
        out[i] = r
    return out


def torus_seams(x: np.ndarray, bins: int = 72) -> np.ndarray:
    """Per-coordinate seam angles for the torus lift, fitted to training angles ``(N, d)``.

    The training marginal of coordinate ``j`` is counted in ``bins`` equal arcs and smoothed by
    a circular 5-arc moving sum (so one empty arc inside a mode does not win); the seam is the
    middle of the longest circular run of arcs at the minimum count (ties: the run that starts
    at the lowest angle). For the signs of SO(n) rows, angles in ``{0, pi}``, that is
    ``pi / 2``. Lifting each angle to the arc that starts at its seam keeps the lift's cut away
    from the data, as :func:`data_reference` keeps the sign boundary of SO(n)/U(n) rows away
    from it.
    """
    x = np.mod(np.asarray(x, dtype=np.float64), TWO_PI)
    idx = np.minimum((x / TWO_PI * bins).astype(np.int64), bins - 1)
    out = np.empty(x.shape[1])
    for j in range(x.shape[1]):
        counts = np.bincount(idx[:, j], minlength=bins).astype(np.float64)
        smooth = sum(np.roll(counts, k) for k in range(-2, 3))
        low = smooth == smooth.min()
        best, best_len = 0, 0
        for start in range(bins):
            if not low[start] or (low[start - 1] and not low.all()):
                continue  # not the start of a run
            length = 0
            while length < bins and low[(start + length) % bins]:
                length += 1
            if length > best_len:
                best, best_len = start, length
        out[j] = ((best + best_len / 2.0) % bins) * TWO_PI / bins
    return out


def to_numpy_points(manifold: str, x: torch.Tensor) -> np.ndarray:
    """Samples in the task's representation: float64 (torus angles reduced mod 2 pi) or complex128."""
    a = x.detach().cpu().numpy()
    if manifold == "u":
        return a.astype(np.complex128)
    a = a.astype(np.float64)
    if manifold == "torus":
        a = np.mod(a, TWO_PI)
        a[a >= TWO_PI] = 0.0
    if manifold == "sphere":
        a /= np.linalg.norm(a, axis=1, keepdims=True)
    return a


class TrainThenSample:
    """Base class of the family's models: subclasses implement ``init_model``, ``train_step``, ``sample``.

    Parameters
    ----------
    instance
        Public instance (``instance.data`` as in ``tasks/manifold_diffusion``).
    seed, budget
        As the runner passes them.
    lr
        Adam learning rate.
    """

    #: seconds kept back from the job deadline for sampling, per sample point and step
    sample_reserve_s: float = 3.0

    def __init__(self, instance: Any, *, seed: int, budget: float, lr: float = 5e-4, **params: Any) -> None:
        torch.set_num_threads(1)
        self.data = instance.data
        self.manifold = str(self.data["manifold"])
        self.n = int(self.data["n"])
        self.train_np = np.array(self.data["train"])
        self.seed = int(seed)
        self.gen = torch.Generator().manual_seed(self.seed)
        self.np_rng = np.random.default_rng(self.seed)
        torch.manual_seed(self.seed)
        self.lr = float(lr)
        self.budget = float(budget)
        self.params = params
        self.iters_done = 0
        self.t_created = time.monotonic()
        self.init_model()

    # -- subclass hooks ------------------------------------------------------------
    def init_model(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def train_step(self, batch: torch.Tensor) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def sample(self, n: int, steps: int) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def train_tensor(self) -> torch.Tensor:
        """The training points as a tensor (float32, or complex64 for U(n))."""
        if self.manifold == "u":
            return torch.from_numpy(self.train_np.astype(np.complex64))
        return torch.from_numpy(self.train_np.astype(np.float32))

    # -- protocol --------------------------------------------------------------------
    def fit(self, iters: int, batch_size: int, seconds: float) -> int:
        """Train for ``iters`` steps, stopping early at ``seconds`` or near the job deadline."""
        data = self.train_tensor()
        n = data.shape[0]
        t0 = time.monotonic()
        stop_reason = "iterations"
        for it in range(int(iters)):
            if time.monotonic() - t0 >= seconds:
                stop_reason = f"train_seconds={seconds:g}"
                break
            if time_left() < self.sample_reserve_s:
                # train_seconds is the task's equal budget (the protocol); the job's clock is not:
                # a run it cuts short is never compared with the others
                stop_reason = "job deadline"
                truncated(f"training stopped after {it} of {int(iters)} iterations, {self.sample_reserve_s:g} s before the job's deadline")
                break
            idx = torch.randint(0, n, (int(batch_size),), generator=self.gen)
            self.train_step(data[idx])
            self.iters_done = it + 1
        dt = time.monotonic() - t0
        print(f"trained {self.iters_done} iterations in {dt:.2f} s (stopped by {stop_reason})", file=sys.stderr)
        return self.iters_done

    def select(self, state: dict[str, Any]) -> Any:
        """Answer the task's two rounds: train, then return ``state["n"]`` samples."""
        if state.get("phase") == "train":
            self.fit(int(state["train_iters"]), int(state["batch_size"]), float(state["train_seconds"]))
            return None
        if state.get("phase") == "sample":
            with torch.no_grad():
                return self.sample(int(state["n"]), int(state.get("sample_steps", 100)))
        raise ValueError(f"unknown phase {state.get('phase')!r}")


def make_adam(*modules: nn.Module, lr: float) -> torch.optim.Optimizer:
    """One Adam over the parameters of ``modules``."""
    return torch.optim.Adam([p for m in modules for p in m.parameters()], lr=lr)
