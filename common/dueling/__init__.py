"""Code shared by the methods and baselines of ``dueling-optimization``."""
