"""Methods for the ``active-learning`` task: DIRECT (:mod:`.direct`), ICML 2025.

:mod:`.driver` turns a strategy written as a round plan (a generator that
yields queries and receives their labels) into ``select(state)`` answers;
the baselines' GALAXY uses it too. See tasks/active_learning/README.md.
"""
