"""The four regression problems, their groups and the task's own group sampler.

Every problem is a map between tensor representations of one matrix group ``G`` acting on
``R^d``. A representation is a tuple ``(c0, c1, c2)``: ``c0`` scalars, ``c1`` vectors and ``c2``
rank-2 tensors ``V (x) V``, laid out flat in that order (a vector is ``d`` consecutive entries, a
tensor ``d * d`` row-major). The group acts by ``g`` on each vector and ``g T g^T`` on each
tensor.

- ``o5``: O(5)-invariant ``f(x1, x2) = sin|x1| - |x2|^3 / 2 + <x1, x2> / (|x1| |x2|)``,
  ``x ~ N(0, I_10)`` (EMLP's ``O5Synthetic``);
- ``inertia``: O(3)-equivariant inertia tensor ``sum_i m_i (|x_i|^2 I - x_i x_i^T)`` of 5 point
  masses, masses ``softplus(N(0, 1))`` and positions ``N(0, I_3)`` (EMLP's ``Inertia``);
- ``lorentz``: the e+e- -> mu+mu- matrix element of four four-momenta ``N(0, I / 16)``,
  invariant under O(1, 3) (EMLP's and EKAN's ``ParticleInteraction``);
- ``threebody``: the next state of three unit masses in the plane under gravity (``G = 1``,
  integrated by scipy's ``solve_ivp``) from the last 4 states, O(2)-equivariant (EKAN's
  three-body task; its data pickle is not used: we integrate our own orbits).

The Lie algebra and discrete generators of each group go to the method (public); the sampler
of random group elements (for the equivariance error) stays with the task.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PROBLEMS", "Problem", "generate", "group_generators", "sample_group", "act", "rep_size"]


@dataclass(frozen=True)
class Problem:
    """One problem: its group (``name``, dimension ``d``), input and output representations."""

    name: str
    group: str
    d: int
    rep_in: tuple[int, int, int]
    rep_out: tuple[int, int, int]
    description: str


PROBLEMS: dict[str, Problem] = {
    "o5": Problem(
        "o5",
        "O(5)",
        5,
        (0, 2, 0),
        (1, 0, 0),
        "O(5)-invariant synthetic regression (EMLP O5Synthetic)",
    ),
    "inertia": Problem(
        "inertia",
        "O(3)",
        3,
        (5, 5, 0),
        (0, 0, 1),
        "O(3)-equivariant inertia tensor of 5 point masses (EMLP Inertia)",
    ),
    "lorentz": Problem(
        "lorentz",
        "O(1,3)",
        4,
        (0, 4, 0),
        (1, 0, 0),
        "Lorentz-invariant e+e- -> mu+mu- matrix element (particle scattering)",
    ),
    "threebody": Problem(
        "threebody",
        "O(2)",
        2,
        (0, 24, 0),
        (0, 6, 0),
        "next state of the planar three-body problem from 4 past states",
    ),
}

#: Minkowski metric of O(1, 3), signature (+, -, -, -).
ETA = np.diag([1.0, -1.0, -1.0, -1.0])


def rep_size(rep: tuple[int, int, int], d: int) -> int:
    """Flat size of ``(c0, c1, c2)``."""
    return rep[0] + rep[1] * d + rep[2] * d * d


def group_generators(group: str) -> dict[str, np.ndarray]:
    """``lie_algebra`` ``(k, d, d)`` and ``discrete_generators`` ``(m, d, d)`` of ``group``."""
    if group.startswith("O(1,"):
        d, metric = 4, ETA
    else:
        d = int(group[2:-1])
        metric = np.eye(d)
    lie = []
    for i, j in itertools.combinations(range(d), 2):
        # A with A^T M + M A = 0: rotations (M_ii = M_jj) and boosts (M_ii = -M_jj)
        a = np.zeros((d, d))
        a[i, j] = 1.0
        a[j, i] = -metric[i, i] * metric[j, j]
        lie.append(a)
    # one reflection with SO(d) generates O(d); time reversal and one space reflection with
    # SO+(1, 3) generate O(1, 3)
    disc = [np.diag([-1.0] + [1.0] * (d - 1))]
    if group.startswith("O(1,"):
        disc.append(np.diag([1.0, -1.0, 1.0, 1.0]))
    return {"lie_algebra": np.array(lie), "discrete_generators": np.array(disc)}


def sample_group(group: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random elements ``(count, d, d)``: Haar on O(d) (QR of Gaussian matrices, signs
    fixed), and for O(1, 3) a random O(3) rotation-reflection, a boost of rapidity ``U(-1, 1)``
    along a random direction, and time reversal with probability 1/2."""
    if group.startswith("O(1,"):
        out = np.empty((count, 4, 4))
        rot = sample_group("O(3)", count, rng)
        for k in range(count):
            n = rng.standard_normal(3)
            n /= np.linalg.norm(n)
            y = rng.uniform(-1.0, 1.0)
            b = np.eye(4)
            b[0, 0] = np.cosh(y)
            b[0, 1:] = b[1:, 0] = np.sinh(y) * n
            b[1:, 1:] += (np.cosh(y) - 1.0) * np.outer(n, n)
            r = np.eye(4)
            r[1:, 1:] = rot[k]
            t = np.diag([-1.0 if rng.random() < 0.5 else 1.0, 1, 1, 1])
            out[k] = t @ b @ r
        return out
    d = int(group[2:-1])
    z = rng.standard_normal((count, d, d))
    q, r = np.linalg.qr(z)
    return q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]


