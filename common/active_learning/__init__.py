"""What the ``active-learning`` strategies share.

:mod:`.driver` turns a strategy written as a round plan (a generator that yields queries and
receives their labels) into ``select(state)`` answers; :mod:`.margins` holds the one-vs-rest
margin scores of DIRECT, which GALAXY uses too. See tasks/active_learning/README.md.
"""
