"""Methods of ``dueling-optimization`` (see tasks/dueling/README.md).

``rgd.py``: the paper's Algorithms 1 and 2 (``rgd-dueling``, ``epoch-rgd-dueling``);
``gp_ngd.py``: our earlier sign-NGD reading of the abstract (``gp-ngd``), not the
paper's algorithm. Code shared with the baselines lives in ``common/dueling/``.
"""
