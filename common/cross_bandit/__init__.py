"""What the ``cross-learning-bandit`` learners share: :mod:`.streams`, the vectorised-replication driver.

See tasks/cross_bandit/README.md.
"""
