"""The paper's projection ``phi`` for SO(n) and U(n), its right inverse ``psi``, and the analytic
eigenvector derivative (torch, batched).

``Z`` is a (real, or complex with real diagonal) upper-triangular matrix, stored as a real
vector: ``[diag (n), Re upper (m), Im upper (m, complex only)]``, ``m = n(n-1)/2``.
``A = Z + Z^H``; ``phi(Z) = U`` whose rows are the eigenvectors of ``A`` (conjugated) sorted
by decreasing eigenvalue, so ``A = U^H diag(lambda) U``; ``psi(U)`` is the upper triangle of
``U^H Lambda_0 U`` with the diagonal halved, ``Lambda_0 = lam_scale * diag(n, n-1, ..., 1) / n``
(research note 2.3; official ``manifold/special_orthogonal.py``, ``unitary.py``).

``lam_scale`` (ours; default 1): the official code (784956494/Efficient-Symmetric-Diffusion,
``SOn.psi`` and ``Un.psi``, checked at commit f075334, the version held by the public code
index; the research note read 5b59b20) uses exactly
``Lambda_0 = diag(n, ..., 1) / n``, i.e. ``lam_scale = 1``, eigen-gaps ``1/n``. With the VP
schedule's noise these gaps are swamped by ``sigma_s ~ 0.1``, so the rotation is noise long before
the forward process ends; ``lam_scale = 3 n`` gives gaps of 3 (see ``projected.py``).

The derivative of ``phi`` along ``dZ`` is ``dU = K U`` with
``K_ij = (U dA U^H)_ij / (lambda_i - lambda_j)`` for ``i != j`` (first-order perturbation
theory), which costs two ``n x n`` products per sample instead of the ``O(n^4)`` Jacobian
``jacrev`` + ``vmap`` builds in the official code.
"""

from __future__ import annotations

import torch

from common.manifold_diffusion.models import canonical_rows, gauge_coordinate

__all__ = ["MatrixCoords"]


