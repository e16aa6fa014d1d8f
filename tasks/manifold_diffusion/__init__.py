"""Generative modelling on symmetric manifolds (Mangoubi, He and Vishnoi, ICML 2025).

A method gets training samples from a target distribution on a manifold (the torus
``T^d``, the sphere ``S^2``, ``SO(n)`` or ``U(n)``), trains within the instance's budget,
and returns ``N`` generated points in the ambient representation. The task keeps a
held-out sample and scores the generated one: C2ST accuracy with a classifier the task
owns (primary; 0.5 is perfect), an MMD with a kernel suited to the manifold, the held-out
NLL of a KDE fit to the samples (where d <= 10 and the kernel's normaliser is exact),
and mode coverage for mixtures. See ``tasks/manifold_diffusion/README.md``.

Protocol (two rounds, so the trusted side times training and sampling apart):

1. ``select({"phase": "train", "train_iters", "batch_size", "train_seconds"})``: train;
   return anything small (``None``). The runner's clock for this call is ``train_s``.
2. ``select({"phase": "sample", "n": N})``: return the ``N`` points (numpy). Its clock
   is ``sample_s``.

Instance ``data``: ``manifold`` (``torus``/``sphere``/``so``/``u``), ``n``, ``dim``,
``train`` (the training points), ``train_iters``, ``batch_size``, ``train_seconds``,
``sample_steps`` (a suggested number of sampler steps), ``n_samples``.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.registry import UnknownNameError, register_task, unknown_message
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Session,
    Task,
    TaskMeta,
)
from tasks.manifold_diffusion import metrics as M
from tasks.manifold_diffusion import targets as T
from tasks.manifold_diffusion.manifolds import check_points, features, intrinsic_dim

__all__ = ["ManifoldDiffusion", "INSTANCES", "TrainSampleSession", "spec"]

#: Seconds for sampling (and returning) on top of the training budget, per tier.
SAMPLE_ALLOWANCE = {"smoke": 20.0, "standard": 40.0, "full": 180.0}
#: A training round may overrun ``train_seconds`` by this fraction plus ``TRAIN_SLACK_S`` (one
#: iteration and the round trip; the published runs overran by at most 0.11 s); beyond that the
#: task rejects the solution, so no method trains into its sampling allowance.
TRAIN_SLACK_FRAC, TRAIN_SLACK_S = 0.05, 2.0


@dataclass(frozen=True)
class Spec:
    """One instance: target, sizes and the training budget (equal for every method)."""

    id: str
    tier: str
    manifold: str
    n: int
    target: str
    n_train: int
    n_samples: int
    train_iters: int
    batch_size: int
    train_seconds: float
    sample_steps: int = 100
    data_seed: int = 0

    @property
    def dim(self) -> int:
        return intrinsic_dim(self.manifold, self.n)

    def params(self) -> dict[str, Any]:
        return {
            "manifold": self.manifold, "n": self.n, "dim": self.dim, "target": self.target,
            "n_train": self.n_train, "n_samples": self.n_samples, "train_iters": self.train_iters,
            "batch_size": self.batch_size, "train_seconds": self.train_seconds, "tier": self.tier,
        }


def _specs() -> list[Spec]:
    sm = dict(tier="smoke", n_train=1000, n_samples=300, train_iters=150, batch_size=64, train_seconds=3.0, sample_steps=40)
    st = dict(tier="standard", n_train=10000, n_samples=2000, train_iters=5000, batch_size=256, train_seconds=60.0)
    fu = dict(tier="full", n_train=20000, n_samples=4000, train_iters=50000, batch_size=256, train_seconds=900.0)
    return [
        Spec("torus2-smoke", manifold="torus", n=2, target="wgm4", **sm),
        Spec("sphere2-smoke", manifold="sphere", n=2, target="vmf4", **sm),
        Spec("so3-smoke", manifold="so", n=3, target="so-mix2", **sm),
        Spec("u3-smoke", manifold="u", n=3, target="oscillator", **sm),
        Spec("torus2", manifold="torus", n=2, target="wgm4", **st),
        Spec("torus10", manifold="torus", n=10, target="wgm4", **st),
        Spec("sphere2", manifold="sphere", n=2, target="vmf4", **st),
        Spec("so3", manifold="so", n=3, target="so-mix2", **st),
        Spec("so6", manifold="so", n=6, target="so-mix2", **st),
        Spec("u4", manifold="u", n=4, target="oscillator", **st),
        Spec("u9", manifold="u", n=9, target="oscillator", **st),
        Spec("torus2-official", manifold="torus", n=2, target="wn0.2", **fu),
        Spec("torus50", manifold="torus", n=50, target="wgm4", **fu),
        Spec("so9", manifold="so", n=9, target="so-mix2", **fu),
        Spec("u15", manifold="u", n=15, target="oscillator", **fu),
    ]


INSTANCES: dict[str, Spec] = {s.id: s for s in _specs()}


def spec(instance_id: str) -> Spec:
    """The :class:`Spec` of a listed instance id, or :class:`UnknownNameError` naming close ids."""
    if instance_id not in INSTANCES:
        raise UnknownNameError(unknown_message("manifold-diffusion instance", instance_id, INSTANCES))
    return INSTANCES[instance_id]


def _mixture(s: Spec) -> T.Mixture | None:
    if s.target == "wgm4":
        return T.torus_mixture_spec(s.n, 4, 0.3, seed=1000 + s.n)
    if s.target == "wn0.2":
        return T.Mixture(np.zeros((1, s.n)), float(np.sqrt(0.2)))
    if s.target == "vmf4":
        return T.sphere_mixture_spec(4, 20.0)
    if s.target == "so-mix2":
        return T.so_mixture_spec(s.n, 2, 0.2, seed=2000 + s.n)
    return None


def _draw(s: Spec, mix: T.Mixture | None, count: int, rng: np.random.Generator) -> np.ndarray:
    if s.manifold == "torus":
        return T.sample_torus(mix, count, rng)[0]
    if s.manifold == "sphere":
        return T.sample_sphere(mix, count, rng)[0]
    if s.manifold == "so":
        return T.sample_so(mix, count, rng)[0]
    return T.sample_quantum_oscillator(s.n, count, rng)[0]


_TEMPLATE = '''\
"""{name}: a generative model on a manifold for the ``manifold-diffusion`` task.

