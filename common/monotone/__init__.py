"""Code shared by the ``monotone-regression`` methods and baselines.

- :mod:`.nets`: the networks (the paper's sign-adaptive and constrained stacks, the
  classical non-negative + sigmoid stack, a free MLP) and the one training loop;
- :mod:`.protocol`: the two-round predictor class every method and baseline subclasses.
"""