class MatrixCoords:
    """Coordinates and maps for ``n x n`` real (SO) or complex (U) matrices."""

    def __init__(
        self, n: int, complex_: bool, dtype: torch.dtype = torch.float32, lam_scale: float = 1.0,
        ref: torch.Tensor | None = None,
    ) -> None:
        self.n, self.complex = n, complex_
        #: row gauge of :func:`canonical_rows` (``None``: first entry real, the official code's)
        self.ref = ref
        self.rdtype = dtype
        self.cdtype = torch.complex64 if dtype == torch.float32 else torch.complex128
        iu = torch.triu_indices(n, n, 1)
        self.iu0, self.iu1 = iu[0], iu[1]
        self.m = n * (n - 1) // 2
        self.dim = n + self.m * (2 if complex_ else 1)
        self.lam0 = torch.arange(n, 0, -1, dtype=dtype) / n
        if lam_scale != 1.0:
            self.lam0 = self.lam0 * float(lam_scale)
        self.offdiag = ~torch.eye(n, dtype=torch.bool)
        # gather maps: entry (i, j) of A from [2 diag, upper] (real part) and [0, Im upper] (imaginary)
        pos = torch.zeros(n, n, dtype=torch.long)
        pos[self.iu0, self.iu1] = torch.arange(self.m)
        pos = torch.maximum(pos, pos.T)
        eye = torch.eye(n, dtype=torch.bool)
        self.re_index = torch.where(eye, torch.arange(n)[:, None].expand(n, n), n + pos).reshape(-1)
        self.im_index = torch.where(eye, torch.zeros_like(pos), 1 + pos).reshape(-1)
        upper = torch.triu(torch.ones(n, n), 1)
        self.im_sign = (upper - upper.T).reshape(-1).to(dtype)

    @property
    def mdtype(self) -> torch.dtype:
        return self.cdtype if self.complex else self.rdtype

    def herm(self, z: torch.Tensor) -> torch.Tensor:
        """``A = Z + Z^H`` from coordinate vectors ``(B, dim)`` (out of place, so ``vmap`` works)."""
        b, n = z.shape[0], self.n
        re = torch.cat([2.0 * z[:, :n], z[:, n : n + self.m]], dim=1)[:, self.re_index].reshape(b, n, n)
        if not self.complex:
            return re.to(self.mdtype)
        im_ext = torch.cat([torch.zeros_like(z[:, :1]), z[:, n + self.m :]], dim=1)
        im = (im_ext[:, self.im_index] * self.im_sign).reshape(b, n, n)
        return torch.complex(re, im).to(self.mdtype)

    def psi(self, u: torch.Tensor) -> torch.Tensor:
        """Coordinates of ``U^H Lambda_0 U`` (upper triangle, halved diagonal)."""
        a = u.conj().transpose(-1, -2) @ (self.lam0.to(u.dtype)[:, None] * u)
        d = torch.diagonal(a, dim1=-2, dim2=-1).real / 2.0
        up = a[:, self.iu0, self.iu1]
        parts = [d, up.real] + ([up.imag] if self.complex else [])
        return torch.cat(parts, dim=1).to(self.rdtype)

    def phi(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(lambda descending (B, n), canonical U (B, n, n))``: rows in the gauge of ``self.ref``
        (default: real first entries >= 0)."""
        lam, e = torch.linalg.eigh(self.herm(z))
        lam, e = lam.flip(-1), e.flip(-1)
        u = e.conj().transpose(-1, -2)
        u, _ = canonical_rows(u, self.ref)
        return lam, u

    def dphi(self, lam: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``J_phi(Z)[v]`` at ``phi(Z) = (lam, u)`` (canonical rows), analytic, ``(B, n, n)``."""
        da = self.herm(v)
        c = u @ da @ u.conj().transpose(-1, -2)
        gap = lam[:, :, None] - lam[:, None, :]
        gap = torch.where(self.offdiag, gap, torch.ones_like(gap))
        k = torch.where(self.offdiag, c / gap.to(c.dtype), torch.zeros_like(c))
        du = k @ u
        if self.complex:
            # stay in the gauge: c_i = <u_i, ref_i> (default: the first entry) real, so
            # du_i += i alpha_i u_i with alpha_i = -Im(dc_i) / c_i
            dc, c = gauge_coordinate(du, self.ref), gauge_coordinate(u, self.ref)
            corr = -1j * (dc.imag / c.real.clamp_min(1e-12))
            du = du + corr[:, :, None].to(du.dtype) * u
        return du

    def dphi_jacrev(self, z: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """``J_phi(Z)[v]`` the official code's way: the full Jacobian with ``jacrev`` + ``vmap``.

        Kept only to time the official approach side by side (``jacobian="jacrev"``); it
        builds an ``n^2 x dim`` (``2 n^2 x dim`` for U(n)) matrix per sample.
        """

        def single(zz: torch.Tensor) -> torch.Tensor:
            u = self.phi(zz[None])[1][0]
            return torch.view_as_real(u).reshape(-1) if self.complex else u.reshape(-1)

        jac = torch.func.vmap(torch.func.jacrev(single))(z)
        out = (jac @ v[:, :, None])[..., 0]
        if self.complex:
            return torch.view_as_complex(out.reshape(-1, self.n, self.n, 2).contiguous())
        return out.reshape(-1, self.n, self.n)

    def proj(self, u: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
        """Orthogonal projection of ``m`` onto the tangent space ``{Omega U : Omega^H = -Omega}``."""
        b = m @ u.conj().transpose(-1, -2)
        return 0.5 * (b - b.conj().transpose(-1, -2)) @ u

    def step(self, u: torch.Tensor, xi: torch.Tensor) -> torch.Tensor:
        """``exp_U(xi) = expm(xi U^H) U`` for tangent ``xi``."""
        om = xi @ u.conj().transpose(-1, -2)
        om = 0.5 * (om - om.conj().transpose(-1, -2))
        return torch.linalg.matrix_exp(om) @ u

    def flat(self, u: torch.Tensor) -> torch.Tensor:
        """Real features of a batch of matrices: ``vec(Re U)`` (+ ``vec(Im U)``)."""
        f = u.reshape(u.shape[0], -1)
        return torch.cat([f.real, f.imag], dim=1).to(self.rdtype) if self.complex else f.to(self.rdtype)

    def unflat(self, f: torch.Tensor) -> torch.Tensor:
        n2 = self.n * self.n
        if self.complex:
            return torch.complex(f[:, :n2], f[:, n2:]).reshape(-1, self.n, self.n)
        return f.reshape(-1, self.n, self.n)
