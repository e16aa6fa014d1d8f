"""Code shared by the methods and baselines of ``aligned-multiobjective``."""
