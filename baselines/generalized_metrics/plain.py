"""Plug-in baselines without a metric-aware threshold: threshold 0.5, and class-weighted at 0.5.

Reference: scikit-learn's ``LogisticRegression`` (linear track) and
``MLPClassifier`` (mlp track) on standardised features, predicting 1 where
the estimated probability is at least 0.5 (``predict``); the class-weighted
one weighs each class to half the total (``class_weight="balanced"``, as
sample weights for the MLP, which has no ``class_weight``).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.class_weight import compute_sample_weight

from baselines.generalized_metrics._models import fit_quietly, model, train_test
from bench import method

_PARAMS = {"C": 1.0, "hidden": 16, "max_iter": 150}


@method(
    name="threshold-half",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference="LogisticRegression (linear track) or MLPClassifier (mlp track), standardised, threshold 0.5",
    version="1",
    params=_PARAMS,
    deterministic=True,
)
def solve_half(instance, *, seed: int, budget: float, C: float, hidden: int, max_iter: int) -> np.ndarray:
    """The track's classifier, label 1 where p(1|x) >= 0.5."""
    X, y, X_test = train_test(instance)
    fitted = fit_quietly(model(instance, seed=seed, C=C, hidden=hidden, max_iter=max_iter), X, y)
    return fitted.predict(X_test).astype(np.int64)


@method(
    name="class-weighted",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference=(
        "LogisticRegression(class_weight='balanced') (linear track) or MLPClassifier with balanced sample "
        "weights (mlp track), standardised, threshold 0.5"
    ),
    version="1",
    params=_PARAMS,
    deterministic=True,
)
def solve_weighted(instance, *, seed: int, budget: float, C: float, hidden: int, max_iter: int) -> np.ndarray:
    """The track's classifier with both classes weighing half, label 1 where p(1|x) >= 0.5."""
    X, y, X_test = train_test(instance)
    estimator = model(instance, seed=seed, C=C, hidden=hidden, max_iter=max_iter)
    last = estimator.steps[-1][0]
    fitted = fit_quietly(estimator, X, y, **{f"{last}__sample_weight": compute_sample_weight("balanced", y)})
    return fitted.predict(X_test).astype(np.int64)
