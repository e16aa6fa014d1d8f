"""Code shared by the method and the baselines of ``influence-attribution``: the task's objectives in
torch (``autodiff``) and the influence scores built on them (``scores``)."""
