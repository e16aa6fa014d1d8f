"""The paper's methods for the ``unnormalized-estimation`` task, one module per method (see tasks/nce/README.md).

Code that the methods and the baselines of this family share goes in
``common/nce/``, never here: baselines must not import methods.
"""
