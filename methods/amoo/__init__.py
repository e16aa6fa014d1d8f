"""The paper's methods for ``aligned-multiobjective`` (see tasks/amoo/README.md); shared code in ``common/amoo/``."""
