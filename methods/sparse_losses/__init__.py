"""The paper's methods for the ``sparse-probability-losses`` task (see tasks/sparse_losses/README.md).

``fdiv.py`` holds the f-divergences, the bisection f-softargmax and the
Fenchel–Young loss; ``fsoftargmax.py`` registers one method per divergence.
Baselines never import these (they use the ``entmax`` package and torch).
"""

from tasks.sparse_losses.training import warm_up

warm_up()  # the optimiser's lazy imports, once per zygote rather than once per job
