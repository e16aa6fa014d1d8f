"""Private learning and private streams: declared privacy, audited on the trusted side (issue 34).

Two tasks, one sub-package each, sharing the audit of :mod:`.audit`:

- ``private-classification`` (:mod:`.classification`): DP-ERM for linear
  classification on data with a large-margin separable subset and outliers
  (Wang, Zhu and Wang, ICML 2025);
- ``private-distinct-count`` (:mod:`.distinct`): continual release of the number
  of distinct elements of an insert/delete stream, with the method's state
  measured by the task (Cummings, Epasto, Mao, Mukherjee, Ou and Zhong, ICML 2025).

No run proves a privacy guarantee. Every method therefore *declares* its
(epsilon, delta) in its answers (and its mechanism and accountant as registered
parameters, which the records keep); the task checks the declaration against the
instance's budget, and on ``audit-*`` instances runs the method many times on
neighbouring inputs chosen by a secret bit, and reports a Clopper-Pearson lower
bound on epsilon and whether it exceeds the declared one. See
``tasks/privacy/README.md``.
"""