Protocol (see tasks/manifold_diffusion/README.md): ``select`` is called twice. First with
``{{"phase": "train", "train_iters", "batch_size", "train_seconds"}}``: train on
``instance.data["train"]`` within ``train_seconds`` and return ``None``. Then with
``{{"phase": "sample", "n", "sample_steps"}}``: return ``n`` points in the same representation
as the training points (angles for the torus, unit vectors for S^2, matrices for SO(n), U(n)).

Deviations from the reference
-----------------------------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="{name}",
    kind="{kind}",
    tasks=["manifold-diffusion"],
    reference="",
    version="1",
    params={{}},
    deterministic=False,  # the samples may be; the session's solution also holds the task's clock
)
class Model:
    """A starting point that trains nothing and resamples the training points (a memoriser)."""

    def __init__(self, instance, *, seed: int, budget: float):
        self.train = np.asarray(instance.data["train"])
        self.rng = np.random.default_rng(seed)

    def select(self, state):
        if state["phase"] == "train":
            return None  # fit your model here, within state["train_seconds"]
        pick = self.rng.integers(0, len(self.train), size=int(state["n"]))
        return self.train[pick]
'''


@functools.lru_cache(maxsize=16)
def _load(instance_id: str) -> Instance:
    s = spec(instance_id)
    mix = _mixture(s)
    seed = int.from_bytes(hashlib.sha256(f"manifold-diffusion|{s.id}|{s.data_seed}".encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    train = _draw(s, mix, s.n_train, rng)
    held = _draw(s, mix, s.n_samples, rng)
    hf = features(s.manifold, held)
    private: dict[str, Any] = {"held_out": held, "bandwidth": M.median_bandwidth(hf)}
    if mix is not None and mix.k > 1:
        private["centres"] = mix.centres
        private["mode_radius"] = M.mode_radius(hf, features(s.manifold, mix.centres))
    for a in (train, held):
        a.setflags(write=False)
    data = {
        "manifold": s.manifold, "n": s.n, "dim": s.dim, "train": train,
        "train_iters": s.train_iters, "batch_size": s.batch_size, "train_seconds": s.train_seconds,
        "sample_steps": s.sample_steps, "n_samples": s.n_samples,
    }
    return Instance(id=s.id, params=s.params(), data=data, private=private, tags=(s.manifold, s.target, s.tier))


class TrainSampleSession(Session):
    """Two rounds, train then sample; the trusted side times each round itself."""

    def __init__(self, instance: Instance) -> None:
        self.inst = instance
        self.phase = 0
        self.t_sent = 0.0
        self.train_s = float("nan")
        self.sample_s = float("nan")
        self.samples: Any = None

    def state(self) -> dict[str, Any] | None:
        d = self.inst.data
        self.t_sent = time.monotonic()
        if self.phase == 0:
            return {"phase": "train", "train_iters": d["train_iters"], "batch_size": d["batch_size"], "train_seconds": d["train_seconds"]}
        if self.phase == 1:
            return {"phase": "sample", "n": d["n_samples"], "sample_steps": d["sample_steps"]}
        return None

    def apply(self, action: Any) -> None:
        dt = time.monotonic() - self.t_sent
        if self.phase == 0:
            self.train_s = dt
        else:
            self.sample_s = dt
            self.samples = action
        self.phase += 1

    def solution(self) -> dict[str, Any]:
        return {"samples": self.samples, "train_s": self.train_s, "sample_s": self.sample_s}


@register_task
class ManifoldDiffusion(Task):
    """Score generated points on a manifold against a held-out sample of the target."""

    meta = TaskMeta(
        name="manifold-diffusion",
        version="1",
        family="manifold_diffusion",
        area="generative models",
        paper=Paper(
            title="Efficient Diffusion Models for Symmetric Manifolds",
            authors=["Oren Mangoubi", "Neil He", "Nisheeth K. Vishnoi"],
            arxiv="2505.21640",
            venue="ICML 2025",
            code_url="https://github.com/784956494/Efficient-Symmetric-Diffusion",
        ),
        description=(
            "Learn a distribution on the torus, S^2, SO(n) or U(n) from samples within an equal "
            "training budget; the task scores N generated points against a held-out sample "
            "(C2ST with a fixed classifier, MMD, KDE held-out NLL for d <= 10, mode coverage)."
        ),
        metrics=[
            Metric(name="c2st", direction="min", description="classifier two-sample test accuracy, 0.5 = indistinguishable from held-out data"),
            Metric(name="mmd2", direction="min", description="unbiased squared MMD, Gaussian kernel on the extrinsic embedding, median-heuristic bandwidth of the held-out sample"),
            Metric(name="nll", direction="min", unit="nats", description="held-out NLL of a KDE fit to the samples (torus d<=10, S^2, SO(3) only)"),
            Metric(name="mode_coverage", direction="max", description="fraction of mixture modes holding at least half their share of samples within the 95% held-out radius of the centre"),
            Metric(name="max_violation", direction="min", description="largest manifold-constraint violation among the samples (accepted ones)"),
            Metric(name="train_s", direction="min", unit="s", description="runner-side wall time of the training round"),
            Metric(name="sample_s", direction="min", unit="s", description="runner-side wall time of the sampling round"),
        ],
        primary="c2st",
        normalization=Normalization(kind="linear", zero=1.0, one=0.5, description="1 for a perfectly separable sample, 0.5 when indistinguishable"),
        interactive=True,
        # train_seconds + SAMPLE_ALLOWANCE of each tier, as budget() computes them
        budgets={"smoke": 23.0, "standard": 100.0, "full": 1080.0},
    )
    template = _TEMPLATE

    def instances(self, tier: str) -> list[InstanceSpec]:
        """Instances of ``tier`` (``smoke``, ``standard``, ``full``) in a stable order."""
        if tier not in SAMPLE_ALLOWANCE:
            raise ValueError(f"unknown tier {tier!r}; tiers are smoke, standard, full")
        return [InstanceSpec(id=s.id, params=s.params(), tags=(s.manifold, s.target, s.tier)) for s in INSTANCES.values() if s.tier == tier]

    def all_instances(self) -> dict[str, InstanceSpec]:
        return {s.id: InstanceSpec(id=s.id, params=s.params(), tags=(s.manifold, s.target, s.tier)) for s in INSTANCES.values()}

    def budget(self, tier: str, spec_: InstanceSpec) -> float:
        """Job seconds: the instance's training seconds plus the tier's sampling allowance."""
        s = spec(spec_.id)
        return float(s.train_seconds + SAMPLE_ALLOWANCE[s.tier])

    def load(self, instance_id: str) -> Instance:
        """Generate (deterministically, cached) the training and held-out samples of an instance."""
        return _load(instance_id)

    def instance_digest(self, instance_id: str) -> str:
        return _load(instance_id).digest

    def session(self, instance: Instance, seed: int) -> Session:
        return TrainSampleSession(instance)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Check every point lies on the manifold, then compute the metrics from the points alone.

        Raises
        ------
        InvalidSolution
            If the solution is not ``{"samples": array, ...}`` of ``N`` points of the right
            shape and dtype, if any point is off the manifold (the message quotes the worst),
            or if the training round overran the instance's ``train_seconds`` (the equal
            budget; slack ``TRAIN_SLACK_FRAC`` and ``TRAIN_SLACK_S``).
        """
        if not isinstance(solution, dict) or "samples" not in solution:
            raise InvalidSolution("the solution must come from the two-round protocol: {'samples': array, ...}")
        d = instance.data
        train_s, limit = solution.get("train_s"), float(d["train_seconds"])
        if isinstance(train_s, (int, float)) and train_s > limit * (1 + TRAIN_SLACK_FRAC) + TRAIN_SLACK_S:
            raise InvalidSolution(
                f"train_s: the training round took {train_s:.1f} s, over the instance's equal training budget "
                f"of {limit:g} s (+{TRAIN_SLACK_FRAC:.0%} + {TRAIN_SLACK_S:g} s of slack)"
            )
        man, n, N = d["manifold"], int(d["n"]), int(d["n_samples"])
        x, viol = check_points(man, n, N, solution["samples"])
        held = instance.private["held_out"]
        fx, fh = features(man, x), features(man, held)
        out = {
            "c2st": M.c2st(fh, fx, seed=0),
            "mmd2": M.mmd2(fh, fx, float(instance.private["bandwidth"])),
            "max_violation": float(viol),
        }
        if (man == "torus" and n <= 10) or man == "sphere" or (man == "so" and n == 3):
            out["nll"] = M.kde_nll(man, x.reshape(N, -1), held.reshape(len(held), -1))
        if "centres" in instance.private:
            cf = features(man, np.asarray(instance.private["centres"]))
            out["mode_coverage"] = M.mode_coverage(fx, cf, float(instance.private["mode_radius"]))
        for k in ("train_s", "sample_s"):
            v = solution.get(k)
            if isinstance(v, (int, float)) and np.isfinite(v):
                out[k] = float(v)
        return out

