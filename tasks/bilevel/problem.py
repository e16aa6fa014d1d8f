"""Data hyper-cleaning as a bilevel problem: data, losses, oracles and the trusted retrain.

The problem (all arrays ``float64``)::

    min_x  f(x, W) = (1 / n_val) sum_j CE(W; a_j, b_j)                 (clean validation loss)
    s.t.   W in argmin_W g(x, W),
           g(x, W) = (1 / n) sum_i sigmoid(x_i) CE(W; a_i, b~_i) + (mu / 2) ||W||_F^2

``x`` (``(n,)``) are per-example logits, ``sigmoid(x_i)`` the example weights,
``W`` (``(p, K)``, ``p = d + 1`` with the bias row last) a multinomial
logistic regression, ``b~`` the training labels of which a fraction was
flipped to another class uniformly at random. ``g`` is ``mu``-strongly convex
in ``W`` (a unique lower-level solution) and nonconvex in ``x``.

Everything here runs on the trusted side: the method only ever sees oracle
answers (values, gradients, Hessian-vector products), never the data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize
from scipy.special import expit, log_softmax, softmax

__all__ = [
    "DATASETS",
    "MU",
    "SPLIT",
    "HyperCleaning",
    "make_problem",
    "accuracy",
    "cross_entropy",
]

#: Datasets: bundled digits, and one ``make_classification`` draw per seed.
DATASETS = ("digits", "synth")
#: l2 weight of the lower level (strong convexity in W).
MU = 1e-3
#: (train, validation) sizes; the rest of the data is the test set.
SPLIT = {"digits": (600, 300), "synth": (600, 300)}
_SYNTH_N = 1500


def cross_entropy(W: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per-example ``CE(W; a_i, b_i) = -log softmax(a_i W)[b_i]``, shape ``(m,)``."""
    return -log_softmax(A @ W, axis=1)[np.arange(b.size), b]


def accuracy(W: np.ndarray, A: np.ndarray, b: np.ndarray) -> float:
    """Fraction of rows of ``A`` whose arg-max class under ``W`` is ``b``."""
    return float(np.mean(np.argmax(A @ W, axis=1) == b))


def _features(dataset: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    if dataset == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        return X.astype(np.float64), y.astype(np.int64)
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=_SYNTH_N,
        n_features=20,
        n_informative=10,
        n_redundant=4,
        n_classes=5,
        n_clusters_per_class=1,
        class_sep=2.0,
        flip_y=0.0,
        random_state=int(seed),
    )
    return X.astype(np.float64), y.astype(np.int64)


