"""What the ``manifold-diffusion`` models share (:mod:`.models`).

:mod:`.models` holds the two-round protocol and its budgets (:class:`~.models.TrainThenSample`),
the networks and noise schedules, and the row gauges of SO(n)/U(n) samples. The paper's method
(``methods/manifold_diffusion``) and the baselines (``baselines/manifold_diffusion``) build on it.
"""
