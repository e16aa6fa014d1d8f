"""Methods of the ROS paper for the ``maxcut`` task (Max-k-Cut on weighted graphs).

- ``ros`` (:mod:`.ros`): pre-trained GNN, fine-tuned per instance, best of 100 samples.
- ``ros-vanilla`` (:mod:`.ros`): the same GNN trained from scratch per instance.
- ``md`` (:mod:`.md`): entropic mirror descent on the same relaxation, same sampling.

Shared pieces: :mod:`.relaxation` (objective, sampling, cuts), :mod:`.gnn`
(sparse GraphConv, GraphNorm), :mod:`.pretrain` (pre-training and its cache).
torch is imported here so a worker's zygote imports it once, before forking.
So is ``torch._dynamo``: ``torch.optim`` imports it lazily on the first
optimizer built in a process (about 2 s here), which every forked job would
otherwise pay again. See ``README.md`` for sources, deviations and measurements.
"""

from __future__ import annotations

import contextlib

import torch  # imported once by the zygote

with contextlib.suppress(ImportError):
    import torch._dynamo  # noqa: F401  (see the module docstring)

from methods.maxcut.md import solve_md
from methods.maxcut.pretrain import pretrained_weights
from methods.maxcut.ros import solve_ros, solve_ros_vanilla

__all__ = ["pretrained_weights", "solve_md", "solve_ros", "solve_ros_vanilla"]
