"""The paper's methods for the ``sampling`` task, one module per method (see tasks/sampling/README.md).

Code that the methods and the baselines of this family share goes in
``common/sampling/``, never here: baselines must not import methods.
"""
