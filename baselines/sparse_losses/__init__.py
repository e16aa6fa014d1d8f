"""Baselines of the ``sparse-probability-losses`` task: softmax cross-entropy, label-smoothed
cross-entropy, sparsemax and entmax-1.5 (the ``entmax`` package); see tasks/sparse_losses/README.md.
"""

from tasks.sparse_losses.training import warm_up

warm_up()  # the optimiser's lazy imports, once per zygote rather than once per job
