"""Code shared by the ``local-causal-relations`` methods and baselines: the protocol bridge and the LocICR / MMB-by-MMB learner."""
