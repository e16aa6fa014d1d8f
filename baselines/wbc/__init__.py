"""Baselines for the ``wasserstein-ball-center`` task, one module per method (see tasks/wbc/README.md).

Baselines must not import methods; the LP and exact OT they share live in ``tasks/wbc``.
"""
