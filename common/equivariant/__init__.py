"""Code shared by the ``equivariant-regression`` method and baselines: the equivariant-basis solve
(:mod:`.reps`), B-splines and layers (:mod:`.layers`), and the two-round protocol (:mod:`.protocol`)."""
