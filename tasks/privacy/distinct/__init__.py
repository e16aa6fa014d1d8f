"""private-distinct-count: continual release of the number of distinct elements of a turnstile stream under DP.

Cummings, Epasto, Mao, Mukherjee, Ou and Zhong (ICML 2025) give the first
sublinear-space DP algorithm for this problem; Jain, Kalemaj, Raskhodnikova,
Sivakumar and Smith (NeurIPS 2023) gave the linear-space one.

The stream (:func:`make_stream`): ``T`` updates ``(item, delta)`` with
``delta in {+1, -1, 0}`` (0: an empty step) over 62-bit item ids. Each item's
updates alternate insert, delete, insert, ... so its count is 0 or 1 and the
stream is a strict turnstile stream; no item appears more than ``W`` times (the
occurrency bound, public). Two populations: *light* items (inserted, deleted a
geometric time later: most of the items, so that the number of items ever seen
grows linearly in ``T``) and *heavy* items (``W`` updates each, a quarter of the
stream). ``D_t``, the number of items with a positive count after update ``t``,
is the answer key, kept by the task.

Protocol (rounds of :class:`DistinctSession`): the task sends the stream in
chunks, ``{"phase": "stream", "reset", "t0", "items": int64 (m,), "deltas": int8
(m,), "memory": <the state the method returned last round, or None>, "epsilon",
"delta", "W", "T", "round"}``; the method answers ``{"estimates": float64 (m,),
"state": {name: numpy array or number}, "epsilon", "delta"}``: one estimate per
update (continual release), and its whole memory between rounds. The task holds
that memory, sends it back next round, and counts its size in 64-bit words
(:func:`state_words`): a method's space is measured by the task from the state
it must carry, never from a number it reports. (The method process could keep
more in hidden variables; the protocol and the conformance tests make that
visible as a different answer when the state is replayed, see the README.)

``stream-*`` instances: one stream; metrics are the max and mean absolute
error of the estimates against ``D_t`` and the maximum state size over rounds.
``audit-*`` instances: ``reps`` short streams on item-level neighbours (a
canary item inserted and deleted, or absent), chosen by a secret bit per
round; the statistic is the mean estimate while the canary is present minus the
mean before; the Clopper-Pearson lower bound of :mod:`tasks.privacy.audit`.
See ``tasks/privacy/README.md``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.instances import Catalog, CatalogTask, Choice, Float, IdForm, Int, grid
from bench.registry import register_task
from bench.solutions import as_float_array
from bench.task import (
    Instance,
    InstanceSpec,
    InvalidSolution,
    Metric,
    Normalization,
    Paper,
    Reference,
    Session,
    TaskMeta,
)
from tasks.privacy.audit import (
    audit_evaluate,
    check_declaration,
    declared_privacy,
    privacy_metric_specs,
)

__all__ = [
    "CATALOG",
    "PrivateDistinctCount",
    "DistinctSession",
    "make_stream",
    "distinct_counts",
    "state_words",
    "CHUNK",
]

#: Updates per round.
CHUNK = 8192
#: delta of every instance: (epsilon, 1e-6)-DP, item-level.
DELTA = 1e-6
#: Mean lifetime (in updates) of a light item.
LIGHT_LIFETIME = 64
#: Audit streams: length and the canary's insertion / deletion steps.
AUDIT_T, AUDIT_IN, AUDIT_OUT = 256, 64, 192


def _check(f: dict[str, Any]) -> None:
    if f["kind"] == "stream" and f["reps"] != 1:
        raise ValueError(f"{f}: a stream instance has one pass (r1)")
    if f["kind"] == "audit" and (f["reps"] < 20 or f["T"] != AUDIT_T):
        raise ValueError(f"{f}: an audit has at least 20 rounds on streams of T = {AUDIT_T}")
    if f["W"] < 2:
        raise ValueError(f"{f}: the occurrency bound W must be at least 2")


def _ids(kind, T, W, eps, reps=(1,), seed=(0,)):
    return grid(kind=(kind,), T=T, W=W, eps=eps, reps=reps, seed=seed)


#: Ids ``<kind>-T<updates>-W<occurrency>-e<epsilon>-r<rounds>-s<seed>``; ``W = 0`` in an id is not allowed.
CATALOG = Catalog(
    IdForm(
        "private-distinct-count",
        "{kind}-T{T}-W{W}-e{eps}-r{reps}-s{seed}",
        example="stream-T16384-W16-e1-r1-s0",
        kind=Choice(("stream", "audit"), what="instance kind"),
        T=Int(label="updates", minimum=1),
        W=Int(label="occurrency bound", minimum=1),
        eps=Float(label="epsilon"),
        reps=Int(label="rounds", minimum=1),
        seed=Int(),
    ),
    {
        "smoke": _ids("stream", (4096,), (16,), (1.0,))
        + _ids("audit", (AUDIT_T,), (4,), (1.0,), reps=(40,)),
        # W fixed (the sqrt(W) regime) and W = T^(2/3) (the T^(1/3) regime of arbitrary streams), four sizes each
        "standard": _ids("stream", (4096, 16384, 65536, 262144), (16,), (1.0,))
        + [
            f
            for T in (4096, 16384, 65536, 262144)
            for f in _ids("stream", (T,), (round(T ** (2 / 3)),), (1.0,))
        ]
        + _ids("audit", (AUDIT_T,), (4,), (1.0,), reps=(400,)),
        "full": [
            f
            for T in (2**10, 2**12, 2**14, 2**16, 2**18, 2**20)
            for f in _ids(
                "stream", (T,), (16, round(T ** (2 / 3))), (0.5, 1.0, 4.0), seed=(0, 1, 2)
            )
        ]
        + _ids("audit", (AUDIT_T,), (4,), (0.5, 1.0, 4.0), reps=(2000,)),
    },
    validate=_check,
)


def make_stream(T: int, W: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(items int64 (T,), deltas int8 (T,))``: a strict turnstile stream with occurrency at most ``W``.

    A quarter of the updates go to heavy items (``W`` updates each, at uniform
    random steps); the rest to light items, each inserted at a random step and
    deleted ``1 + Geometric(1/64)`` steps later when that step is free (else it
    stays). Steps left over are empty (``delta = 0``, item 0). Stream:
    ``numpy.random.default_rng([seed, T, W])``.
    """
    rng = np.random.default_rng([seed, T, W])
    items = np.zeros(T, dtype=np.int64)
    deltas = np.zeros(T, dtype=np.int8)
    free = np.ones(T, dtype=bool)
    n_heavy = max(1, (T // 4) // W)
    ids = rng.integers(1, 2**62, size=n_heavy + T, dtype=np.int64)
    next_id = 0
    # heavy items: W steps each, alternating +1 / -1 in time order
    perm = rng.permutation(T)
    pos = 0
    for _ in range(n_heavy):
        steps = np.sort(perm[pos : pos + W])
        pos += W
        steps = steps[free[steps]]
        items[steps] = ids[next_id]
        deltas[steps] = np.where(np.arange(len(steps)) % 2 == 0, 1, -1)
        free[steps] = False
        next_id += 1
    # light items: insert at a free step, delete 1 + Geometric later if that step is free
    starts = np.flatnonzero(free)
    rng.shuffle(starts)
    for s in starts:
        if not free[s]:
            continue
        item = ids[next_id]
        next_id += 1
        items[s], deltas[s], free[s] = item, 1, False
        e = s + int(rng.geometric(1.0 / LIGHT_LIFETIME))
        if e < T and free[e]:
            items[e], deltas[e], free[e] = item, -1, False
    return items, deltas


def distinct_counts(items: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """``D_t`` after every update (int64 ``(T,)``): the number of items with a positive count."""
    counts: dict[int, int] = {}
    out = np.empty(len(items), dtype=np.int64)
    d = 0
    for t, (x, dl) in enumerate(zip(items.tolist(), deltas.tolist(), strict=False)):
        if dl:
            old = counts.get(x, 0)
            new = old + dl
            if new < 0:
                raise ValueError(f"step {t}: item {x} deleted below zero")
            counts[x] = new
            d += (new > 0) - (old > 0)
        out[t] = d
    return out


def occurrency(items: np.ndarray, deltas: np.ndarray) -> int:
    """The largest number of updates of one item."""
    x = items[deltas != 0]
    return int(np.unique(x, return_counts=True)[1].max()) if x.size else 0


def state_words(state: Any, what: str = "state") -> int:
    """Size of a method's state in 64-bit words: ``ceil(nbytes / 8)`` per array, 1 per number.

    The state must be a dict of names to numpy arrays (numeric) or Python/numpy
    numbers; anything else is refused, so that nothing escapes the count.
    """
    if not isinstance(state, dict):
        raise InvalidSolution(
            f"{what} must be a dict of numpy arrays and numbers, got {type(state).__name__}"
        )
    words = 0
    for k, v in state.items():
        if not isinstance(k, str):
            raise InvalidSolution(f"{what}: keys must be strings, got {k!r}")
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in "biuf":
                raise InvalidSolution(
                    f"{what}[{k!r}] has dtype {v.dtype}; only numeric arrays are counted"
                )
            words += math.ceil(v.nbytes / 8)
        elif isinstance(v, (bool, int, float, np.integer, np.floating)):
            words += 1
        else:
            raise InvalidSolution(
                f"{what}[{k!r}] is a {type(v).__name__}; the state holds numpy arrays and numbers only"
            )
    return words


class DistinctSession(Session):
    """Stream the updates in chunks (``stream``), or ``reps`` short neighbouring streams (``audit``)."""

    def __init__(self, instance: Instance, seed: int) -> None:
        self.inst, self.seed = instance, int(seed)
        p = instance.params
        self.audit = p["kind"] == "audit"
        self.eps, self.T, self.W = float(p["eps"]), int(p["T"]), int(p["W"])
        self.memory: Any = None
        self.round = 0
        self.estimates: list[np.ndarray] = []
        self.words: list[int] = []
        self.answers: list[dict[str, Any]] = []
        if self.audit:
            self.reps = int(p["reps"])
            rng = np.random.default_rng([self.seed, 4321, int(instance.digest[:12], 16)])
            self.bits = rng.integers(0, 2, size=self.reps)
        else:
            self.reps = math.ceil(self.T / CHUNK)

    def stream(self, bit: int) -> tuple[np.ndarray, np.ndarray]:
        """The audit's neighbour: the base stream, with the canary inserted and deleted (bit 1) or not."""
        items = np.array(self.inst.data["items"])
        deltas = np.array(self.inst.data["deltas"])
        if bit:
            c = self.inst.private["canary"]
            items[[AUDIT_IN, AUDIT_OUT]] = c
            deltas[[AUDIT_IN, AUDIT_OUT]] = (1, -1)
        return items, deltas

    def state(self) -> dict[str, Any] | None:
        if self.round >= self.reps:
            return None
        st: dict[str, Any] = {
            "phase": "stream",
            "epsilon": self.eps,
            "delta": DELTA,
            "W": self.W,
            "T": self.T,
            "round": self.round,
        }
        if self.audit:
            items, deltas = self.stream(int(self.bits[self.round]))
            st.update(reset=True, t0=0, items=items, deltas=deltas, memory=None)
        else:
            a, b = self.round * CHUNK, min(self.T, (self.round + 1) * CHUNK)
            st.update(
                reset=self.round == 0,
                t0=a,
                items=np.asarray(self.inst.data["items"][a:b]),
                deltas=np.asarray(self.inst.data["deltas"][a:b]),
                memory=self.memory,
            )
        return st

    def apply(self, action: Any) -> None:
        decl = check_declaration(action, self.eps, DELTA)
        m = AUDIT_T if self.audit else min(self.T, (self.round + 1) * CHUNK) - self.round * CHUNK
        est = as_float_array(
            action.get("estimates"),
            (m,),
            what=f"round {self.round}: estimates, a finite float64 array of {m} values (one per update)",
        )
        mem = action.get("state")
        self.words.append(state_words(mem, f"round {self.round}: state"))
        self.memory = mem
        self.estimates.append(est)
        self.answers.append(decl)
        self.round += 1

    def solution(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "estimates": list(self.estimates),
            "state_words": list(self.words),
            "declared": list(self.answers),
        }
        if self.audit:
            out["bits"] = self.bits.copy()
        return out


_TEMPLATE = '''\
"""{name}: a counter for the ``private-distinct-count`` task (non-private exact counter as a start).

Deviations
----------
List every departure from the paper or its official code, and why.
"""

from __future__ import annotations

import numpy as np

from bench import method


@method(
    name="{name}",
    kind="{kind}",
    tasks=["private-distinct-count"],
    reference="",
    version="1",
    params={{"mechanism": "none", "accountant": "none"}},
    deterministic=True,
)
class Counter:
    """Exact counts of the live items, kept in the state the task carries between rounds."""

    def __init__(self, instance, *, seed: int, budget: float, mechanism: str, accountant: str):
        pass

    def select(self, state):
        mem = state["memory"] if not state["reset"] else None
        counts = {{}} if mem is None else dict(zip(mem["ids"].tolist(), mem["counts"].tolist()))
        est = np.empty(len(state["items"]))
        for t, (x, d) in enumerate(zip(state["items"].tolist(), state["deltas"].tolist())):
            if d:
                c = counts.get(x, 0) + d
                if c:
                    counts[x] = c
                else:
                    counts.pop(x, None)
            est[t] = len(counts)
        keys = np.array(list(counts), dtype=np.int64)
        vals = np.array([counts[k] for k in counts], dtype=np.int64)
        return {{"estimates": est, "state": {{"ids": keys, "counts": vals}}, "epsilon": float("inf"), "delta": 0.0}}
'''


@register_task
class PrivateDistinctCount(CatalogTask):
    """Continual DP distinct counting; a solution is the session's estimates, state sizes and declarations."""

    meta = TaskMeta(
        name="private-distinct-count",
        version="2",  # 2: audit_max_detectable from the audit's held-out counts (tasks/privacy/README.md, versions)
        family="privacy",
        area="privacy",
        paper=Paper(
            title="Differentially Private Space-Efficient Algorithms for Counting Distinct Elements in the Turnstile Model",
            authors=[
                "Rachel Cummings",
                "Alessandro Epasto",
                "Jieming Mao",
                "Tamalika Mukherjee",
                "Tingting Ou",
                "Peilin Zhong",
            ],
            arxiv="2505.23682",
            venue="ICML 2025",
        ),
        description=(
            "Continual release of the number of distinct items of a strict turnstile stream (T updates, occurrency <= W), "
            "item-level (epsilon, 1e-6)-DP; the task keeps the exact count, computes the max and mean absolute error, and "
            "measures the method's state (which it carries between rounds) in 64-bit words; audit instances give a "
            "Clopper-Pearson lower bound on epsilon from item-level neighbouring streams."
        ),
        metrics=[
            Metric(
                name="max_abs_error",
                direction="min",
                description="max over t of |estimate_t - D_t|",
            ),
            Metric(
                name="mean_abs_error",
                direction="min",
                description="mean over t of |estimate_t - D_t|",
            ),
            Metric(
                name="max_rel_error",
                direction="min",
                description="max over t of |estimate_t - D_t| / max(D_t, 1)",
            ),
            Metric(
                name="space_words",
                direction="min",
                unit="words",
                description="largest state the method carried between rounds, in 64-bit words (counted by the task)",
            ),
            Metric(
                name="items_seen",
                direction="min",
                description="distinct items in the whole stream (for the space comparison)",
            ),
            Metric(name="max_distinct", direction="min", description="max over t of D_t"),
        ]
        + privacy_metric_specs("item-level canary"),
        primary="max_abs_error",
        normalization=Normalization(
            kind="log",
            zero="max_distinct",
            one=1.0,
            description="0 at an error as large as the largest count, 1 at an error of one item",
        ),
        interactive=True,
        budgets={"smoke": 30.0, "standard": 300.0, "full": 3600.0},
    )
    template = _TEMPLATE
    catalog = CATALOG

    def scaffold(self, name: str, kind: str) -> str:
        """A counter class with ``select`` (``bench new-method``)."""
        from bench.scaffold import NAME_RE

        if not NAME_RE.match(name):
            raise ValueError(f"method name {name!r} must be lower case letters, digits, '-' or '_'")
        if kind not in ("method", "baseline"):
            raise ValueError(f"--kind must be 'method' or 'baseline', got {kind!r}")
        return _TEMPLATE.format(name=name, kind=kind)

    def spec(self, fields: dict[str, Any]) -> InstanceSpec:
        return InstanceSpec(
            id=CATALOG.form.format(**fields),
            params={**fields, "delta": DELTA},
            tags=(fields["kind"], "generated"),
        )

    def generate(self, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Public: the stream (methods see it only through the rounds), ``W``, ``T``, budget. Private: ``D_t``, canary."""
        f = fields
        if f["kind"] == "audit":
            # a short base stream of light items; the canary is a fresh id
            items, deltas = make_stream(AUDIT_T, f["W"], f["seed"])
            items[[AUDIT_IN, AUDIT_OUT]] = 0
            deltas[[AUDIT_IN, AUDIT_OUT]] = 0
            # empty any deletion whose insertion was at the canary's steps (keep the stream a turnstile stream)
            items, deltas = _repair(items, deltas)
            private = {"canary": np.int64(2**62 + 12345)}
        else:
            items, deltas = make_stream(f["T"], f["W"], f["seed"])
            private = {"D": distinct_counts(items, deltas)}
        data = {
            "items": items,
            "deltas": deltas,
            "W": int(f["W"]),
            "T": int(f["T"]),
            "epsilon": float(f["eps"]),
            "delta": DELTA,
        }
        return data, private

    def reference(
        self, fields: dict[str, Any], data: dict[str, Any], private: dict[str, Any]
    ) -> dict[str, Reference]:
        if "D" not in private:
            return {}
        return {
            "max_distinct": Reference(
                value=float(max(1, private["D"].max())), source="max_t D_t (exact)"
            ),
        }

    def session(self, instance: Instance, seed: int) -> Session:
        return DistinctSession(instance, seed)

    def evaluate(self, instance: Instance, solution: Any) -> dict[str, float]:
        """Errors against ``D_t`` (stream) or the audit's bound (audit), from the session's record of the rounds.

        Raises
        ------
        InvalidSolution
            For missing rounds, estimates of the wrong length or not finite, a state
            that is not numpy arrays and numbers, or a declaration above the budget.
        """
        p = instance.params
        if not isinstance(solution, dict) or not isinstance(solution.get("estimates"), list):
            raise InvalidSolution(
                "the solution must come from the session: {'estimates': [...], ...}"
            )
        ests, decl = solution["estimates"], solution["declared"]
        rounds = int(p["reps"]) if p["kind"] == "audit" else math.ceil(int(p["T"]) / CHUNK)
        if len(ests) != rounds or len(decl) != rounds:
            raise InvalidSolution(f"expected {rounds} rounds, got {len(ests)}")
        declared = declared_privacy(decl)
        if p["kind"] == "audit":
            stats = np.array([float(np.mean(e[AUDIT_IN:AUDIT_OUT]) - np.mean(e[:AUDIT_IN])) for e in ests])
            return {**declared, **audit_evaluate(stats, solution.get("bits"), rounds, DELTA, declared["declared_epsilon"])}
        est = np.concatenate([as_float_array(e, (len(e),)) for e in ests])
        D = instance.private["D"]
        if est.shape != D.shape:
            raise InvalidSolution(f"expected {len(D)} estimates (one per update), got {len(est)}")
        err = np.abs(est - D)
        items, deltas = instance.data["items"], instance.data["deltas"]
        return {
            "max_abs_error": float(err.max()),
            "mean_abs_error": float(err.mean()),
            "max_rel_error": float(np.max(err / np.maximum(D, 1))),
            "space_words": float(max(solution["state_words"])),
            "items_seen": float(np.unique(items[deltas != 0]).size),
            "max_distinct": float(D.max()),
            **declared,
        }


def _repair(items: np.ndarray, deltas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empty every update that would delete an absent item (after steps were emptied)."""
    counts: dict[int, int] = {}
    items, deltas = items.copy(), deltas.copy()
    for t, (x, d) in enumerate(zip(items.tolist(), deltas.tolist(), strict=False)):
        if not d:
            continue
        c = counts.get(x, 0) + d
        if c < 0:
            items[t], deltas[t] = 0, 0
            continue
        counts[x] = c
    return items, deltas
