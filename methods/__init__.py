"""The papers' methods (``kind="method"``), one sub-package per task family.

Modules here are imported only by worker processes, never by the runner.
"""
