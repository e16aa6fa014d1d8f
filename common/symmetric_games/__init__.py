"""Code shared by the ``symmetric-games`` methods and baselines: online learners and self-play solvers."""
