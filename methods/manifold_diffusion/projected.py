"""``projected-diffusion``: the paper's model, an Euclidean OU process projected onto the manifold.

Mangoubi, He and Vishnoi, "Efficient Diffusion Models for Symmetric Manifolds", ICML 2025
(arXiv 2505.21640); built from the official code (github.com/784956494/Efficient-Symmetric-Diffusion
@ 5b59b20) as the research note ``shared/specs/manifold_diffusion.md`` describes it. No code copied.

Forward: ``Z_0 = psi(X_0)``, ``Z_s | Z_0 ~ N(e^{-B/2} Z_0, (1 - e^{-B}) I)``, ``X_s = phi(Z_s)``.
A drift net regresses ``Proj_{T_X M} J_phi(Z_s)[ beta Z_s / 2 + w beta grad log p(Z_s | Z_0) ]``
and (SO(n), U(n), S^2) a covariance net the spatially varying noise scale, both with weight
``sigma_s^2``; the sampler integrates the reverse SDE on the manifold with Euler-Maruyama.

- torus: ``phi`` = angles mod 2 pi, ``psi`` = identity (``J_phi = I``).
- S^2: ``phi(z) = z / |z|``; not in the official code (the paper lists it). The Ito term
  ``-beta x / |z|^2`` of ``d(z/|z|)`` is added to the drift target, and a scalar covariance
  head learns ``E[1 / |Z|^2 | X]``, the noise scale of ``dX``.
- SO(n) / U(n): eigenvectors of ``Z + Z^H`` (:mod:`.matrix_geometry`), with the analytic
  eigenvector derivative; the eigenvector signs / phases ride on an extra ``n``-torus
  (phase of each row's first entry), trained with the torus loss in the same drift net, as
  the official SO(n) code does; the covariance net learns the eigenvalue gaps, whose
  inverses scale the Dyson-Brownian-motion eigenvector noise in the sampler.

Flaws of the official code, each a parameter: ``keep_flaws`` lists those to keep
(``[]``: all fixed, the default; ``["all"]``: the faithful code).

- ``"score"``: score weight ``w = 2`` in the drift target (fixed: 1, the VP reverse drift
  matching the sampler's ``sqrt(beta)`` noise).
- ``"terminal"``: ``beta_max = 0.3`` (README/examples): ``B(1) = 0.2``, so the forward
  process never reaches the ``N(0, I)`` the sampler starts from (fixed: ``beta_max`` = 20,
  ``B(1) = 10.05``).
- ``"beta"``: U(n) sampler with ``beta = 0.01 + 0.99 t`` hard-coded (fixed: the training
  schedule at ``s = 1 - t``).
- ``"noise3"``: U(n) sampler adds eigenvector noise to the first 3 rows only (fixed: all).
- ``"det"``: SO(n) samples are returned with ``det = -1`` where the signs say so (fixed: the
  least certain sign is flipped; the verifier rejects ``det = -1`` as ``invalid``).
- ``"phase"``: U(n) row phases are not restored (official code: commented out); fixed here
  with the same phase torus as SO(n).

Sample-quality switches (issue 7; ours, neither the paper's nor the official code's). Every
default reproduces the published behaviour (version 1); each is a method parameter:

- ``lam_scale`` (default 1.0): multiplies ``Lambda_0`` in ``psi``. The official code
  (``SOn.psi`` / ``Un.psi``, checked at commit f075334 of the same repository, the version
  held by the public code index; the research note read 5b59b20) uses
  ``Lambda_0 = diag(n, ..., 1) / n``
  (eigen-gaps ``1/n``), i.e. ``lam_scale = 1``. With ``beta_max = 20`` the rotation (the
  eigenvectors of ``Z_s + Z_s^H``) is noise by ``s ~ 0.02-0.04`` while the sign/phase torus stays
  informative until ``s ~ 0.3``, so the sampler decides signs while the rotation is still noise.
  A number, or a string ``"<k>n"`` meaning ``k * n`` (``"3n"``: gaps of 3 for every ``n``).
- ``time_grid`` (default ``"uniform"``): sampler grid in forward time ``s``; ``"uniform"``
  ``s_k = 1 - k/K`` (the official code), ``"quadratic"`` ``s_k = (1 - k/K)^2`` (finer near
  the data, where the drift is largest).
- ``final_noise`` (default True, the official code): add noise on the last Euler-Maruyama step.
  ``False`` skips it, as ``ambient-ddpm`` does.
- ``precondition`` (default False): the drift targets are ``~ beta / sigma`` and the loss
  weight ``sigma^2`` leaves a per-sample weight ``~ beta^2``: with ``beta_max = 20`` the
  high-noise end dominates (``s < 0.2`` gets ~3% of the torus loss). ``True`` parametrises the
  drift as ``(beta / sigma) * net`` and regresses ``net`` onto ``sigma * target / beta`` with
  weight 1: the same minimiser (the drift is still ``E[target | X_s, s]``) with balanced
  weights, as ``ambient-ddpm`` (epsilon prediction) and ``rsgm`` (``std_trick``) do. It covers
  the torus drift, the SO(n)/U(n) sign/phase torus and the SO(n)/U(n) matrix drift;
  ``"torus"`` limits it to the torus drift and the sign/phase torus. S^2 is not affected.
- ``sphere_scale`` (default ``"joint"``): S^2 only. ``"joint"``: one net outputs the drift
  and the noise scale ``E[1/|Z|^2 | X]`` (whose target ``1/|Z|^2`` is heavy-tailed near the
  prior: ``|Z|^2 ~ chi^2_3`` has no finite second moment of its inverse). ``"separate"``: a
  second net learns the scale, with the target clipped at ``scale_cap`` (0: no clip).
- ``sign_ref`` (default ``"first"``, the official gauge): SO(n)/U(n) only. Which coordinate of
  each eigenvector row fixes its sign/phase gauge, so which sign/phase the torus has to learn.
  ``"first"``: the first entry is made real and ``>= 0``. On this task's SO(6) mixture that
  boundary cuts through the components: a row's first-entry sign is close to 50/50 inside one
  component, so the sign torus has to learn signs that flip across the component, and the
  samples' signs are where most of the C2ST gap lies (with the signs set by an oracle the tuned
  variant's SO(6) C2ST falls from 0.85 to 0.66). ``"data"``: the inner product of row ``i``
  with a reference direction fitted to the training rows (:func:`~common.manifold_diffusion.models.data_reference`,
  which keeps the boundary away from the data: at most ~15 % minority sign per row and
  component on SO(6)). The gauge-fixing derivative term of U(n) follows the reference.
- ``ensemble`` (default ``"official"``): SO(n)/U(n) only. The noise of each coordinate of ``Z``.
  Officially every coordinate has unit variance and ``A = Z + Z^H`` doubles the diagonal, so
  ``A``'s diagonal noise has 4 times the off-diagonal variance, twice the GOE/GUE ratio: the
  noise of ``A`` is not orthogonally invariant, and the eigenvector noise ``<u_j, dA u_i>`` of
  the forward process has a variance that depends on ``u`` (1 to 1.5 times the unit variance the
  sampler's Dyson noise ``w_ij / g_ij`` assumes). ``"goe"`` halves the diagonal coordinates'
  variance (training noise and the sampler's starting point), which makes ``A``'s noise GOE
  (GUE) and the sampler's noise model exact.
- ``matrix_input`` (default ``"rows"``, official): SO(n)/U(n) only. The nets see the canonical
  rows and ``(cos, sin)`` of the sign/phase torus. ``"signed"`` adds the point itself, the rows
  times ``cos theta`` (SO(n)) or ``exp(i theta)`` (U(n)), in which the mixture's components are
  compact where the canonical rows fold them.
- ``torus_lift`` (default ``"zero"``, official): the lift ``psi`` of the torus coordinates (the
  torus manifold and the SO(n)/U(n) sign/phase torus). Officially an angle is lifted to
  ``[0, 2 pi)``: the cut ``2 pi -> 0`` lies at angle 0 wherever the data are, so a mode that
  straddles it is torn into two pieces ``2 pi`` apart in the lift, and the OU process contracts
  toward the cut itself. ``"data"`` lifts coordinate ``j`` to ``[-pi, pi)`` around a centre
  ``c_j``, the point opposite the emptiest arc of the training marginal
  (:func:`~common.manifold_diffusion.models.torus_seams`), so the cut lies where the data are
  not and the process contracts toward ``c_j``; the sampler starts from ``N(c, I)`` wrapped.
- ``torus_input`` (default ``"angle"``, official): the torus drift net sees the angles in
  ``[0, 2 pi)``, a discontinuous input at the cut. ``"cossin"``: ``(cos, sin)`` of each angle, as
  ``rsgm``'s net does.
- ``projection`` (default ``"eigen"``, the paper's and the official code's map): SO(n) only.
  ``"polar"`` projects with the special polar factor instead (:mod:`.polar_geometry`): lift
  ``psi(X) = polar_scale * X``, ``X_s = phi(Z_s)``, the drift net regresses the (preconditioned)
  Lie-algebra drift ``X^T J_phi(Z_s)[beta grad log p]`` from ``vec(X_s)``, and the sampler's
  noise has the forward increment's scale at each time (no covariance net). No eigenvector signs
  to carry, so no sign torus, no sign gauge and no eigen-gaps; the switches that act on those
  (``lam_scale``, ``sign_ref``, ``ensemble``, ``matrix_input``, SO(n)'s ``torus_lift``) then do
  nothing on SO(n). U(n) keeps the eigenvector map (the polar map was worse on U(9) in
  development: 0.988 against 0.935).
- ``polar_den_min`` (default ``1e-2``, version 4's value): the training target's denominators
  ``s_i + s_j`` of the polar map are kept at least this large. They vanish where the special polar
  factor jumps (``det Z_s`` changes sign), so the exact target has heavy tails at mid times
  (``E|target|^2`` about ten times its small-time level on SO(6) around ``s = 0.25``); a larger
  floor is a biased, lower-variance target that only changes samples near a jump.
- ``polar_noise`` (default 1, version 4's sampler): multiplies the variance of the polar sampler's
  noise at every step, a sampling temperature. Below 1 it compensates a drift that is under-fitted
  within the iteration budget (samples too far from the modes); it is not the forward process's
  noise. ``"auto"``: the sampler first draws ``POLAR_SELECT`` points at each temperature of
  :data:`POLAR_TEMPERATURES` and keeps the one whose points are closest to the method's own
  training points in squared MMD (Gaussian kernels at 1/2, 1 and 2 times the training points'
  median distance); no held-out point is used.
- ``ema`` (default 0, off, as the official code): the sampler uses an exponential moving average
  of the nets' weights with this decay (the usual practice of diffusion models, e.g. RSGM's and
  TDM's own code).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import torch

from bench.registry import method
from common.manifold_diffusion.models import (
    MLP,
    TWO_PI,
    TrainThenSample,
    VPSchedule,
    batched_polar,
    canonical_rows,
    data_reference,
    make_adam,
    to_numpy_points,
    torus_seams,
)
from methods.manifold_diffusion.matrix_geometry import MatrixCoords
from methods.manifold_diffusion.polar_geometry import PolarCoords
from tasks.manifold_diffusion.metrics import mmd2

__all__ = [
    "ProjectedDiffusion", "ENSEMBLES", "FLAWS", "MATRIX_INPUTS", "PROJECTIONS", "SIGN_REFS", "TIME_GRIDS", "TORUS_INPUTS",
    "TORUS_LIFTS", "TUNED", "TUNED_ONLY", "lam_scale_value", "reverse_grid",
]

FLAWS = ("score", "terminal", "beta", "noise3", "det", "phase")
#: training-time epsilon of t ~ U(eps, 1 - eps), per manifold (official code; sphere: ours)
EPS = {"torus": 1e-8, "sphere": 1e-4, "so": 1e-4, "u": 3e-4}


def col(v: torch.Tensor) -> torch.Tensor:
    """A ``(B,)`` tensor as a ``(B, 1)`` column."""
    return v[:, None]


TIME_GRIDS = ("uniform", "quadratic")
SIGN_REFS = ("first", "data")
TORUS_INPUTS = ("angle", "cossin")
TORUS_LIFTS = ("zero", "data")
MATRIX_INPUTS = ("rows", "signed")
ENSEMBLES = ("official", "goe")
PROJECTIONS = ("eigen", "polar")
#: the sampling temperatures ``polar_noise="auto"`` chooses among, and the points drawn per temperature
POLAR_TEMPERATURES = (1.0, 0.85, 0.7, 0.55)
POLAR_SELECT = 2000


def lam_scale_value(v: Any, n: int) -> float:
    """``lam_scale`` as a number: a number, or a string ``"<k>n"`` meaning ``k * n``."""
    if isinstance(v, str):
        s = v.strip()
        if s.endswith("n"):
            return float(s[:-1].strip() or "1") * n
        return float(s)
    return float(v)


def reverse_grid(steps: int, kind: str = "uniform") -> list[tuple[float, float, float]]:
    """``(t_k, s_k, dt_k)`` for the sampler's ``steps`` steps: network time ``t = 1 - s``, forward
    time ``s_k`` (where ``beta`` is evaluated) and the step length ``s_k - s_{k+1}``.

    ``"uniform"``: ``s_k = 1 - k/K`` (computed as the official code does, ``t_k = k dt``);
    ``"quadratic"``: ``s_k = (1 - k/K)^2``. Both run from ``s = 1`` to ``s = 0``.
    """
    if kind == "uniform":
        dt = 1.0 / steps
        return [(k * dt, 1.0 - k * dt, dt) for k in range(steps)]
    if kind == "quadratic":
        s = [(1.0 - k / steps) ** 2 for k in range(steps + 1)]
        return [(1.0 - s[k], s[k], s[k] - s[k + 1]) for k in range(steps)]
    raise ValueError(f"time_grid must be one of {list(TIME_GRIDS)}, got {kind!r}")


SPHERE_SCALES = ("joint", "separate")
JACOBIANS = ("analytic", "jacrev")


def choice(params: dict[str, Any], name: str, choices: tuple[str, ...]) -> str:
    """String parameter ``name`` (default ``choices[0]``, the official behaviour), checked against ``choices``."""
    value = str(params.get(name, choices[0]))
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


class ProjectedDiffusion(TrainThenSample):
    """The paper's projected-OU diffusion; see the module docstring."""

    def init_model(self) -> None:
        p = self.params
        flaws = list(p.get("keep_flaws", []))
        if "all" in flaws:
            flaws = list(FLAWS)
        bad = set(flaws) - set(FLAWS)
        if bad:
            raise ValueError(f"keep_flaws: unknown {sorted(bad)}; known: {list(FLAWS)} or ['all']")
        self.flaws = set(flaws)
        self.w = 2.0 if "score" in self.flaws else 1.0
        beta_max = 0.3 if "terminal" in self.flaws else float(p.get("beta_max", 20.0))
        self.sched = VPSchedule(float(p.get("beta_min", 0.1)), beta_max)
        self.eps = EPS[self.manifold]
        self.jacobian = choice(p, "jacobian", JACOBIANS)
        hidden, layers = int(p.get("hidden", 256)), int(p.get("layers", 3))
        n = self.n
        # issue-7 switches (defaults: the published behaviour; see the module docstring)
        self.lam_scale = lam_scale_value(p.get("lam_scale", 1.0), n)
        self.time_grid = choice(p, "time_grid", TIME_GRIDS)
        self.final_noise = bool(p.get("final_noise", True))
        pc = p.get("precondition", False)
        if pc is True or pc == "all":
            self.pc_torus = self.pc_matrix = True
        elif pc is False or pc in ("none", None):
            self.pc_torus = self.pc_matrix = False
        elif pc == "torus":
            self.pc_torus, self.pc_matrix = True, False
        else:
            raise ValueError(f"precondition must be false, true ('all') or 'torus', got {pc!r}")
        self.sphere_scale = choice(p, "sphere_scale", SPHERE_SCALES)
        self.scale_cap = float(p.get("scale_cap", 0.0))
        self.sign_ref = choice(p, "sign_ref", SIGN_REFS)
        self.torus_input = choice(p, "torus_input", TORUS_INPUTS)
        self.matrix_input = choice(p, "matrix_input", MATRIX_INPUTS)
        self.ensemble = choice(p, "ensemble", ENSEMBLES)
        self.torus_lift = choice(p, "torus_lift", TORUS_LIFTS)
        self.projection = choice(p, "projection", PROJECTIONS)
        self.polar_so = self.projection == "polar" and self.manifold == "so"
        self.ema = float(p.get("ema", 0.0))
        if not 0.0 <= self.ema < 1.0:
            raise ValueError(f"ema must be in [0, 1), got {self.ema!r}")
        # development switch, declared by no registered method (``scripts/manifold_diffusion/target_tails.py``): shrink each
        # sample's SO(n)/U(n) matrix drift target to |sigma target / beta|^2 <= target_cap (0: off)
        self.target_cap = float(p.get("target_cap", 0.0))
        # the lift psi of the torus: x -> angle in [0, 2 pi) (official: "zero"), or x -> the angle
        # in [-pi, pi) around centre = seam + pi ("data"); the OU process contracts toward ``centre``
        self.centre = None
        if self.torus_lift == "data" and self.manifold == "torus":
            self.centre = self._lift_centre(self.train_np)
        self.ref = None
        if self.sign_ref == "data" and self.manifold in ("so", "u"):
            ref = data_reference(self.train_np)
            self.ref = torch.from_numpy(ref.astype(np.complex64 if self.manifold == "u" else np.float32))
        if self.manifold == "torus":
            self.drift = MLP(n * (2 if self.torus_input == "cossin" else 1), n, hidden, layers, act="sin")
            self.cov = None
        elif self.manifold == "sphere":
            if self.sphere_scale == "separate":
                self.drift = MLP(3, 3, hidden, layers, act="silu")
                self.cov = MLP(3, 1, hidden, layers, act="silu")
            else:
                self.drift = MLP(3, 3 + 1, hidden, layers, act="silu")
                self.cov = None
        elif self.polar_so:
            self.pc = PolarCoords(n, complex_=False, scale=float(p.get("polar_scale", 2.0)))
            self.polar_den_min = float(p.get("polar_den_min", 1e-2))
            pn = p.get("polar_noise", 1.0)
            if not (pn == "auto" or (isinstance(pn, (int, float)) and not isinstance(pn, bool) and pn >= 0)):
                raise ValueError(f"polar_noise must be a number >= 0 or 'auto', got {pn!r}")
            if self.polar_den_min <= 0:
                raise ValueError(f"polar_den_min must be > 0, got {self.polar_den_min!r}")
            #: the temperature the sampler used (``polar_noise``, or the one ``"auto"`` chose)
            self.polar_temperature = None if pn == "auto" else float(pn)
            self.drift = MLP(self.pc.features, self.pc.dim, hidden, layers, act="silu")
            self.cov = None
        else:
            self.mc = MatrixCoords(n, complex_=self.manifold == "u", lam_scale=self.lam_scale, ref=self.ref)
            if self.torus_lift == "data":  # the sign/phase torus gets the same data-fitted lift
                x = torch.from_numpy(self.train_np)
                theta0 = canonical_rows(x, None if self.ref is None else self.ref.to(x.dtype))[1].double().numpy()
                self.centre = self._lift_centre(theta0)
            nf = n * n * (2 if self.mc.complex else 1)
            # noise scale of each coordinate of Z: "official" gives A = Z + Z^H diagonal noise of
            # variance 4 against 1 off the diagonal; "goe" halves the diagonal's variance, so the
            # noise of A is orthogonally (unitarily) invariant, the Dyson noise the sampler assumes
            self.zscale = torch.ones(self.mc.dim)
            if self.ensemble == "goe":
                self.zscale[:n] = 1.0 / math.sqrt(2.0)
            n_in = nf * (2 if self.matrix_input == "signed" else 1) + 2 * n
            self.drift = MLP(n_in, nf + n, hidden, layers, act="silu")
            self.cov = MLP(n_in, n * n, hidden, layers, act="silu")
        self.opts = [make_adam(m, lr=self.lr) for m in self._nets()]
        # exponential moving average of the weights, used by the sampler (ema = 0: off, official)
        self.averaged = [copy.deepcopy(m).requires_grad_(False) for m in self._nets()] if self.ema > 0 else []

    def _nets(self) -> list[torch.nn.Module]:
        """The trained networks: the drift net and, where the model has one, the covariance net."""
        return [self.drift] + ([self.cov] if self.cov is not None else [])

    # ------------------------------------------------------------------ training
    def _times(self, b: int) -> tuple[torch.Tensor, ...]:
        t = self.eps + (1 - 2 * self.eps) * torch.rand(b, generator=self.gen)
        s = 1.0 - t
        a, sd = self.sched.mean_std(s)
        return t, s, a, sd, self.sched.beta(s)

    @staticmethod
    def drift_loss(out: torch.Tensor, target: torch.Tensor, sd: torch.Tensor, beta: torch.Tensor, precondition: bool) -> torch.Tensor:
        """Per-sample drift loss, summed over features ``(B, ...) -> (B,)``.

        Plain: ``sigma^2 |out - target|^2`` (drift = ``out``). Preconditioned:
        ``|out - sigma target / beta|^2`` (drift = ``beta / sigma * out``, :meth:`drift_scale`);
        both are minimised by drift ``E[target | X_s, s]``.
        """
        shape = (-1,) + (1,) * (target.ndim - 1)
        if precondition:
            k = (beta / sd).reshape(shape)
            return ((out - target / k).abs() ** 2).reshape(out.shape[0], -1).sum(1)
        return sd**2 * ((out - target).abs() ** 2).reshape(out.shape[0], -1).sum(1)

    def drift_scale(self, s: float, precondition: bool) -> float:
        """Factor from network output to drift at forward time ``s`` (``beta / sigma`` or 1)."""
        if not precondition:
            return 1.0
        st = torch.tensor(s)
        return float(self.sched.beta(st) / self.sched.mean_std(st)[1])

    def train_step(self, x0: torch.Tensor) -> float:
        b = x0.shape[0]
        t, s, a, sd, beta = self._times(b)
        if self.manifold == "torus":
            xi = torch.randn(x0.shape, generator=self.gen)
            zs = col(a) * self._lift(x0) + col(sd) * xi
            target = 0.5 * col(beta) * zs + self.w * col(beta) * (-xi / col(sd))
            out = self.drift(self._torus_in(self._unlift(zs)), t)
            if self.pc_torus:
                loss = self.drift_loss(out, target, sd, beta, True).mean()
            else:
                loss = (col(sd) ** 2 * (out - target) ** 2).sum(1).mean()
        elif self.manifold == "sphere":
            xi = torch.randn(x0.shape, generator=self.gen)
            zs = col(a) * x0 + col(sd) * xi
            r = zs.norm(dim=1, keepdim=True)
            x = zs / r
            v = 0.5 * col(beta) * zs + self.w * col(beta) * (-xi / col(sd))
            jv = (v - x * (x * v).sum(1, keepdim=True)) / r
            target = jv - col(beta) * x / r**2  # Ito term of z / |z|
            out = self.drift(x, t)
            f = out[:, :3] - x * (out[:, :3] * x).sum(1, keepdim=True)
            loss = (col(sd) ** 2 * (f - target) ** 2).sum(1).mean()
            if self.cov is None:
                loss = loss + (col(sd) ** 2 * (out[:, 3:] - 1.0 / r**2) ** 2).mean()
            else:
                inv_r2 = 1.0 / r**2
                if self.scale_cap > 0:
                    inv_r2 = inv_r2.clamp_max(self.scale_cap)
                loss = loss + (col(sd) ** 2 * (self.cov(x, t) - inv_r2) ** 2).mean()
        elif self.polar_so:
            loss = self._polar_loss(x0, t, a, sd)
        else:
            loss = self._matrix_loss(x0, t, a, sd, beta)
        for o in self.opts:
            o.zero_grad()
        loss.backward()
        for o in self.opts:
            o.step()
        if self.averaged:
            with torch.no_grad():
                for avg, m in zip(self.averaged, self._nets(), strict=True):
                    for pa, pm in zip(avg.parameters(), m.parameters(), strict=True):
                        pa.mul_(self.ema).add_(pm, alpha=1.0 - self.ema)
        return float(loss.detach())

    def _polar_loss(self, x0: torch.Tensor, t: torch.Tensor, a: torch.Tensor, sd: torch.Tensor) -> torch.Tensor:
        """``projection="polar"`` on SO(n) (:mod:`.polar_geometry`): ``Z_s = a c X_0 + sigma xi`` and the
        net regresses ``sigma / beta`` times the drift ``X^T J_phi(Z_s)[beta grad log p(Z_s | Z_0)]`` in
        Lie-algebra coordinates, i.e. ``-X^T J_phi(Z_s)[xi]`` (always preconditioned)."""
        pc = self.pc
        xi = torch.randn(x0.shape, generator=self.gen)
        zs = (a * pc.scale).reshape(-1, 1, 1) * x0 + sd.reshape(-1, 1, 1) * xi
        with torch.no_grad():
            x, q, sv = pc.decompose(zs.double())
            target = -pc.coords(pc.algebra(x, q, sv, xi.double(), den_min=self.polar_den_min)).float()
        out = self.drift(pc.features_of(x), t)
        return ((out - target) ** 2).sum(1).mean()

    @staticmethod
    def _lift_centre(angles: np.ndarray) -> torch.Tensor:
        """``torus_lift="data"``: per coordinate, the centre opposite the seam of :func:`torus_seams`."""
        return torch.from_numpy(np.mod(torus_seams(angles) + math.pi, TWO_PI)).float()

    def _lift(self, angles: torch.Tensor) -> torch.Tensor:
        """``psi`` of the torus coordinates: the angles themselves (official, ``[0, 2 pi)``) or, with a
        data-fitted centre, the angle in ``[-pi, pi)`` around it."""
        return angles if self.centre is None else torch.remainder(angles - self.centre + math.pi, TWO_PI) - math.pi

    def _unlift(self, z: torch.Tensor) -> torch.Tensor:
        """``phi`` of the torus coordinates, the inverse of :meth:`_lift` modulo ``2 pi``: angles in ``[0, 2 pi)``."""
        return torch.remainder(z if self.centre is None else z + self.centre, TWO_PI)

    def _torus_in(self, x: torch.Tensor) -> torch.Tensor:
        """The torus drift net's input: the angles (official) or ``(cos, sin)`` of them."""
        return torch.cat([torch.cos(x), torch.sin(x)], dim=1) if self.torus_input == "cossin" else x

    def _inputs(self, u: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
        """Net input: the canonical rows and ``(cos, sin)`` of the sign/phase torus (official);
        ``matrix_input="signed"`` adds the point itself, the rows times ``cos theta`` (SO(n)) or
        ``exp(i theta)`` (U(n))."""
        feats = [self.mc.flat(u), torch.cos(theta), torch.sin(theta)]
        if self.matrix_input == "signed":
            ph = torch.exp(1j * theta.to(torch.float32)) if self.mc.complex else torch.cos(theta)
            feats.append(self.mc.flat(ph.to(u.dtype)[:, :, None] * u))
        return torch.cat(feats, dim=1)

    def _matrix_loss(self, x0, t, a, sd, beta) -> torch.Tensor:
        mc = self.mc
        b = x0.shape[0]
        _, theta0 = canonical_rows(x0, self.ref)
        theta0 = theta0.to(torch.float32)
        z0 = mc.psi(x0)
        xi = torch.randn(z0.shape, generator=self.gen) * self.zscale
        zeta = torch.randn(theta0.shape, generator=self.gen)
        zs = col(a) * z0 + col(sd) * xi
        ths = col(a) * self._lift(theta0) + col(sd) * zeta
        v = 0.5 * col(beta) * zs + self.w * col(beta) * (-xi / col(sd))
        tht = 0.5 * col(beta) * ths + self.w * col(beta) * (-zeta / col(sd))
        with torch.no_grad():
            lam, u = mc.phi(zs)
        if self.jacobian == "jacrev":
            target = mc.dphi_jacrev(zs, v).detach()
        else:
            target = mc.dphi(lam, u, v)
        if self.target_cap > 0:
            target = self.clip_target(target, sd / beta, self.target_cap)
        with torch.no_grad():
            gaps = lam[:, :, None] - lam[:, None, :]
        inp = self._inputs(u, self._unlift(ths))
        out = self.drift(inp, t)
        nf = out.shape[1] - self.n
        f = mc.proj(u, mc.unflat(out[:, :nf]))
        w2 = sd**2
        if self.pc_matrix:
            loss = self.drift_loss(f, target, sd, beta, True).mean()
        else:
            loss = (w2 * ((f - target).abs() ** 2).reshape(b, -1).sum(1)).mean()
        if self.pc_torus:
            loss = loss + self.drift_loss(out[:, nf:], tht, sd, beta, True).mean()
        else:
            loss = loss + (w2 * ((out[:, nf:] - tht) ** 2).sum(1)).mean()
        g = self._gaps(self.cov(inp, t))
        loss = loss + (w2 * ((g - gaps) ** 2).reshape(b, -1).sum(1)).mean()
        return loss

    @staticmethod
    def clip_target(target: torch.Tensor, k: torch.Tensor, cap: float) -> torch.Tensor:
        """``target`` with each sample shrunk so that ``|k target|^2 <= cap`` (``k``: ``(B,)``).

        Biased: the drift then fits ``E[clip(target) | X]``, not ``E[target | X]``. A development
        switch (``target_cap``) for measuring how much of the SO(n) gap the target's variance
        explains (``scripts/manifold_diffusion/target_tails.py``).
        """
        shape = (-1,) + (1,) * (target.ndim - 1)
        n2 = ((target * k.reshape(shape)).abs() ** 2).reshape(target.shape[0], -1).sum(1)
        fac = torch.where(n2 > cap, (cap / n2.clamp_min(1e-30)).sqrt(), torch.ones_like(n2))
        return target * fac.reshape(shape).to(target.dtype)

    def _gaps(self, out: torch.Tensor) -> torch.Tensor:
        g = out.reshape(-1, self.n, self.n)
        return 0.5 * (g - g.transpose(1, 2))

    # ------------------------------------------------------------------ sampling
    def sample(self, n_points: int, steps: int) -> np.ndarray:
        if self.averaged:  # sample with the moving average of the weights
            self.drift = self.averaged[0]
            if self.cov is not None:
                self.cov = self.averaged[1]
            self.averaged = []
        gen = torch.Generator().manual_seed(self.seed + 1)
        if self.manifold in ("torus", "sphere"):
            dim = self.n if self.manifold == "torus" else 3
            z = torch.randn(n_points, dim, generator=gen)
            if self.manifold == "torus":
                x = self._unlift(z)
            else:
                x = z / z.norm(dim=1, keepdim=True)
            for k, (tk, sk, dt) in enumerate(reverse_grid(steps, self.time_grid)):
                t = torch.full((n_points,), tk)
                beta = float(self.sched.beta(torch.tensor(sk)))
                out = self.drift(self._torus_in(x) if self.manifold == "torus" else x, t)
                noise = torch.randn(x.shape, generator=gen)
                if k == steps - 1 and not self.final_noise:
                    noise = torch.zeros_like(noise)
                if self.manifold == "torus":
                    out = out * self.drift_scale(sk, self.pc_torus)
                    x = torch.remainder(x + out * dt + math.sqrt(beta * dt) * noise, TWO_PI)
                else:
                    f = out[:, :3] - x * (out[:, :3] * x).sum(1, keepdim=True)
                    sc = out[:, 3:] if self.cov is None else self.cov(x, t)
                    scale = sc.clamp_min(0.0).sqrt()
                    pn = noise - x * (noise * x).sum(1, keepdim=True)
                    y = x + f * dt + math.sqrt(beta * dt) * scale * pn
                    x = y / y.norm(dim=1, keepdim=True)
            return to_numpy_points(self.manifold, x.double())
        if self.polar_so:
            return self._sample_polar(n_points, steps, gen)
        return self._sample_matrix(n_points, steps, gen)

    def _sample_polar(self, n_points: int, steps: int, gen: torch.Generator) -> np.ndarray:
        """Reverse SDE of ``projection="polar"``: ``X <- X expm(Omega dt + noise)`` from the Haar-distributed
        ``phi(G)``; the noise per Lie-algebra coordinate has variance ``beta dt`` times
        :meth:`PolarCoords.noise_scale` (a function of time only) times the temperature ``polar_noise``
        (``"auto"``: :meth:`_choose_temperature`)."""
        pc = self.pc
        noise_gen = torch.Generator().manual_seed(self.seed + 2)
        grid = reverse_grid(steps, self.time_grid)
        scales = []
        for _, sk, _ in grid:
            a, sd = (float(v) for v in self.sched.mean_std(torch.tensor(sk)))
            scales.append(pc.noise_scale(a, sd, noise_gen))
        if self.polar_temperature is None:
            self.polar_temperature = self._choose_temperature(grid, scales)
        x = self._reverse_polar(n_points, grid, scales, float(self.polar_temperature), gen)
        return to_numpy_points(self.manifold, pc.phi(x.double()))

    @torch.no_grad()
    def _reverse_polar(
        self, m: int, grid: list, scales: list[float], temp: float | torch.Tensor, gen: torch.Generator, copies: int = 1
    ) -> torch.Tensor:
        """``m`` points through the reverse SDE at temperature ``temp`` (or point ``i`` at ``temp[i]``).

        ``copies > 1``: ``copies`` blocks of the same ``m`` starting points driven by the same noise
        (common random numbers), so blocks at different temperatures differ by the temperature only.
        """
        pc = self.pc
        x = pc.phi(pc.gaussian((m, self.n, self.n), gen, torch.float64)).float().repeat(copies, 1, 1)
        for k, ((tk, sk, dt), scale) in enumerate(zip(grid, scales, strict=True)):
            st = torch.tensor(sk)
            beta = float(self.sched.beta(st))
            sd = float(self.sched.mean_std(st)[1])
            drift = self.drift(pc.features_of(x), torch.full((len(x),), tk)) * (beta / sd)
            noise = torch.randn(m, pc.dim, generator=gen).repeat(copies, 1)
            if k == len(grid) - 1 and not self.final_noise:
                noise = torch.zeros_like(noise)
            if isinstance(temp, torch.Tensor):
                noise = noise * torch.sqrt(temp * (scale * beta * dt))[:, None]
            else:
                noise = noise * math.sqrt(temp * scale * beta * dt)
            x = x @ torch.linalg.matrix_exp(pc.from_coords(drift * dt + noise))
        return x

    def _choose_temperature(self, grid: list, scales: list[float]) -> float:
        """``polar_noise="auto"``: the temperature of :data:`POLAR_TEMPERATURES` whose samples are
        closest (squared MMD) to ``POLAR_SELECT`` of the method's training points; every temperature
        starts from the same points and gets the same noise draws, so their scores differ by the
        temperature's effect, not by sampling noise."""
        g = torch.Generator().manual_seed(self.seed + 3)
        train = torch.from_numpy(self.train_np).double().reshape(len(self.train_np), -1)
        ref = train[torch.randperm(len(train), generator=g)[: 2 * POLAR_SELECT]]
        h = float(torch.cdist(ref[: len(ref) // 2], ref[len(ref) // 2 :]).median())
        ref = ref[:POLAR_SELECT]
        m, k = POLAR_SELECT, len(POLAR_TEMPERATURES)
        temps = torch.tensor(POLAR_TEMPERATURES).repeat_interleave(m)
        x = self.pc.phi(self._reverse_polar(m, grid, scales, temps, g, copies=k).double()).reshape(m * k, -1).numpy()
        ref = ref.numpy()
        # the same unbiased Gaussian-kernel estimator as the task's MMD metric, here against training points
        scores = [sum(mmd2(ref, x[i * m : (i + 1) * m], bw) for bw in (h / 2, h, 2 * h)) for i in range(k)]
        best = POLAR_TEMPERATURES[int(np.argmin(scores))]
        print(f"polar_noise auto: temperature {best} (squared MMD to training points " + ", ".join(
            f"{t}: {v:.2e}" for t, v in zip(POLAR_TEMPERATURES, scores, strict=True)) + ")", flush=True)
        return float(best)

    def _sample_matrix(self, n_points: int, steps: int, gen: torch.Generator) -> np.ndarray:
        mc, n = self.mc, self.n
        _, u = mc.phi(torch.randn(n_points, mc.dim, generator=gen) * self.zscale)
        theta = self._unlift(torch.randn(n_points, n, generator=gen))
        is_u = self.manifold == "u"
        for k, (tk, sk, dt) in enumerate(reverse_grid(steps, self.time_grid)):
            if is_u and "beta" in self.flaws:
                beta = 0.01 + 0.99 * tk
            else:
                beta = float(self.sched.beta(torch.tensor(sk)))
            noise_on = 0.0 if (k == steps - 1 and not self.final_noise) else 1.0
            t = torch.full((n_points,), tk)
            inp = self._inputs(u, theta)
            out = self.drift(inp, t)
            nf = out.shape[1] - n
            f = mc.proj(u, mc.unflat(out[:, :nf])) * self.drift_scale(sk, self.pc_matrix)
            th_drift = out[:, nf:] * self.drift_scale(sk, self.pc_torus)
            g = self._gaps(self.cov(inp, t))
            g = torch.where(g.abs() < 1e-3, torch.where(g < 0, -1e-3, 1e-3), g)
            w = torch.randn(n_points, n, n, generator=gen)
            if is_u:
                w = torch.complex(w, torch.randn(n_points, n, n, generator=gen)) / math.sqrt(2.0)
            w = (w + w.conj().transpose(1, 2)) / math.sqrt(2.0)
            kn = torch.where(mc.offdiag, w / g.to(w.dtype), torch.zeros_like(w))
            if is_u and "noise3" in self.flaws:
                kn[:, 3:, :] = 0
            noise = mc.proj(u, kn @ u)
            u = mc.step(u, f * dt + noise_on * math.sqrt(beta * dt) * noise)
            u, _ = canonical_rows(batched_polar(u), self.ref)
            th_noise = noise_on * math.sqrt(beta * dt) * torch.randn(n_points, n, generator=gen)
            theta = torch.remainder(theta + th_drift * dt + th_noise, TWO_PI)
        u = batched_polar(u.to(torch.complex128 if is_u else torch.float64))
        u, _ = canonical_rows(u, self.ref)
        th = theta.double()
        if is_u:
            x = u if "phase" in self.flaws else torch.exp(1j * th)[:, :, None] * u
        else:
            signs = torch.where(torch.cos(th) >= 0, 1.0, -1.0).double()
            if "det" not in self.flaws:
                neg = torch.linalg.det(signs[:, :, None] * u) < 0
                weakest = torch.cos(th).abs().argmin(1)
                signs[neg, weakest[neg]] *= -1
            x = signs[:, :, None] * u
        return to_numpy_points(self.manifold, x)


_ABLATIONS = [[], ["all"], *[[f] for f in FLAWS]]

#: Registered parameters of ``projected-diffusion`` (the official configuration, flaws fixed).
PARAMS: dict[str, Any] = {
    "keep_flaws": [], "beta_min": 0.1, "beta_max": 20.0, "hidden": 256, "layers": 3, "lr": 5e-4,
    "lam_scale": 1.0, "time_grid": "uniform", "final_noise": True, "precondition": False,
    "sphere_scale": "joint", "scale_cap": 0.0,
}


@method(
    name="projected-diffusion",
    kind="method",
    tasks=["manifold-diffusion"],
    reference="Mangoubi, He and Vishnoi, Efficient Diffusion Models for Symmetric Manifolds, ICML 2025 (arXiv 2505.21640)",
    version="1",
    params=PARAMS,
    grid={"keep_flaws": _ABLATIONS},
    deterministic=False,
    deviations=(
        "Fixes the official code's flaws by default (keep_flaws=[]; ['all'] restores them, the grid "
        "runs each alone): score weight 1 not 2; beta_max 20 not 0.3 (terminal N(0,I) matched); U(n) "
        "sampler uses the training schedule, not beta = 0.01 + 0.99 t (our reading of the hard-coded "
        "line, UNVERIFIED), and noises every row, not 3; SO(n) det = +1 enforced; U(n) phases restored "
        "with the SO(n) sign torus. Analytic eigenvector derivative instead of jacrev + vmap. "
        "Networks scaled to the CPU budget: MLP 3 x 256 (sin on the torus, SiLU elsewhere; the official "
        "U(n) net is a 512-wide ResNet with sinusoidal time embedding). The sampler re-canonicalises row "
        "phases each step (the nets were trained on canonical rows). The sphere model (absent from the "
        "code) adds the Ito term and a scalar covariance head. No Ito term for SO(n)/U(n), as in the code. "
        "Issue-7 switches, ours and off by default (defaults = the behaviour published as version 1): "
        "lam_scale (multiplies Lambda_0 = diag(n..1)/n, the official value, whose gaps 1/n are lost in the "
        "noise early), time_grid ('uniform' official, 'quadratic' s_k = (1 - k/K)^2), final_noise (official: "
        "True), precondition (drift = beta/sigma * net, unit loss weights, same minimiser), sphere_scale "
        "('separate' scale net with target clipped at scale_cap)."
    ),
)
class ProjectedDiffusionMethod(ProjectedDiffusion):
    """The paper's method behind the task's two-round protocol (train, then sample)."""


#: The switches of the tuned variant, fixed before each of its runner sweeps from seed-0
#: development runs (``methods/manifold_diffusion/README.md``), not chosen on the published runs.
#: Version 3 (lam_scale "12n" instead of "3n", ensemble, matrix_input, torus_lift, torus_input)
#: was published from master seed 1, whose repetitions no development run saw.
#: Version 4 (projection "polar" on SO(n), polar_scale, lr 1e-3, ema) was chosen on three
#: repetitions of master seed 2 and is published from master seed 1 beside version 3.
#: Version 5 (polar_den_min 0.3, polar_noise "auto", SO(n) only) likewise: chosen on master seed 2,
#: published from master seed 1.
#: Version 6 (ema 0.998 instead of 0.999, every manifold) likewise: chosen on master seed 2,
#: published from master seed 1, with a fresh SO(6) test on master seed 4 declared before it ran.
TUNED = {"lam_scale": "12n", "precondition": True, "time_grid": "quadratic", "final_noise": False,
         "sphere_scale": "separate", "sign_ref": "data", "ensemble": "goe", "matrix_input": "signed",
         "torus_lift": "data", "torus_input": "cossin", "projection": "polar", "polar_scale": 2.0,
         "lr": 1e-3, "ema": 0.998, "polar_den_min": 0.3, "polar_noise": "auto"}
#: Parameters declared by the tuned variant only (the model's defaults are the official ones), so
#: that the paper method's job keys, which hash its parameters, stay those of its published runs.
TUNED_ONLY = (
    "sign_ref", "ensemble", "matrix_input", "torus_lift", "torus_input", "projection", "polar_scale", "ema",
    "polar_den_min", "polar_noise",
)


@method(
    name="projected-diffusion-tuned",
    kind="method",
    tasks=["manifold-diffusion"],
    reference="Mangoubi, He and Vishnoi, ICML 2025 (arXiv 2505.21640), with this bench's sample-quality "
    "switches (not in the paper or the official code)",
    version="6",
    params={**PARAMS, **TUNED},
    deterministic=False,
    # versions 1-3 chose their switches on repetition 0 of master seed 0 (standard tier), versions 4-6
    # theirs on master seed 2 (README "Version 4" on): bench publish refuses this version's runs there
    development_seeds={0: ["torus2", "torus10", "sphere2", "so3", "so6", "u4", "u9"], 2: None},
    deviations=(
        "Everything of projected-diffusion (all official flaws fixed), plus this bench's switches, "
        "declared before the standard-tier sweep: lam_scale (version 1-2: '3n', Lambda_0 = 3 diag(n..1), "
        "eigen-gaps 3 instead of the official 1/n), precondition=True (drift = beta/sigma * net with unit loss weights; "
        "same minimiser), time_grid='quadratic', final_noise=False, sphere_scale='separate'. Version 2 adds "
        "sign_ref='data' (SO(n)/U(n) sign/phase gauge against a reference direction fitted to the training "
        "rows instead of the first entry), declared from seed-0 runs before its 3-seed sweep. Version 3 "
        "raises lam_scale to '12n' (eigen-gaps 12) and adds ensemble='goe' (diagonal of Z at variance 1/2, so "
        "the noise of A = Z + Z^H is GOE/GUE, the Dyson noise the sampler assumes; the official Z is not), "
        "matrix_input='signed' (the nets also see the point itself, the rows times their signs/phases), "
        "torus_lift='data' (the torus and sign/phase torus are lifted around the centre opposite the "
        "emptiest arc of the training marginal instead of cut at angle 0) and torus_input='cossin'; chosen "
        "on seed-0 runs of master seed 0 and published from master seed 1. Version 4 replaces the paper's "
        "eigenvector map on SO(n) by the special polar factor (projection='polar', lift psi(X) = 2 X; drift "
        "net on vec(X) regressing the Lie-algebra drift; sampler noise at the forward increment's scale, a "
        "function of time; no sign torus, eigen-gaps or covariance net on SO(n); U(n) keeps the eigenvector "
        "map), and trains with lr 1e-3 (5e-4 before, as every method) and samples with an EMA of the "
        "weights (decay 0.999), which rsgm, tdm and ambient-ddpm do not use; chosen on three repetitions "
        "of master seed 2 and published from master seed 1. Version 5 (SO(n) only) floors the polar target's "
        "denominators s_i + s_j at 0.3 (polar_den_min; a biased, lower-variance target next to the jumps of "
        "the special polar factor) and lets the sampler choose its temperature (polar_noise='auto': the "
        "noise variance times 1, 0.85, 0.7 or 0.55, whichever gives samples closest in MMD to the method's "
        "own training points); chosen on master seed 2, published from master seed 1. Version 6 shortens "
        "the weight average (ema 0.998 instead of 0.999, every manifold: the nets are still learning at the "
        "5000-iteration cap, and the longer average held older weights); chosen on master seed 2, published "
        "from master seed 1. The paper's "
        "model stays 'projected-diffusion'; the claims are judged on it, not on this variant."
    ),
)
class ProjectedDiffusionTunedMethod(ProjectedDiffusion):
    """``projected-diffusion`` with the issue-7 sample-quality switches on (see :data:`TUNED`)."""
