"""Methods for ``cross-learning-bandit``: Schneider and Zimmert's algorithm (:mod:`.sz_cross_exp3`).

See tasks/cross_bandit/README.md.
"""
