"""Baselines of the ``tensor-completion`` task: exact masked ALS, EM (impute-then-ALS), tensorly's masked parafac, Adam."""
