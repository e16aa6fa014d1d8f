"""Methods of ``dueling-optimization`` (see tasks/dueling/README.md).

``rgd.py``: the paper's Algorithms 1 and 2 (``rgd-dueling``, ``epoch-rgd-dueling``).
Our earlier sign-NGD reading of the abstract (``gp-ngd``) is a baseline now
(``baselines/dueling/gp_ngd.py``). Code shared with the baselines lives in ``common/dueling/``.
"""
