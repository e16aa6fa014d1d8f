"""linear-svm-nonprivate: scikit-learn's linear SVM, the non-private reference row (declares epsilon = inf).

``sklearn.svm.LinearSVC`` (hinge loss, ``C = 1``, no intercept since the task's
classifiers are homogeneous, ``max_iter = 5000``). It is not private and says
so; on audit instances it is the audit's positive control (its canary weight
follows the canary's label).
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import LinearSVC

from bench import method
from common.privacy.learner import PrivateLearner

__all__ = ["LinearSVMReference"]


@method(
    name="linear-svm-nonprivate",
    kind="baseline",
    tasks=["private-classification"],
    reference="scikit-learn LinearSVC (liblinear), non-private reference",
    version="1",
    params={"mechanism": "none", "accountant": "none", "C": 1.0},
    deterministic=True,
    description="Non-private linear SVM (sklearn LinearSVC, hinge, C=1, no intercept): the reference row.",
)
class LinearSVMReference(PrivateLearner):
    """Not private: declares ``epsilon = inf``."""

    def __init__(
        self, instance, *, seed: int, budget: float, mechanism: str, accountant: str, C: float
    ) -> None:
        super().__init__(instance, seed=seed, budget=budget)
        self.C = float(C)

    def train(self, X, y, epsilon, delta, rng):
        clf = LinearSVC(C=self.C, fit_intercept=False, max_iter=5000, random_state=0)
        clf.fit(X, y)
        return clf.coef_.ravel().astype(np.float64), float("inf"), 0.0
