"""Baselines for the decentralized tasks, one module per method (see tasks/decentralized/README.md).

decentralized-optimization: ``dgd`` (:mod:`.dgd`), ``diging`` (:mod:`.diging`),
``extra`` (:mod:`.extra`), ``network-dane`` (:mod:`.network_dane`, exact local prox).
"""
