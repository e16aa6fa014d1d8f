"""Baselines for the ``fisher-information`` task (see tasks/fisher/README.md).

- ``kde_plugin.py``: KDE plug-in, Silverman bandwidth (scipy) on top of the smoothing;
- ``clipped_plugin.py``: the smoothed plug-in with the density clipped below;
- ``dsm_fisher.py``: denoising score matching with an RBF-linear score model.
"""
