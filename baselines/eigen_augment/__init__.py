"""Baselines for the ``eigenvalue-augmentation`` task, one module per method (see tasks/eigen_augment/README.md).

Code that the methods and the baselines of this family share goes in
``common/eigen_augment/``, never here: baselines must not import methods.
"""
