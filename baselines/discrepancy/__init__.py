"""Baselines for the ``discrepancy`` task, one module per method (see tasks/discrepancy/README.md).

Code that the method and the baselines of this family share goes in
``common/discrepancy/``, never here: baselines must not import methods.
"""
