"""Data of the ``monotone-regression`` task: synthetic targets and two bundled real sets.

Every instance has a feature matrix whose columns ``mono`` are declared monotone,
with ``direction[k] = +1`` (non-decreasing in column ``mono[k]``) or ``-1``
(non-increasing); the other columns are free. Arrays are float64; rows are examples.

Synthetic (monotone columns first, training range ``[-1, 1]`` on every column):

- ``syn1d-ramp``: ``y = 2 relu(x - 0.2) + 0.3 x + noise`` (a trend that continues
  past the training range);
- ``syn1d-exp``: ``y = exp(1.5 x) + noise`` (convex growth);
- ``syn1d-steps``: ``y = sigmoid(10 (x + 0.5)) + sigmoid(10 (x - 0.3)) + noise``
  (two smooth steps; saturates, so a bounded activation is at home here);
- ``syn-reg`` / ``syn-clf``: six columns, four monotone (directions ``+ + + -``) and
  two free, with

  ``f(x) = exp(x0) + 1.5 log(x1 + 2) + steps(x2) - 1.5 relu(x3 + 0.2)
  + sin(3 x4) + x5^2 + (1 + 0.5 sin^2(2 x5)) relu(x1) + sigmoid(2 x0) sigmoid(2 x2)``

  (the last two terms are interactions that keep the declared directions: a
  positive factor times an increasing function, a product of positive increasing
  functions). ``syn-reg`` adds Gaussian noise; ``syn-clf`` draws
  ``y ~ Bernoulli(sigmoid(1.5 (f(x) - F0)))`` with the fixed centre ``F0`` (the mean
  of ``f`` under the training distribution, from a fixed 100,000-point sample).

The extrapolation set moves one monotone column per row (chosen uniformly) to
``U[1, 1.6]`` or ``U[-1.6, -1]`` (side chosen uniformly); the others keep the
training distribution. Real sets (bundled with scikit-learn; nothing is downloaded):

- ``diabetes`` (``load_diabetes(scaled=False)``, 442 rows, 10 columns, regression of the
  disease progression one year on): monotone increasing in ``bmi``, ``bp`` (mean blood
  pressure) and ``s5`` (log serum triglycerides), the clinical risk factors;
- ``cancer`` (``load_breast_cancer``, 569 rows, 30 columns, binary: ``y = 1`` for
  malignant): monotone increasing in ``worst radius``, ``worst texture`` and
  ``worst concave points`` (larger, more irregular, more concave nuclei are the
  textbook signs of malignancy).

For a real set the extrapolation set is every row whose first monotone column is
above its 85th percentile (so the model never saw such values); ``n`` training rows
are drawn from the others and the rest are the test set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SYNTHETIC", "REAL", "KINDS", "Drawn", "draw", "truth", "MONO_COLUMNS", "pool_size"]

#: Synthetic kinds and real sets, in the order of their index in random streams.
SYNTHETIC = ("syn1d-ramp", "syn1d-exp", "syn1d-steps", "syn-reg", "syn-clf")
REAL = ("diabetes", "cancer")
KINDS = SYNTHETIC + REAL
#: Noise standard deviation of the synthetic regressions.
NOISE = {"syn1d-ramp": 0.1, "syn1d-exp": 0.1, "syn1d-steps": 0.1, "syn-reg": 0.2}
#: Names of the declared monotone columns of the real sets (all increasing).
MONO_COLUMNS = {
    "diabetes": ("bmi", "bp", "s5"),
    "cancer": ("worst radius", "worst texture", "worst concave points"),
}
#: Rows drawn for test and extrapolation on the synthetic kinds.
N_TEST, N_EXTRAP = 1000, 500
#: The synthetic training range of every column, and how far the extrapolation set goes.
LOW, HIGH, EXTRAP = -1.0, 1.0, 1.6
#: A real set's extrapolation rows: those above this quantile of the first monotone column.
EXTRAP_QUANTILE = 0.85


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


def _steps(z: np.ndarray) -> np.ndarray:
    return _sigmoid(10 * (z + 0.5)) + _sigmoid(10 * (z - 0.3))


def truth(kind: str, X: np.ndarray) -> np.ndarray:
    """The noiseless synthetic target (the logit's ``f`` for ``syn-clf``) at rows ``X``."""
    if kind == "syn1d-ramp":
        x = X[:, 0]
        return 2 * _relu(x - 0.2) + 0.3 * x
    if kind == "syn1d-exp":
        return np.exp(1.5 * X[:, 0])
    if kind == "syn1d-steps":
        return _steps(X[:, 0])
    if kind in ("syn-reg", "syn-clf"):
        x0, x1, x2, x3, x4, x5 = X.T
        return (
            np.exp(x0)
            + 1.5 * np.log(x1 + 2)
            + _steps(x2)
            - 1.5 * _relu(x3 + 0.2)
            + np.sin(3 * x4)
            + x5**2
            + (1 + 0.5 * np.sin(2 * x5) ** 2) * _relu(x1)
            + _sigmoid(2 * x0) * _sigmoid(2 * x2)
        )
    raise KeyError(f"no synthetic target {kind!r}; synthetic kinds are {SYNTHETIC}")


def _layout(kind: str) -> tuple[int, list[int], list[int]]:
    """(columns, monotone columns, directions) of a synthetic kind."""
    if kind.startswith("syn1d"):
        return 1, [0], [1]
    return 6, [0, 1, 2, 3], [1, 1, 1, -1]


#: Centre of the syn-clf logit: mean of f over the training distribution (fixed sample).
_F0 = float(
    np.mean(truth("syn-reg", np.random.default_rng(20250502).uniform(LOW, HIGH, (100_000, 6))))
)


@dataclass(frozen=True)
class Drawn:
    """One drawn instance: training, test and extrapolation rows, and the column roles."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    X_extrap: np.ndarray
    y_extrap: np.ndarray
    mono: list[int]
    direction: list[int]
    feature_names: list[str]
    task_type: str  # "regression" or "classification"
    #: Bayes predictions on test and extrapolation rows (synthetic only): E[y | x].
    bayes_test: np.ndarray | None = None
    bayes_extrap: np.ndarray | None = None


def pool_size(kind: str) -> int:
    """How many non-extrapolation rows a real set has (``n`` must leave >= 50 for the test set)."""
    X = _real(kind)[0]
    first = X[:, _real(kind)[2][0]]
    return int(np.sum(first <= np.quantile(first, EXTRAP_QUANTILE)))


def _real(kind: str) -> tuple[np.ndarray, np.ndarray, list[int], list[str]]:
    if kind == "diabetes":
        from sklearn.datasets import load_diabetes

        d = load_diabetes(scaled=False)
        X, y, names = d.data.astype(np.float64), d.target.astype(np.float64), list(d.feature_names)
    elif kind == "cancer":
        from sklearn.datasets import load_breast_cancer

        d = load_breast_cancer()
        X, names = d.data.astype(np.float64), [str(s) for s in d.feature_names]
        y = (d.target == 0).astype(np.float64)  # scikit-learn codes malignant as 0
    else:
        raise KeyError(f"no real set {kind!r}; real sets are {REAL}")
    return X, y, [names.index(c) for c in MONO_COLUMNS[kind]], names


def _synthetic_x(kind: str, count: int, rng: np.random.Generator) -> np.ndarray:
    d = _layout(kind)[0]
    return rng.uniform(LOW, HIGH, size=(count, d))


def _extrap_x(kind: str, count: int, rng: np.random.Generator) -> np.ndarray:
    X = _synthetic_x(kind, count, rng)
    mono = _layout(kind)[1]
    col = rng.choice(mono, size=count)
    side = rng.choice([-1.0, 1.0], size=count)
    X[np.arange(count), col] = side * rng.uniform(HIGH, EXTRAP, size=count)
    return X


def _labels(kind: str, f: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(noisy labels, their conditional mean) for the synthetic values ``f``."""
    if kind == "syn-clf":
        p = _sigmoid(1.5 * (f - _F0))
        return (rng.uniform(size=f.shape) < p).astype(np.float64), p
    return f + NOISE[kind] * rng.standard_normal(f.shape), f


def draw(kind: str, n: int, seed: int) -> Drawn:
    """Draw one instance, deterministically in ``(kind, n, seed)``.

    Stream: ``numpy.random.default_rng([seed, n, KINDS.index(kind)])``; the real sets
    permute their non-extrapolation rows with it and take the first ``n`` for training.
    """
    rng = np.random.default_rng([seed, n, KINDS.index(kind)])
    if kind in SYNTHETIC:
        d, mono, direction = _layout(kind)
        Xs = [
            _synthetic_x(kind, n, rng),
            _synthetic_x(kind, N_TEST, rng),
            _extrap_x(kind, N_EXTRAP, rng),
        ]
        ys, means = zip(*(_labels(kind, truth(kind, X), rng) for X in Xs), strict=True)
        return Drawn(
            Xs[0],
            ys[0],
            Xs[1],
            ys[1],
            Xs[2],
            ys[2],
            mono,
            direction,
            [f"x{j}" for j in range(d)],
            "classification" if kind == "syn-clf" else "regression",
            means[1],
            means[2],
        )
    X, y, mono, names = _real(kind)
    first = X[:, mono[0]]
    extrap = first > np.quantile(first, EXTRAP_QUANTILE)
    pool = rng.permutation(np.flatnonzero(~extrap))
    if n > pool.size - 50:
        raise ValueError(f"{kind}: n={n} leaves fewer than 50 test rows (at most {pool.size - 50})")
    tr, te = pool[:n], pool[n:]
    return Drawn(
        X[tr],
        y[tr],
        X[te],
        y[te],
        X[extrap],
        y[extrap],
        mono,
        [1] * len(mono),
        names,
        "classification" if kind == "cancer" else "regression",
    )
