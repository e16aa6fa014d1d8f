"""What the development scripts (``sign_classifier.py``, ``target_tails.py``) share: a job, in-process.

Not a script of its own. Its siblings import it as ``dev``: ``python scripts/manifold_diffusion/X.py``
puts this folder first on ``sys.path``, and ``scripts/`` is no package.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

__all__ = ["train_as_job"]


def train_as_job(instance: str, master_seed: int, rep: int, **params: Any) -> tuple[Any, Any, Any, int, float, np.ndarray]:
    """Train and sample ``projected-diffusion-tuned`` (plus ``params``) as the standard tier's job would.

    Same instance, job seed (``derive_seed(master_seed, task, instance, rep)``) and iteration
    budget as ``bench run --seed MASTER_SEED``; in-process, so the wall-clock cap is not enforced.

    Returns
    -------
    (task, inst, model, seed, train_s, samples)
        The task object, the loaded instance, the trained model, the job seed, the training
        seconds and the generated points.
    """
    import tasks.manifold_diffusion as md
    from bench.runner import derive_seed
    from methods.manifold_diffusion.projected import PARAMS, TUNED, ProjectedDiffusion

    task = md.ManifoldDiffusion()
    inst = task.load(instance)
    seed = derive_seed(master_seed, "manifold-diffusion", instance, rep)
    model = ProjectedDiffusion(inst, seed=seed, budget=1e9, **{**PARAMS, **TUNED, **params})
    sess = md.TrainSampleSession(inst)
    t0 = time.perf_counter()
    sess.apply(model.select(sess.state()))
    train_s = time.perf_counter() - t0
    with torch.no_grad():
        x = model.sample(int(inst.data["n_samples"]), int(inst.data["sample_steps"]))
    return task, inst, model, seed, train_s, x
