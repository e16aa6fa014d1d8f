"""Methods for the ``active-learning`` task: DIRECT (:mod:`.direct`), ICML 2025.

``common/active_learning`` holds what DIRECT shares with the baselines:
the driver that turns a strategy written as a round plan (a generator that
yields queries and receives their labels) into ``select(state)`` answers,
and the margin scores GALAXY sorts by too. See tasks/active_learning/README.md.
"""
