"""Baselines for the ``symmetric-games`` task, one module per method (see tasks/symmetric_games/README.md).

Code that the methods and the baselines of this family share goes in
``common/symmetric_games/``, never here: baselines must not import methods.
"""
