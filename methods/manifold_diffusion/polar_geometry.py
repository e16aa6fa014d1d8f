"""The polar projection of SO(n) and U(n): ``phi(Z)`` = the (special) polar factor of ``Z`` (ours).

Not the paper's map for SO(n)/U(n) (that is the eigenvector map of :mod:`.matrix_geometry`), but
the same framework: an Euclidean OU process ``Z_s`` in ``R^{n x n}`` (``C^{n x n}``) projected onto
the group, ``X_s = phi(Z_s)``, with the drift learned by regression onto ``J_phi(Z_s)[v]`` and the
noise of the reverse process scaled as the forward process's. ``projected-diffusion-tuned`` uses it
from version 4 (``projection="polar"``); ``methods/manifold_diffusion/README.md`` says why.

- ``phi(Z) = X``: ``Z = X P`` with ``P = Q diag(s) Q^H`` Hermitian, ``X`` unitary. On U(n) it is
  the polar decomposition (``P >= 0``). On SO(n) ``X`` must have ``det = +1``: where ``det Z < 0``
  the smallest singular direction is flipped (``s_n -> -s_n``), which gives the nearest point of
  SO(n) (the special polar factor; the map jumps where ``det Z = 0``).
- ``psi(X) = c X`` with ``c = polar_scale``, so ``phi(psi(X)) = X`` and the forward process
  is ``X_s = X_0 phi(a c I + sigma G)`` with ``G`` Gaussian: a right multiplication of the data by
  a conjugation-invariant random rotation that does not depend on the data, as the heat kernel of
  ``rsgm`` is.
- Derivative: ``dX = X Omega`` with ``Omega P + P Omega = X^H dZ - dZ^H X``, so in ``P``'s eigenbasis
  ``Omega'_ij = (Q^H (X^H dZ - dZ^H X) Q)_ij / (s_i + s_j)``: two ``n x n`` products and the
  singular value decomposition per sample, no eigenvector signs or phases to carry, and the
  denominators ``s_i + s_j`` vanish only at the flip of SO(n)'s special polar factor, where the
  eigenvector map's ``lambda_i - lambda_j`` vanish wherever two eigenvalues meet.
- The Ito term ``1/2 sum_k d^2 phi[e_k, e_k]`` has no tangent part: summing the second
  differences along all ``n^2`` (U(n): ``2 n^2``) coordinates gives a tangent part of median
  ``1e-7`` to ``1e-6`` (finite-difference error) against a normal part of order 1 on SO(3), SO(6),
  U(3) and U(4) at every noise level (``tests/test_manifold_methods.py`` checks it). So the drift target is ``J_phi(Z)[beta grad log p(Z | Z_0)]`` (the ``beta Z / 2`` part of the
  reverse drift is normal: ``X^H Z = P`` is Hermitian).
- Noise: the forward increment's covariance in the Lie algebra is ``2 / (s_i + s_j)^2`` per
  coordinate (in ``P``'s eigenbasis, per unit ``beta ds``). The sampler uses one scalar per time,
  :func:`noise_scale`: ``2 / E[s_i + s_j]^2`` averaged over the coordinates, with the expectation
  over the law of ``s`` at that time, which does not depend on the data. Near the data ``s ~ a c``
  for every ``i``, and this is exact.
"""

from __future__ import annotations

import torch

__all__ = ["PolarCoords"]


