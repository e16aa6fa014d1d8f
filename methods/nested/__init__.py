"""The paper's method for the ``nested-expectation`` task: nested kernel quadrature (:mod:`.nkq`).

Shared code (KQ weights, the oracle driver) is in ``common/nested/``.
"""