@dataclass
class HyperCleaning:
    """One drawn hyper-cleaning problem (trusted side).

    Attributes
    ----------
    A_tr, b_tr
        Training features ``(n, p)`` (bias column last) and *noisy* labels.
    clean_tr
        The training labels before flipping; ``flipped = b_tr != clean_tr``.
    A_val, b_val, A_te, b_te
        Clean validation and test sets.
    K, mu
        Number of classes, lower-level l2 weight.
    """

    A_tr: np.ndarray
    b_tr: np.ndarray
    clean_tr: np.ndarray
    A_val: np.ndarray
    b_val: np.ndarray
    A_te: np.ndarray
    b_te: np.ndarray
    K: int
    mu: float = MU

    @property
    def n(self) -> int:
        return int(self.b_tr.size)

    @property
    def p(self) -> int:
        return int(self.A_tr.shape[1])

    @property
    def flipped(self) -> np.ndarray:
        return self.b_tr != self.clean_tr

    def smoothness(self) -> float:
        """An upper bound on the Lipschitz constant of ``grad_W g`` for weights in [0, 1].

        ``0.5 * lambda_max(A^T A / n) + mu`` (the softmax cross-entropy Hessian
        is at most ``0.5 a a^T`` per class block).
        """
        return float(0.5 * np.linalg.eigvalsh(self.A_tr.T @ self.A_tr / self.n)[-1] + self.mu)

    # -- lower level -------------------------------------------------------------------
    def g(self, x: np.ndarray, W: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """``g(x, W)`` and its gradients ``(d/dx (n,), d/dW (p, K))``."""
        Z = self.A_tr @ W
        logp = log_softmax(Z, axis=1)
        ce = -logp[np.arange(self.n), self.b_tr]
        w = expit(x)
        value = float(w @ ce) / self.n + 0.5 * self.mu * float(np.sum(W * W))
        gx = w * (1.0 - w) * ce / self.n
        R = np.exp(logp)
        R[np.arange(self.n), self.b_tr] -= 1.0
        gW = self.A_tr.T @ (w[:, None] * R) / self.n + self.mu * W
        return value, gx, gW

    def hvp(self, x: np.ndarray, W: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(grad^2_WW g) V`` (``(p, K)``) and ``(grad^2_xW g) V`` (``(n,)``) at ``(x, W)``.

        One product of the joint Hessian with ``(0, V)``: what one reverse-mode
        pass over ``<grad_W g, V>`` gives, counted as one call by the oracle.
        """
        P = softmax(self.A_tr @ W, axis=1)
        U = self.A_tr @ V  # (n, K): directional change of the logits
        J = P * (U - np.sum(P * U, axis=1, keepdims=True))  # d softmax along V
        w = expit(x)
        hWW = self.A_tr.T @ (w[:, None] * J) / self.n + self.mu * V
        R = P.copy()
        R[np.arange(self.n), self.b_tr] -= 1.0
        # d/dx_i <grad_W g, V> = sigma'(x_i) / n * <a_i, V (p_i - e_{b_i})> = sigma'(x_i)/n * sum_k U_ik R_ik
        hxW = w * (1.0 - w) * np.sum(U * R, axis=1) / self.n
        return hWW, hxW

    # -- upper level ------------------------------------------------------------------
    def f(self, W: np.ndarray) -> tuple[float, np.ndarray]:
        """Validation loss ``f(W)`` and ``d/dW`` (``f`` does not depend on ``x``)."""
        m = self.b_val.size
        logp = log_softmax(self.A_val @ W, axis=1)
        value = -float(np.sum(logp[np.arange(m), self.b_val])) / m
        R = np.exp(logp)
        R[np.arange(m), self.b_val] -= 1.0
        return value, self.A_val.T @ R / m

    # -- the trusted converged solve ----------------------------------------------------
    def retrain(
        self, weights: np.ndarray, W0: np.ndarray | None = None, gtol: float = 1e-7
    ) -> np.ndarray:
        """``argmin_W (1/n) sum_i weights_i CE_i(W) + mu/2 ||W||^2`` (L-BFGS-B from ``W0`` or 0).

        ``weights`` in [0, 1], shape ``(n,)``. Strongly convex, so the answer is
        unique: at ``gtol = 1e-7`` (largest gradient entry) the solution is
        within ``~1e-7 sqrt(pK) / mu`` of it and its value within
        ``|grad|^2 / (2 mu) < 1e-9`` of the minimum, far below any difference
        the metrics show.
        """
        w = np.asarray(weights, dtype=np.float64)
        p, K = self.p, self.K
        n = self.n
        rows = np.arange(n)

        def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
            W = theta.reshape(p, K)
            logp = log_softmax(self.A_tr @ W, axis=1)
            value = -float(w @ logp[rows, self.b_tr]) / n + 0.5 * self.mu * float(theta @ theta)
            R = np.exp(logp)
            R[rows, self.b_tr] -= 1.0
            grad = self.A_tr.T @ (w[:, None] * R) / n + self.mu * W
            return value, grad.ravel()

        start = np.zeros(p * K) if W0 is None else np.asarray(W0, dtype=np.float64).ravel()
        res = scipy.optimize.minimize(
            fun,
            start,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": 5000, "gtol": gtol, "ftol": 0.0},
        )
        return res.x.reshape(p, K)

    def lower_value(self, weights: np.ndarray, W: np.ndarray) -> float:
        """``g`` with the weights given directly (not as logits)."""
        ce = cross_entropy(W, self.A_tr, self.b_tr)
        return float(np.asarray(weights) @ ce) / self.n + 0.5 * self.mu * float(np.sum(W * W))


def make_problem(dataset: str, noise: float, seed: int) -> HyperCleaning:
    """Draw one problem: split, standardise, flip ``round(noise * n)`` training labels.

    The split and the flips come from ``numpy.random.default_rng([code, round(100 noise), seed])``;
    ``synth`` also draws its data set with ``random_state=seed``. Features are
    standardised with the training rows' statistics and divided by
    ``sqrt(d)`` (so ``||a_i|| ~ 1`` and the smoothness constant is ``O(1)``);
    a bias column of ones is appended.
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {DATASETS}")
    X, y = _features(dataset, seed)
    code = DATASETS.index(dataset)
    rng = np.random.default_rng([code, round(100 * noise), int(seed)])
    perm = rng.permutation(y.size)
    n_tr, n_val = SPLIT[dataset]
    tr, va, te = perm[:n_tr], perm[n_tr : n_tr + n_val], perm[n_tr + n_val :]
    mean = X[tr].mean(axis=0)
    std = X[tr].std(axis=0)
    std[std < 1e-12] = 1.0  # digits has always-blank pixels
    d = X.shape[1]

    def prep(rows: np.ndarray) -> np.ndarray:
        Z = (X[rows] - mean) / std / np.sqrt(d)
        return np.hstack([Z, np.ones((rows.size, 1))])

    K = int(y.max()) + 1
    clean = y[tr].copy()
    noisy = clean.copy()
    n_flip = round(noise * n_tr)
    idx = rng.choice(n_tr, size=n_flip, replace=False)
    shift = rng.integers(1, K, size=n_flip)  # uniform over the K - 1 other classes
    noisy[idx] = (clean[idx] + shift) % K
    return HyperCleaning(
        A_tr=prep(tr),
        b_tr=noisy,
        clean_tr=clean,
        A_val=prep(va),
        b_val=y[va],
        A_te=prep(te),
        b_te=y[te],
        K=K,
    )
