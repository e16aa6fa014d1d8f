"""Baselines for the ``robust-subset-selection`` task, one module per method.

- ``uniform`` (:mod:`.uniform`): k rows uniformly at random.
- ``herding-mean`` (:mod:`.herding_mean`): herding toward the empirical mean.
- ``k-center`` (:mod:`.kcenter`): Gonzalez's farthest-first traversal.
- ``kmeans-medoids`` (:mod:`.kmeans_medoids`): nearest point to each k-means centre.
"""
