"""The objectives of the ``influence-attribution`` task in torch (float64), for autodiff-based methods.

Written from the task's definition (``tasks/influence/README.md``), independently
of the task's numpy code: the Cox partial likelihood (Breslow ties) with a
risk-set cumulative sum, and ListMLE with per-list reverse cumulative sums.
Every objective takes per-point weights ``w`` (1 = in the data, 0 =
removed), so ``L(theta; w)`` with ``w_i = 0`` is the objective without point
``i``: its own term gone and it removed from every risk set or list.

:class:`Problem` holds one instance's tensors; its methods are pure functions
of ``theta`` (and ``w``) for ``torch.func`` (``grad``, ``hessian``,
``jacrev``, ``vmap``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = ["Problem"]


def _padded_lists(
    groups: np.ndarray, order_key: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of ``groups`` laid out as a ``(lists, longest)`` grid sorted by ``order_key`` within each list.

    Returns ``(index, mask, n_lists)``: ``index[q, k]`` the row at place ``k`` of list ``q`` (0 where
    padded), ``mask`` 1 where a row sits.
    """
    labels, inv = np.unique(groups, return_inverse=True)
    order = np.lexsort((order_key, inv))
    counts = np.bincount(inv, minlength=len(labels))
    L = int(counts.max())
    index = np.zeros((len(labels), L), dtype=np.int64)
    mask = np.zeros((len(labels), L))
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    for q, (s, c) in enumerate(zip(starts, counts, strict=True)):
        index[q, :c] = order[s : s + c]
        mask[q, :c] = 1.0
    return index, mask, np.asarray(len(labels))


class Problem:
    """One instance's training objective and test quantities as torch functions.

    ``data`` is the task's public data: ``loss`` (``"cox"`` or ``"listmle"``),
    ``X``, ``theta`` (the trained model), ``ridge``, ``X_test``, and ``time``,
    ``event`` (cox) or ``query``, ``position``, ``query_test``, ``position_test`` (listmle).
    """

    def __init__(self, data: dict[str, Any]) -> None:
        f64 = torch.float64
        self.kind = str(data["loss"])
        self.X = torch.tensor(np.asarray(data["X"], dtype=float), dtype=f64)
        self.n, self.d = self.X.shape
        self.ridge = float(data["ridge"])
        self.theta = torch.tensor(np.asarray(data["theta"], dtype=float), dtype=f64)
        self.X_test = torch.tensor(np.asarray(data["X_test"], dtype=float), dtype=f64)
        if self.kind == "cox":
            t = np.asarray(data["time"], dtype=float)
            order = np.argsort(-t, kind="stable")  # time descending: the risk set of i is a prefix
            ts = t[order]
            # Breslow: the risk set of a point ends at the last point tied with it
            end = np.searchsorted(-ts, -ts, side="right") - 1
            self.order = torch.as_tensor(order)
            self.end = torch.as_tensor(end)
            self.event = torch.tensor(np.asarray(data["event"], dtype=float), dtype=f64)
        elif self.kind == "listmle":
            idx, mask, _ = _padded_lists(np.asarray(data["query"]), np.asarray(data["position"]))
            self.lists = torch.as_tensor(idx)
            self.mask = torch.as_tensor(mask, dtype=f64)
            tidx, tmask, _ = _padded_lists(
                np.asarray(data["query_test"]), np.asarray(data["position_test"])
            )
            self.test_lists = torch.as_tensor(tidx)
            self.test_mask = torch.as_tensor(tmask, dtype=f64)
        else:
            raise ValueError(f"unknown loss {self.kind!r}")

    # -- per-point terms -------------------------------------------------------------
    def _placed_terms(
        self, theta: torch.Tensor, w: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(terms, rows)``: the per-point terms of the unpenalised loss in an internal order, and their rows."""
        eta = self.X @ theta
        shift = eta.detach().max()
        r = w * torch.exp(eta - shift)
        if self.kind == "cox":
            o = self.order
            s0 = torch.cumsum(r[o], dim=0)[self.end]
            inside = (w * self.event)[o]
            safe = torch.where(inside > 0, s0, torch.ones_like(s0))
            return inside * (torch.log(safe) + shift - eta[o]), o
        # ListMLE: the term of the item at place k is log sum_{j >= k} w_j e^{s_j} - s_k
        R = r[self.lists] * self.mask
        suffix = torch.flip(torch.cumsum(torch.flip(R, [1]), 1), [1])
        inside = w[self.lists] * self.mask
        safe = torch.where(inside > 0, suffix, torch.ones_like(suffix))
        grid = inside * (torch.log(safe) + shift - eta[self.lists])
        return grid.reshape(-1), self.lists.reshape(-1)

    def terms(self, theta: torch.Tensor) -> torch.Tensor:
        """The ``n`` per-point terms of the unpenalised loss on the full data (``(n,)``, row order)."""
        placed, rows = self._placed_terms(theta, self.ones())
        keep = rows if self.kind == "cox" else rows[self.mask.reshape(-1) > 0]
        vals = placed if self.kind == "cox" else placed[self.mask.reshape(-1) > 0]
        return torch.zeros(self.n, dtype=theta.dtype).index_put((keep,), vals)

    # -- the objective and the test quantities ------------------------------------------
    def loss(self, theta: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """``L(theta; w)``: the weighted loss plus ``ridge / 2 |theta|^2`` (a scalar)."""
        return self._placed_terms(theta, w)[0].sum() + 0.5 * self.ridge * (theta @ theta)

    def full_loss(self, theta: torch.Tensor) -> torch.Tensor:
        """``L(theta; 1)``, the objective the model was trained on."""
        return self.loss(theta, torch.ones(self.n, dtype=theta.dtype))

    def test_quantities(self, theta: torch.Tensor) -> torch.Tensor:
        """``(n_test,)``: relative hazards ``exp(x_j . theta)`` (cox) or each test query's ListMLE loss."""
        if self.kind == "cox":
            return torch.exp(self.X_test @ theta)
        eta = self.X_test @ theta
        shift = eta.detach().max()
        w = torch.ones(len(eta), dtype=theta.dtype)
        r = torch.exp(eta - shift)
        R = r[self.test_lists] * self.test_mask
        suffix = torch.flip(torch.cumsum(torch.flip(R, [1]), 1), [1])
        safe = torch.where(self.test_mask > 0, suffix, torch.ones_like(suffix))
        grid = (
            w[self.test_lists] * self.test_mask * (torch.log(safe) + shift - eta[self.test_lists])
        )
        return grid.sum(dim=1)

    def ones(self) -> torch.Tensor:
        return torch.ones(self.n, dtype=torch.float64)
