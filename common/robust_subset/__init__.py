"""What robust-subset-selection's method and baselines share (registers nothing):
:mod:`.herding`, the greedy moment-matching step of ``gm-matching`` and ``herding-mean``.
See tasks/robust_subset/README.md.
"""
