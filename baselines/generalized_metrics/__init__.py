"""Baselines for the ``generalized-metrics`` task, one module per method (see tasks/generalized_metrics/README.md).

Code that the methods and the baselines of this family share goes in
``common/generalized_metrics/``, never here: baselines must not import methods.
"""
