"""The family's side of the two-round protocol: scale, train with the task's recipe, predict.

Every method and baseline subclasses :class:`FitPredict` and builds its network in
:meth:`FitPredict.build`; data scaling, the optimiser (Adam), the minibatches and the grid
updates of spline models are shared, so the models differ only in their architecture.

Scaling (equivariance-safe, as EMLP's ``stats``): each input segment (all scalars, all vectors,
all tensors) is divided by one root-mean-square over the training set; scalar outputs are
standardised (mean and standard deviation per output), vector and tensor outputs divided by one
root-mean-square. Predictions are mapped back before they are returned.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import torch

from bench import time_left, truncated
from common.equivariant.reps import Group, layout

__all__ = ["FitPredict", "GRID_UPDATES"]

#: With ``update_grid=True``, spline models refit their grids every 5 steps of the first 50
#: (official: grid_update_num 10, stop_grid_update_step 50). Off by default: with our batches
#: (the whole training set at n = 100) the least-squares refit of the official code interpolates
#: the batch and the test error blew up (o5, n = 100: EKAN rel_mse 1.34 with refits, 0.008
#: without, after 300 steps); the official scripts refit on three-body and top tagging only.
GRID_UPDATES = {"every": 5, "until": 50}
#: Seconds kept back from the job deadline for the prediction round.
PREDICT_RESERVE_S = 10.0


def _segment_scales(x: np.ndarray, rep: list[int], d: int) -> np.ndarray:
    """Per-entry divisor: one RMS per rank segment of ``rep``."""
    out, o = [], 0
    for r, m in layout(tuple(rep)):
        n = m * d**r
        rms = float(np.sqrt(np.mean(x[:, o : o + n] ** 2))) or 1.0
        out.append(np.full(n, rms))
        o += n
    return np.concatenate(out)


class FitPredict:
    """Base of every model of the family; subclasses implement :meth:`build` (and may set ``spline``).

    Parameters
    ----------
    instance
        The public instance (``instance.data`` as in ``tasks/equivariant``).
    seed, budget
        As the runner passes them; ``seed`` seeds the initialisation and the minibatches.
    params
        The registered parameters (widths and the like), read by :meth:`build`.
    """

    #: spline models (EKAN, KAN) refit their grids during the first steps
    spline: bool = False

    def __init__(self, instance: Any, *, seed: int, budget: float, **params: Any) -> None:
        torch.set_num_threads(1)
        self.data = instance.data
        self.params = params
        self.seed = int(seed)
        torch.manual_seed(self.seed)
        self.rng = np.random.default_rng(self.seed)
        d = int(self.data["d"])
        self.d = d
        self.group = Group(self.data["lie_algebra"], self.data["discrete_generators"])
        x, y = np.asarray(self.data["X_train"]), np.asarray(self.data["Y_train"])
        self.x_scale = _segment_scales(x, self.data["rep_in"], d)
        rep_out = list(self.data["rep_out"])
        if rep_out[1] == 0 and rep_out[2] == 0:
            self.y_mean, self.y_scale = y.mean(0), y.std(0) + 1e-12
        else:
            self.y_mean, self.y_scale = np.zeros(y.shape[1]), _segment_scales(y, rep_out, d)
        self.model = self.build(list(self.data["rep_in"]), rep_out, x.shape[1], y.shape[1])
        self.steps_done = 0

    # -- subclass hook ---------------------------------------------------------------
    def build(
        self, rep_in: list[int], rep_out: list[int], n_in: int, n_out: int
    ) -> torch.nn.Module:  # pragma: no cover
        raise NotImplementedError

    # -- protocol ----------------------------------------------------------------------
    def _xt(self, x: np.ndarray) -> torch.Tensor:
        return torch.tensor(np.asarray(x) / self.x_scale, dtype=torch.float32)

    def fit(self, steps: int, batch_size: int, lr: float, seconds: float) -> dict[str, np.ndarray]:
        """Adam for ``steps`` minibatch steps of MSE (official recipe, Adam in place of Adan)."""
        x = self._xt(self.data["X_train"])
        y = torch.tensor(
            (np.asarray(self.data["Y_train"]) - self.y_mean) / self.y_scale, dtype=torch.float32
        )
        n = x.shape[0]
        opt = torch.optim.Adam([p for p in self.model.parameters() if p.requires_grad], lr=lr)
        grid_on = self.spline and bool(self.params.get("update_grid", False))
        t0 = time.monotonic()
        stop = "steps"
        for step in range(int(steps)):
            if time.monotonic() - t0 >= seconds:
                stop = f"train_seconds={seconds:g}"
                break
            if time_left() < PREDICT_RESERVE_S:
                stop = "job deadline"
                truncated(
                    f"training stopped after {step} of {int(steps)} steps, near the job's deadline"
                )
                break
            idx = torch.from_numpy(self.rng.choice(n, size=min(batch_size, n), replace=False))
            if grid_on and step % GRID_UPDATES["every"] == 0 and step < GRID_UPDATES["until"]:
                self.model.update_grid(x[idx])
            loss = torch.mean((self.model(x[idx]) - y[idx]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            self.steps_done = step + 1
        print(
            f"trained {self.steps_done} steps in {time.monotonic() - t0:.2f} s (stopped by {stop})",
            file=sys.stderr,
        )
        return {
            name: p.detach().numpy().astype(np.float64)
            for name, p in self.model.named_parameters()
            if p.requires_grad
        }

    @torch.no_grad()
    def predict(self, x: np.ndarray) -> np.ndarray:
        xt = self._xt(x)
        out = torch.cat([self.model(xt[i : i + 1000]) for i in range(0, len(xt), 1000)])
        return out.numpy().astype(np.float64) * self.y_scale + self.y_mean

    def select(self, state: dict[str, Any]) -> Any:
        """Round 1 (``phase`` ``train``): train, return the trainable parameters. Round 2 (``predict``): predictions."""
        if state.get("phase") == "train":
            return self.fit(
                int(state["steps"]),
                int(state["batch_size"]),
                float(state["lr"]),
                float(state["train_seconds"]),
            )
        if state.get("phase") == "predict":
            return self.predict(state["X"])
        raise ValueError(f"unknown phase {state.get('phase')!r}")
