"""Baselines of ``aligned-multiobjective`` (see tasks/amoo/README.md); shared code in ``common/amoo/``."""
