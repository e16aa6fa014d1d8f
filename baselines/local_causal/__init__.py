"""Baselines of the ``local-causal-relations`` task: causal-learn's FCI with the relations read off, MMB-by-MMB with a local read-off, and all-possible."""
