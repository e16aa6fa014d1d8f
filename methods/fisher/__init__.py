"""The paper's method for the ``fisher-information`` task (see tasks/fisher/README.md).

``smoothed_plugin.py``: the plug-in with the exactly smoothed empirical measure.
Numerics shared with the baselines live in ``common/fisher/``.
"""
