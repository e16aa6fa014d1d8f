"""Task families: one sub-package per family, each with a README.

A task owns its instances and its verifier (trusted code). See
``bench.task.Task`` for the interface and ``tasks/knapsack`` for a small,
complete example.
"""
