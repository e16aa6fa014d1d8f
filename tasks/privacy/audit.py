"""Declared and audited privacy, shared by the privacy tasks: a lower bound on epsilon.

Every round of a private method declares its ``(epsilon, delta)``
(:func:`check_declaration` refuses one above the instance's budget;
:func:`declared_privacy` summarises a run's), and the tasks record the same
metrics (:func:`privacy_metric_specs`), on audit instances those of
:func:`audit_evaluate`.

An audit runs a method ``trials`` times. Before each run the task draws a secret
bit ``b`` and gives the method one of two neighbouring inputs, ``D_0`` or ``D_1``;
it reduces the method's output to one number ``s`` (a distinguishing statistic
chosen by the task, e.g. the trained weight along a canary point). A mechanism
that is ``(epsilon, delta)``-DP bounds every test's error rates:
``TPR <= e^epsilon FPR + delta`` and ``TNR <= e^epsilon FNR + delta``
(Kairouz, Oh and Viswanath 2015; the auditing recipe of Jagielski, Ullman and
Oprea 2020 and Nasr et al. 2021).

The first half of the trials chooses the test (a threshold on ``s`` and its
direction); the second half, untouched by that choice, gives the counts whose
one-sided Clopper-Pearson bounds (each at ``1 - alpha/2``) turn into a lower bound
on epsilon that holds with probability at least ``1 - alpha`` over the trials
(:func:`epsilon_lower_bound`).

What it can and cannot show: a lower bound above the declared epsilon proves
(at 95% confidence) that the method is *not* as private as it declares; a low
bound proves nothing: the neighbours and the statistic may be weak, and with
``m`` test trials no bound can exceed about ``log(m / 2) - 1`` (perfect
separation; :func:`max_detectable` gives the exact ceiling of the held-out
split's counts), so large declared epsilons are out of reach.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta

from bench.task import InvalidSolution, Metric

__all__ = [
    "AuditResult",
    "clopper_pearson",
    "epsilon_lower_bound",
    "audit_metrics",
    "audit_evaluate",
    "AUDIT_ALPHA",
    "max_detectable",
    "check_declaration",
    "declared_privacy",
    "privacy_metric_specs",
]

#: Confidence of the lower bound: it holds with probability at least ``1 - AUDIT_ALPHA``.
AUDIT_ALPHA = 0.05


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)`` of a binomial rate, each at level ``1 - alpha``."""
    if n <= 0:
        return 0.0, 1.0
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def _eps_from_counts(tp: int, n1: int, fp: int, n0: int, delta: float, alpha: float) -> float:
    """Lower bound on epsilon from a fixed test: ``tp`` of ``n1`` runs on ``D_1`` and ``fp`` of ``n0`` on ``D_0`` flagged."""
    # Two one-sided intervals at alpha/2 each, so that both hold together with probability >= 1 - alpha.
    tpr_lo, _ = clopper_pearson(tp, n1, alpha / 2)
    _, fpr_hi = clopper_pearson(fp, n0, alpha / 2)
    fnr_hi, tnr_lo = 1.0 - tpr_lo, 1.0 - fpr_hi
    best = 0.0
    if tpr_lo - delta > 0 and fpr_hi > 0:
        best = max(best, math.log((tpr_lo - delta) / fpr_hi))
    if tnr_lo - delta > 0 and fnr_hi > 0:
        best = max(best, math.log((tnr_lo - delta) / fnr_hi))
    return best