class PolarCoords:
    """The polar projection of ``n x n`` real (SO(n)) or complex (U(n)) matrices, batched.

    Lie-algebra coordinates: SO(n): the strict upper triangle of the skew matrix (``n(n-1)/2``);
    U(n): real and imaginary parts of the strict upper triangle and the imaginary diagonal (``n^2``).
    """

    def __init__(self, n: int, complex_: bool, scale: float) -> None:
        self.n, self.complex, self.scale = n, complex_, float(scale)
        iu = torch.triu_indices(n, n, 1)
        self.iu0, self.iu1 = iu[0], iu[1]
        self.m = n * (n - 1) // 2
        #: number of real coordinates of the Lie algebra
        self.dim = n * n if complex_ else self.m
        #: number of real features of a point (the net's input)
        self.features = 2 * n * n if complex_ else n * n

    @property
    def dtype(self) -> torch.dtype:
        return torch.complex64 if self.complex else torch.float32

    def gaussian(self, shape: tuple[int, ...], gen: torch.Generator, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        """Standard Gaussian matrices; complex ones have unit variance in each real part."""
        g = torch.randn(shape, generator=gen, dtype=dtype)
        if self.complex:
            return torch.complex(g, torch.randn(shape, generator=gen, dtype=dtype))
        return g

    def decompose(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(X, Q, s)`` with ``z = X Q diag(s) Q^H``: ``X`` in SO(n) / U(n); ``s`` signed on SO(n)."""
        w, s, vh = torch.linalg.svd(z)
        if not self.complex:
            neg = torch.linalg.det(w @ vh) < 0
            flip = torch.ones_like(s)
            flip[:, -1] = torch.where(neg, -1.0, 1.0).to(s.dtype)
            w, s = w * flip[:, None, :], s * flip
        return w @ vh, vh.conj().transpose(-1, -2), s

    def phi(self, z: torch.Tensor) -> torch.Tensor:
        """The projection: the (special) polar factor of each matrix."""
        return self.decompose(z)[0]

    def algebra(self, x: torch.Tensor, q: torch.Tensor, s: torch.Tensor, dz: torch.Tensor, den_min: float = 1e-2) -> torch.Tensor:
        """``Omega = X^H J_phi(Z)[dZ]`` at ``Z = X Q diag(s) Q^H``, ``(B, n, n)`` skew (anti-Hermitian).

        ``|s_i + s_j|`` is kept ``>= den_min``: on SO(n) it vanishes only at the jump of the special
        polar factor (``det Z = 0``, two singular values equal with one flipped).
        """
        den = s[:, :, None] + s[:, None, :]
        den = torch.where(den.abs() < den_min, torch.where(den < 0, -den_min, den_min), den).to(x.dtype)
        k = x.conj().transpose(-1, -2) @ dz
        k = k - k.conj().transpose(-1, -2)
        qh = q.conj().transpose(-1, -2)
        return q @ ((qh @ k @ q) / den) @ qh

    def coords(self, om: torch.Tensor) -> torch.Tensor:
        """Real coordinates ``(B, dim)`` of skew / anti-Hermitian matrices."""
        up = om[:, self.iu0, self.iu1]
        if not self.complex:
            return up
        return torch.cat([up.real, up.imag, torch.diagonal(om, dim1=-2, dim2=-1).imag], dim=1)

    def from_coords(self, c: torch.Tensor) -> torch.Tensor:
        """Inverse of :meth:`coords`."""
        n, m = self.n, self.m
        if not self.complex:
            om = torch.zeros(c.shape[0], n, n, dtype=c.dtype)
            om[:, self.iu0, self.iu1] = c
            return om - om.transpose(-1, -2)
        om = torch.zeros(c.shape[0], n, n, dtype=torch.complex64 if c.dtype == torch.float32 else torch.complex128)
        om[:, self.iu0, self.iu1] = torch.complex(c[:, :m], c[:, m : 2 * m])
        om = om - om.conj().transpose(-1, -2)
        return om + torch.diag_embed(1j * c[:, 2 * m :].to(om.dtype))

    def features_of(self, x: torch.Tensor) -> torch.Tensor:
        """The net's input: ``vec(X)`` (real and imaginary parts on U(n)), float32."""
        f = x.reshape(x.shape[0], -1)
        return (torch.cat([f.real, f.imag], dim=1) if self.complex else f).to(torch.float32)

    def noise_scale(self, a: float, sd: float, gen: torch.Generator, samples: int = 4096) -> float:
        """Variance per Lie-algebra coordinate and unit ``beta ds`` of the sampler's noise at a time
        whose OU mean factor is ``a`` and standard deviation ``sd``: ``2 / E[s_i + s_j]^2``, averaged
        over the coordinates, ``s`` the (signed) singular values of ``a c I + sd G`` (Monte Carlo)."""
        n = self.n
        g = self.gaussian((samples, n, n), gen, torch.float64)
        eye = torch.eye(n, dtype=g.dtype)
        s = self.decompose(a * self.scale * eye + sd * g)[2]
        w = 2.0 / (s[:, :, None] + s[:, None, :]).mean(0) ** 2
        up = w[self.iu0, self.iu1]
        if not self.complex:
            return float(up.mean())
        return float((2.0 * up.sum() + torch.diagonal(w).sum()) / (n * n))
