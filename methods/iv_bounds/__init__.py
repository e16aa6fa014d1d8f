"""The paper's methods for the ``iv-bounds`` task, one module per method (see tasks/iv_bounds/README.md).

Code that the methods and the baselines of this family share goes in
``common/iv_bounds/``, never here: baselines must not import methods.
"""
