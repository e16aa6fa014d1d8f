"""Baselines for the ``nested-expectation`` task: nested MC, antithetic MLMC, MC outer with KQ inner.

Shared code (KQ weights, the oracle driver) is in ``common/nested/``.
"""
