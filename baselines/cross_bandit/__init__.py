"""Baselines for ``cross-learning-bandit``: EXP3 per context, EXP3 ignoring the context, Balseiro et al.
with ``nu`` known (the oracle row) and uniform play (:mod:`.exp3`, :mod:`.oracle`).

See tasks/cross_bandit/README.md.
"""