def act(x: np.ndarray, g: np.ndarray, rep: tuple[int, int, int]) -> np.ndarray:
    """Rows of ``x`` ``(n, size)`` transformed by ``g`` ``(n, d, d)``, one element per row."""
    n, d = x.shape[0], g.shape[-1]
    c0, c1, c2 = rep
    s = x[:, :c0]
    v = x[:, c0 : c0 + c1 * d].reshape(n, c1, d)
    t = x[:, c0 + c1 * d :].reshape(n, c2, d, d)
    v = np.einsum("nij,ncj->nci", g, v)
    t = np.einsum("nij,ncjk,nlk->ncil", g, t, g)
    return np.concatenate([s, v.reshape(n, -1), t.reshape(n, -1)], axis=1)


# -- data --------------------------------------------------------------------------------------


def _o5(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((n, 10))
    r1, r2 = x[:, :5], x[:, 5:]
    n1, n2 = np.linalg.norm(r1, axis=1), np.linalg.norm(r2, axis=1)
    y = np.sin(n1) - 0.5 * n2**3 + (r1 * r2).sum(1) / (n1 * n2)
    return x, y[:, None]


def _inertia(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    k = 5
    x = rng.standard_normal((n, 4 * k))
    x[:, :k] = np.log1p(np.exp(x[:, :k]))  # masses
    m, r = x[:, :k], x[:, k:].reshape(n, k, 3)
    r2 = (r**2).sum(-1)[..., None, None]
    inertia = (m[:, :, None, None] * (r2 * np.eye(3) - r[..., :, None] * r[..., None, :])).sum(1)
    return x, inertia.reshape(n, 9)


def _lorentz(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((n, 16)) / 4
    p1, p2, p3, p4 = x.reshape(n, 4, 4).transpose(1, 0, 2)

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return ((a @ ETA) * b).sum(-1)

    le = p1[:, :, None] * p3[:, None, :] - (dot(p1, p3) - dot(p1, p1))[:, None, None] * ETA
    lmu = (p2 @ ETA)[:, :, None] * (p4 @ ETA)[:, None, :] - (dot(p2, p4) - dot(p2, p2))[
        :, None, None
    ] * ETA
    return x, 4 * (le * lmu).sum((1, 2))[:, None]


#: Three-body orbits: 50 states spaced DT apart, windows of 4 inputs and 1 target.
THREEBODY_STEPS, THREEBODY_DT, THREEBODY_IN = 50, 0.1, 4


def _threebody_orbit(rng: np.random.Generator) -> np.ndarray:
    """One orbit ``(THREEBODY_STEPS, 12)``: ``q1 q2 q3 p1 p2 p3`` (2-vectors), unit masses."""
    from scipy.integrate import solve_ivp

    # near the rotating equilateral (Lagrange) solution, perturbed (as HNN's three-body data)
    radius = rng.uniform(0.9, 1.2)
    theta = rng.uniform(0, 2 * np.pi) + np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
    q = radius * np.stack([np.cos(theta), np.sin(theta)], 1)
    speed = np.sqrt(1.0 / (np.sqrt(3.0) * radius))  # circular speed of the equilateral orbit
    p = speed * np.stack([-np.sin(theta), np.cos(theta)], 1)
    p = p * rng.uniform(0.8, 1.2) + 0.05 * rng.standard_normal((3, 2))
    p -= p.mean(0)  # zero total momentum

    def rhs(_t: float, z: np.ndarray) -> np.ndarray:
        qq = z[:6].reshape(3, 2)
        acc = np.zeros((3, 2))
        for i in range(3):
            for j in range(3):
                if i != j:
                    r = qq[j] - qq[i]
                    acc[i] += r / max(np.linalg.norm(r), 0.05) ** 3
        return np.concatenate([z[6:], acc.reshape(-1)])

    t = np.arange(THREEBODY_STEPS) * THREEBODY_DT
    sol = solve_ivp(
        rhs,
        (0.0, t[-1]),
        np.concatenate([q.reshape(-1), p.reshape(-1)]),
        t_eval=t,
        rtol=1e-9,
        atol=1e-9,
    )
    return sol.y.T


def _threebody(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    per = THREEBODY_STEPS - THREEBODY_IN
    xs, ys = [], []
    while sum(len(a) for a in xs) < n:
        orbit = _threebody_orbit(rng)
        xs.append(np.stack([orbit[t : t + THREEBODY_IN].reshape(-1) for t in range(per)]))
        ys.append(orbit[THREEBODY_IN:])
    return np.concatenate(xs)[:n], np.concatenate(ys)[:n]


_GENERATORS = {"o5": _o5, "inertia": _inertia, "lorentz": _lorentz, "threebody": _threebody}


def generate(problem: str, n_train: int, n_test: int, seed: int) -> dict[str, Any]:
    """Training and test sets, float64: ``X_train (n, in)``, ``Y_train (n, out)``, ``X_test``, ``Y_test``.

    Streams: ``default_rng([seed, 0, <problem index>])`` draws the test set and
    ``default_rng([seed, n_train, <problem index>])`` the training set (three-body: different
    orbits for training and test), so every training size of one seed shares the test set.
    """
    k = list(PROBLEMS).index(problem)
    gen = _GENERATORS[problem]
    x_test, y_test = gen(n_test, np.random.default_rng([seed, 0, k]))
    x_train, y_train = gen(n_train, np.random.default_rng([seed, n_train, k]))
    return {"X_train": x_train, "Y_train": y_train, "X_test": x_test, "Y_test": y_test}
