"""Code shared by the ``nested-expectation`` method and baselines: kernel quadrature and the oracle driver."""
