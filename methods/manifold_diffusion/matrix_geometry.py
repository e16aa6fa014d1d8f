"""The paper's projection ``phi`` for SO(n) and U(n), its right inverse ``psi``, and the analytic
eigenvector derivative (torch, batched).

``Z`` is a (real, or complex with real diagonal) upper-triangular matrix, stored as a real
vector: ``[diag (n), Re upper (m), Im upper (m, complex only)]``, ``m = n(n-1)/2``.
``A = Z + Z^H``; ``phi(Z) = U`` whose rows are the eigenvectors of ``A`` (conjugated) sorted
by decreasing eigenvalue, so ``A = U^H diag(lambda) U``; ``psi(U)`` is the upper triangle of
``U^H Lambda_0 U`` with the diagonal halved, ``Lambda_0 = diag(n, n-1, ..., 1) / n``
(research note 2.3; official ``manifold/special_orthogonal.py``, ``unitary.py``).

The derivative of ``phi`` along ``dZ`` is ``dU = K U`` with
``K_ij = (U dA U^H)_ij / (lambda_i - lambda_j)`` for ``i != j`` (first-order perturbation
theory), which costs two ``n x n`` products per sample instead of the ``O(n^4)`` Jacobian
``jacrev`` + ``vmap`` builds in the official code.
"""

from __future__ import annotations

import torch

from methods.manifold_diffusion.common import canonical_rows

__all__ = ["MatrixCoords"]


class MatrixCoords:
    """Coordinates and maps for ``n x n`` real (SO) or complex (U) matrices."""

    def __init__(self, n: int, complex_: bool, dtype: torch.dtype = torch.float32) -> None:
        self.n, self.complex = n, complex_
        self.rdtype = dtype
        self.cdtype = torch.complex64 if dtype == torch.float32 else torch.complex128
        iu = torch.triu_indices(n, n, 1)
        self.iu0, self.iu1 = iu[0], iu[1]
        self.m = n * (n - 1) // 2
        self.dim = n + self.m * (2 if complex_ else 1)
        self.lam0 = torch.arange(n, 0, -1, dtype=dtype) / n
        self.offdiag = ~torch.eye(n, dtype=torch.bool)

    @property
    def mdtype(self) -> torch.dtype:
        return self.cdtype if self.complex else self.rdtype

    def herm(self, z: torch.Tensor) -> torch.Tensor:
        """``A = Z + Z^H`` from coordinate vectors ``(B, dim)``."""
        b, n = z.shape[0], self.n
        a = torch.zeros(b, n, n, dtype=self.mdtype)
        idx = torch.arange(n)
        a[:, idx, idx] = (2.0 * z[:, :n]).to(self.mdtype)
        up = z[:, n : n + self.m]
        if self.complex:
            up = torch.complex(up, z[:, n + self.m :])
        a[:, self.iu0, self.iu1] = up.to(self.mdtype)
        a[:, self.iu1, self.iu0] = up.conj().to(self.mdtype) if self.complex else up
        return a

    def psi(self, u: torch.Tensor) -> torch.Tensor:
        """Coordinates of ``U^H Lambda_0 U`` (upper triangle, halved diagonal)."""
        a = u.conj().transpose(-1, -2) @ (self.lam0.to(u.dtype)[:, None] * u)
        d = torch.diagonal(a, dim1=-2, dim2=-1).real / 2.0
        up = a[:, self.iu0, self.iu1]
        parts = [d, up.real] + ([up.imag] if self.complex else [])
        return torch.cat(parts, dim=1).to(self.rdtype)

    def phi(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(lambda descending (B, n), canonical U (B, n, n))``; rows of U have real first entries >= 0."""
        lam, e = torch.linalg.eigh(self.herm(z))
        lam, e = lam.flip(-1), e.flip(-1)
        u = e.conj().transpose(-1, -2)
        u, _ = canonical_rows(u)
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
            # keep the first entry of each row real (the canonical phase gauge)
            corr = -1j * (du[:, :, 0].imag / u[:, :, 0].real.clamp_min(1e-12))
            du = du + corr[:, :, None].to(du.dtype) * u
        return du

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
