"""Baselines of the ``sparse-probability-losses`` task: softmax cross-entropy, label-smoothed
cross-entropy, sparsemax and entmax-1.5 (the ``entmax`` package); see tasks/sparse_losses/README.md.
"""
