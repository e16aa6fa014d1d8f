"""The paper's method for the ``wasserstein-ball-center`` task (see tasks/wbc/README.md).

Code that the methods and the baselines of this family share lives in
``tasks/wbc`` (the LP and exact OT); baselines must not import methods.
"""
