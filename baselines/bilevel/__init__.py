"""Baselines for bilevel-hypercleaning: ``v-pbgd``, ``bome``, ``aid-cg``, ``truncated-unroll`` and ``uniform-weights``."""
