"""Baselines for the decentralized tasks, one module per method (see tasks/decentralized/README.md).

decentralized-optimization: ``dgd`` (:mod:`.dgd`), ``diging`` (:mod:`.diging`),
``extra`` (:mod:`.extra`), ``network-dane`` (:mod:`.network_dane`, exact local prox).

conformal-decentralized: ``cp-local`` (:mod:`.cp_local`), ``cp-gossip-quantile``
(:mod:`.cp_gossip_quantile`), ``cp-centralized`` (:mod:`.cp_centralized`, the oracle row,
paid for by flooding).

robust-gossip: ``rg-gossip`` (:mod:`.rg_gossip`), ``rg-clipped-gossip``
(:mod:`.rg_clipped_gossip`), ``rg-nna`` (:mod:`.rg_nna`), ``rg-trimmed-mean``
(:mod:`.rg_trimmed_mean`).
"""
