"""Baselines a researcher would compare against (``kind="baseline"``), one sub-package per family.

Modules here are imported only by worker processes, never by the runner.
"""
