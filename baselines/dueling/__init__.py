"""Baselines of ``dueling-optimization`` (see tasks/dueling/README.md).

Code shared with the baselines lives in ``common/dueling/``.
"""
