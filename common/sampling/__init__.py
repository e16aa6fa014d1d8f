"""Code shared by the ``log-concave-sampling`` methods and baselines.

- :mod:`.driver`: the session-driven base class (a generator that yields oracle queries)
  and the schedule every method derives from the task's ``alpha``, ``beta``, ``eps`` and ``x0``;
- :mod:`.picard`: one Euler-Picard sweep over a window of Langevin sub-steps.
"""
