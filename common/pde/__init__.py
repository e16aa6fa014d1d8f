"""What the ``pde`` solvers share: the 1-D stationary kernels of SKS and DAKS (:mod:`.kernels`)."""
