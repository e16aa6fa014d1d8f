"""Baselines of the privacy family (see tasks/privacy/README.md)."""
