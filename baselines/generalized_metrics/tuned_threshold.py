"""tuned-threshold: the track's plug-in classifier with its threshold tuned for the target metric.

Reference: scikit-learn's ``TunedThresholdClassifierCV`` (``sklearn.model_selection``),
used as its documentation recommends: ``scoring`` is ``make_scorer`` of the
target metric, the threshold is chosen by 5-fold stratified cross-validation
and the classifier is refitted on the whole training set. The classifier is
the track's (logistic regression, or a one-hidden-layer ``MLPClassifier``).
This is the two-stage plug-in approach the paper compares against.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold, TunedThresholdClassifierCV

from baselines.generalized_metrics._models import fit_quietly, model, scorer, train_test
from bench import method


@method(
    name="tuned-threshold",
    kind="baseline",
    tasks=["generalized-metrics"],
    reference=(
        "sklearn.model_selection.TunedThresholdClassifierCV (scoring = make_scorer of the target metric) over "
        "LogisticRegression (linear track) or MLPClassifier (mlp track), standardised features"
    ),
    version="1",
    params={"thresholds": 100, "C": 1.0, "hidden": 16, "max_iter": 150},
    deterministic=True,
)
def solve(instance, *, seed: int, budget: float, thresholds: int, C: float, hidden: int, max_iter: int) -> np.ndarray:
    """The track's classifier with its threshold tuned for the target metric by 5-fold CV."""
    X, y, X_test = train_test(instance)
    estimator = model(instance, seed=seed, C=C, hidden=hidden, max_iter=max_iter)
    tuned = TunedThresholdClassifierCV(
        estimator, scoring=scorer(instance.data["metric"]), thresholds=thresholds,
        cv=StratifiedKFold(5, shuffle=True, random_state=seed), random_state=seed,
    )
    return fit_quietly(tuned, X, y).predict(X_test).astype(np.int64)
