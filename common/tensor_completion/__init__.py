"""Code shared by the ``tensor-completion`` methods and baselines (CP kernels on observed entries)."""