def max_detectable(test_pos: int, test_neg: int, delta: float = 0.0, alpha: float = AUDIT_ALPHA) -> float:
    """The largest bound :func:`epsilon_lower_bound` can give on these held-out counts.

    ``test_pos`` and ``test_neg`` are the held-out trials run on ``D_1`` and on
    ``D_0``. The bound of a fixed test grows with its true positives and falls
    with its false positives, so perfect separation (``tp = test_pos``,
    ``fp = 0``) gives the ceiling. It depends on the split, not only on its
    total: 26 against 24 reaches higher than 25 against 25, so the ceiling is
    computed from the audit's own counts (version 1 of the privacy tasks
    assumed a balanced split and could be exceeded, 1.97 against 1.84).
    """
    if test_pos < 0 or test_neg < 0:
        raise ValueError(f"held-out counts must be >= 0, got {test_pos} and {test_neg}")
    return _eps_from_counts(test_pos, test_pos, 0, test_neg, delta, alpha)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit: the bound and the test it came from (rates on the held-out half)."""

    eps_lb: float
    threshold: float
    direction: int
    tpr: float
    fpr: float
    test_trials: int
    #: held-out trials run on ``D_1`` and on ``D_0``, and the delta the bound used
    test_pos: int = 0
    test_neg: int = 0
    delta: float = 0.0

    @property
    def max_detectable(self) -> float:
        """The ceiling of this audit: the bound a perfect separation of its held-out trials would give."""
        return max_detectable(self.test_pos, self.test_neg, self.delta)


def _choose_test(s: np.ndarray, b: np.ndarray, delta: float) -> tuple[float, int]:
    """Threshold and direction (``+1``: flag ``s > t``) with the largest Clopper-Pearson bound on these trials."""
    best = (-math.inf, 0.0, 1)
    cands = np.unique(s)
    n1, n0 = int(b.sum()), int((1 - b).sum())
    if n1 == 0 or n0 == 0 or cands.size < 2:
        return (float(cands[0]) if cands.size else 0.0), 1
    mids = (cands[:-1] + cands[1:]) / 2
    for direction in (1, -1):
        for t in mids:
            flag = (s > t) if direction == 1 else (s < t)
            tp, fp = int(flag[b == 1].sum()), int(flag[b == 0].sum())
            # the conservative (Clopper-Pearson) bound on these trials: an extreme threshold flagging
            # few runs scores low, so the choice does not chase a lucky tail
            score = _eps_from_counts(tp, n1, fp, n0, delta, AUDIT_ALPHA)
            if score > best[0]:
                best = (score, float(t), direction)
    return best[1], best[2]


def epsilon_lower_bound(
    stats: np.ndarray, bits: np.ndarray, delta: float, alpha: float = AUDIT_ALPHA
) -> AuditResult:
    """Lower bound on epsilon from per-trial statistics ``stats`` (float, ``(m,)``) and secret bits ``bits`` (0/1).

    Trials ``[0, m // 2)`` choose the test, trials ``[m // 2, m)`` are counted.
    The bound holds with probability ``>= 1 - alpha`` if the method is
    ``(epsilon, delta)``-DP for neighbours ``D_0``, ``D_1``; it is 0 when no test
    separates the held-out outputs.
    """
    s = np.asarray(stats, dtype=np.float64)
    b = np.asarray(bits, dtype=np.int64)
    if s.shape != b.shape or s.ndim != 1:
        raise ValueError(f"stats {s.shape} and bits {b.shape} must be 1-d of one length")
    half = len(s) // 2
    t, direction = _choose_test(s[:half], b[:half], delta)
    s2, b2 = s[half:], b[half:]
    flag = (s2 > t) if direction == 1 else (s2 < t)
    n1, n0 = int(b2.sum()), int((1 - b2).sum())
    tp, fp = int(flag[b2 == 1].sum()), int(flag[b2 == 0].sum())
    eps = _eps_from_counts(tp, n1, fp, n0, delta, alpha)
    return AuditResult(
        eps_lb=eps,
        threshold=t,
        direction=direction,
        tpr=tp / n1 if n1 else math.nan,
        fpr=fp / n0 if n0 else math.nan,
        test_trials=len(s2),
        test_pos=n1,
        test_neg=n0,
        delta=float(delta),
    )


def audit_metrics(result: AuditResult, declared_epsilon: float) -> dict[str, float]:
    """The audit's record metrics: ``eps_lb``, ``privacy_violation`` (1 if ``eps_lb`` > declared), rates, trials."""
    return {
        "eps_lb": float(result.eps_lb),
        "privacy_violation": float(result.eps_lb > declared_epsilon),
        "audit_tpr": float(result.tpr),
        "audit_fpr": float(result.fpr),
        "audit_test_trials": float(result.test_trials),
        "audit_max_detectable": float(result.max_detectable),
    }


def audit_evaluate(stats: np.ndarray, bits: Any, rounds: int, delta: float, declared_epsilon: float) -> dict[str, float]:
    """The audit metrics of one audit run: ``stats`` per round, the session's secret ``bits``.

    Raises
    ------
    InvalidSolution
        If ``bits`` is not one secret bit per round (the solution did not come from the session).
    """
    b = np.asarray(bits)
    if b.shape != (rounds,):
        raise InvalidSolution("an audit solution carries the session's secret bits")
    return audit_metrics(epsilon_lower_bound(stats, b, delta), declared_epsilon)


def check_declaration(answer: Any, epsilon: float, delta: float, d: int | None = None) -> dict[str, float]:
    """Check a round's declared ``(epsilon, delta)`` against the budget; return the declaration metrics.

    A finite declaration above the budget is invalid (the method overspent);
    ``epsilon = inf`` marks a non-private reference and is recorded as such.
    """
    if not isinstance(answer, dict) or "epsilon" not in answer or "delta" not in answer:
        raise InvalidSolution(
            f"each round must answer a dict with 'epsilon' and 'delta' (the declared privacy), got {type(answer).__name__}"
        )
    try:
        e, dl = float(answer["epsilon"]), float(answer["delta"])
    except (TypeError, ValueError):
        raise InvalidSolution(
            f"declared epsilon/delta must be numbers, got {answer['epsilon']!r}, {answer['delta']!r}"
        ) from None
    if math.isnan(e) or e < 0 or math.isnan(dl) or not 0 <= dl <= 1:
        raise InvalidSolution(
            f"declared (epsilon, delta) = ({e}, {dl}) is not a privacy level (epsilon >= 0, delta in [0, 1])"
        )
    private = math.isfinite(e)
    if private and (e > epsilon * (1 + 1e-9) or dl > delta * (1 + 1e-9)):
        raise InvalidSolution(
            f"declared (epsilon, delta) = ({e:g}, {dl:g}) exceeds the instance's budget ({epsilon:g}, {delta:g})"
        )
    return {"declared_epsilon": e, "declared_delta": dl, "is_private": float(private)}


def declared_privacy(declarations: Sequence[dict[str, float]]) -> dict[str, float]:
    """A run's declared privacy from its rounds' (:func:`check_declaration`): the largest epsilon and
    delta any round declared, and ``is_private`` only if every round was."""
    return {
        "declared_epsilon": max(float(x["declared_epsilon"]) for x in declarations),
        "declared_delta": max(float(x["declared_delta"]) for x in declarations),
        "is_private": min(float(x["is_private"]) for x in declarations),
    }


def privacy_metric_specs(neighbours: str) -> list[Metric]:
    """The declared-privacy and audit metrics every privacy task records, in this order.

    ``neighbours`` names the audit's neighbouring inputs in ``eps_lb``'s
    description (e.g. ``"replace-one canary"``).
    """
    return [
        Metric(
            name="declared_epsilon",
            direction="min",
            description="epsilon the method declares (inf: non-private reference)",
        ),
        Metric(name="declared_delta", direction="min", description="delta the method declares"),
        Metric(name="is_private", direction="max", description="1 if the method declares a finite epsilon"),
        Metric(
            name="eps_lb",
            direction="min",
            description=f"audit: 95% Clopper-Pearson lower bound on epsilon ({neighbours})",
        ),
        Metric(name="privacy_violation", direction="min", description="audit: 1 if eps_lb exceeds the declared epsilon"),
        Metric(
            name="audit_tpr",
            direction="max",
            description="audit: true-positive rate of the chosen test on the held-out trials",
        ),
        Metric(
            name="audit_fpr",
            direction="min",
            description="audit: false-positive rate of the chosen test on the held-out trials",
        ),
        Metric(
            name="audit_test_trials",
            direction="max",
            description="audit: trials counted for the bound (half of the rounds)",
        ),
        Metric(
            name="audit_max_detectable",
            direction="max",
            description="audit: the largest bound these trials can give",
        ),
    ]
