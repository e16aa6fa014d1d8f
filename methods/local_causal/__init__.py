"""The paper's method for the ``local-causal-relations`` task (see tasks/local_causal/README.md).

Shared code (the protocol bridge and the local learner) lives in ``common/local_causal/``:
baselines must not import methods.
"""
