"""Code shared by the privacy family's methods and baselines (never imported by the tasks)."""
