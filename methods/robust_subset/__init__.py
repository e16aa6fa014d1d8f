"""The paper's method for the ``robust-subset-selection`` task: ``gm-matching`` (:mod:`.gm_matching`).

See tasks/robust_subset/README.md.
"""
