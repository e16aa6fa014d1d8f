"""Baselines for the ``active-learning`` task, one module per group.

- :mod:`.classic`: ``random-sampling``, ``confidence``, ``margin``, ``entropy``
  (uncertainty), ``coreset`` (k-center greedy), ``badge``;
- :mod:`.galaxy`: ``galaxy`` (graph-based bisection, LabelBench's code);
- :mod:`.cluster_margin`: ``cluster-margin`` (Citovsky et al. 2021).

All read only the state the task sends (features and probabilities of the
pool, labelled indices with the oracle's labels). See
tasks/active_learning/README.md.
"""
