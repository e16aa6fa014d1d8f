"""scikit-learn baselines of ``monotone-regression``: gradient boosting with monotone constraints, isotonic regression.

- ``hgb-monotone``: ``HistGradientBoostingRegressor`` / ``Classifier`` with
  ``monotonic_cst`` set to each monotone column's direction (0 elsewhere); monotone by
  construction. Tuned lightly: ``learning_rate`` in {0.05, 0.1} x ``max_leaf_nodes`` in
  {7, 15, 31} (``max_iter`` 200, no early stopping), chosen by the validation MSE
  (log-loss for classification) on a 20% split carved from the training rows with the
  job's seed, then refitted on all training rows.
- ``isotonic``: ``IsotonicRegression(increasing=<direction>, out_of_bounds="clip")`` on the
  one-column instances (skipped elsewhere); monotone by construction and constant
  beyond the training range.
"""

from __future__ import annotations

import itertools

import numpy as np

from bench import method
from common.monotone.protocol import Predictor

GRID = {"learning_rate": (0.05, 0.1), "max_leaf_nodes": (7, 15, 31)}


@method(
    name="hgb-monotone",
    kind="baseline",
    tasks=["monotone-regression"],
    reference="scikit-learn HistGradientBoosting with monotonic_cst",
    version="1",
    params={"monotone": True, "val_fraction": 0.2, "max_iter": 200},
    deterministic=True,
)
class HGBMonotone(Predictor):
    """HistGradientBoosting with monotonic_cst, its learning rate and leaves chosen on a validation split of the training rows."""

    def fit(self):
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

        d = self.data
        X, y = np.asarray(d["X_train"]), np.asarray(d["y_train"])
        cst = np.zeros(X.shape[1], dtype=int)
        cst[list(d["mono"])] = list(d["direction"])
        clf = d["task_type"] == "classification"
        make = HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor
        rng = np.random.default_rng(self.seed)
        perm = rng.permutation(len(y))
        n_val = max(1, round(self.params["val_fraction"] * len(y)))
        va, tr = perm[:n_val], perm[n_val:]

        def model(lr: float, leaves: int):
            return make(
                learning_rate=lr,
                max_leaf_nodes=leaves,
                max_iter=int(self.params["max_iter"]),
                early_stopping=False,
                monotonic_cst=cst,
                random_state=self.seed,
            )

        def val_loss(m) -> float:
            if clf:
                p = np.clip(m.predict_proba(X[va])[:, 1], 1e-12, 1 - 1e-12)
                return float(-np.mean(y[va] * np.log(p) + (1 - y[va]) * np.log(1 - p)))
            return float(np.mean((m.predict(X[va]) - y[va]) ** 2))

        scores = {
            (lr, lv): val_loss(model(lr, lv).fit(X[tr], y[tr]))
            for lr, lv in itertools.product(*GRID.values())
        }
        best = min(scores, key=scores.get)
        m = model(*best).fit(X, y)
        if clf:
            return lambda Q: m.predict_proba(Q)[:, 1].astype(np.float64)
        return lambda Q: m.predict(Q).astype(np.float64)


def _one_column(instance) -> bool | str:
    d = np.asarray(instance.data["X_train"]).shape[1]
    return (
        True
        if d == 1
        else f"isotonic regression is for one-column instances; this one has {d} columns"
    )


@method(
    name="isotonic",
    kind="baseline",
    tasks=["monotone-regression"],
    reference="scikit-learn IsotonicRegression (pool adjacent violators)",
    version="1",
    params={"monotone": True},
    deterministic=True,
    supports=_one_column,
)
class Isotonic(Predictor):
    """Least-squares isotonic fit in the single column (clipped to the training range beyond it)."""

    def fit(self):
        from sklearn.isotonic import IsotonicRegression

        d = self.data
        ir = IsotonicRegression(increasing=bool(d["direction"][0] > 0), out_of_bounds="clip")
        if d["task_type"] == "classification":
            ir.set_params(y_min=0.0, y_max=1.0)
        ir.fit(np.asarray(d["X_train"])[:, 0], np.asarray(d["y_train"]))
        return lambda Q: ir.predict(Q[:, 0]).astype(np.float64)
