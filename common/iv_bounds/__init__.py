"""Code shared by the ``iv-bounds`` methods and baselines.

- :mod:`.nuisance`: the small torch networks (two-tower nuisances as in the
  official code), their one training loop with early stopping, the
  partition-level nuisances ``P(A = a | x, k)`` and ``E[Y 1{A = a} | x, k]`` of a
  fixed discretisation, and the closed-form bounds in torch.
"""
