"""Baselines of the ``influence-attribution`` task: the naive per-term influence function, TracIn-style
gradient similarity and random scores (see tasks/influence/README.md)."""

from common.influence.scores import warm_up

warm_up()  # torch.func's lazy set-up, once per zygote rather than inside every job's clock
