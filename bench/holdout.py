"""The held-out tier: instances whose generator seeds come from a secret the methods never see.

A public instance id such as ``uncorrelated-n100-s0`` names everything that
defines the instance, so a method can rebuild the answer key from it
(``import tasks.knapsack; tasks.knapsack...load(instance.id).private``):
every generated task is open to that replay, whatever the sandbox does. The
``holdout`` tier closes it the way held-out test sets do. Its instances have
the shapes of a public tier (``standard`` by default: same generators, sizes
and budgets), but each one's seed is an HMAC of the maintainers' secret::

    seed = HMAC-SHA256(BENCH_HOLDOUT_SECRET, "<task>/v<version>/<base id>") mod 2**31

and its public id carries only a tag of that HMAC (``uncorrelated-n100-sh3f9a2c1d``),
from which the seed cannot be recovered. The methods receive that id and the
instance's parameters without the seed; the secret lives only in the
environment of the trusted processes (the runner and its evaluators), which
remove it from the environment of every zygote they start and mark
themselves non-dumpable, so that a same-user process cannot read it from
``/proc/<pid>/environ`` or ``mem`` (the job's own :mod:`bench.confine`
Landlock domain already forbids that).

Holding the secret out of the methods' reach is the maintainers' part: set it
in the environment of ``bench run`` only (``BENCH_HOLDOUT_SECRET=... python -m
bench run --tier holdout``), never in a file a job's user can read. Results of
the holdout tier are reproducible by whoever holds the secret, and by nobody
else: that is the point.
"""

from __future__ import annotations

import ctypes
import hashlib
import hmac
import os

__all__ = ["ENV", "TIER", "HoldoutUnavailable", "secret", "derive", "protect_process", "scrub"]

#: The environment variable that holds the maintainers' secret.
ENV = "BENCH_HOLDOUT_SECRET"
#: The tier's name.
TIER = "holdout"
#: The shortest secret accepted (characters); a short one could be guessed from a tag.
MIN_LENGTH = 16

_PR_SET_DUMPABLE = 4


class HoldoutUnavailable(ValueError):
    """The holdout tier cannot be used here: no secret, or a task without generated seeds."""


def secret() -> bytes:
    """The secret, from the environment of this (trusted) process.

    Raises
    ------
    HoldoutUnavailable
        When ``BENCH_HOLDOUT_SECRET`` is unset or shorter than 16 characters.
    """
    value = os.environ.get(ENV, "")
    if not value:
        raise HoldoutUnavailable(
            f"the holdout tier needs the maintainers' secret in {ENV} (held by the maintainers; "
            "its instances cannot be made without it)"
        )
    if len(value) < MIN_LENGTH:
        raise HoldoutUnavailable(f"{ENV} is {len(value)} characters long; use at least {MIN_LENGTH}")
    protect_process()
    return value.encode()


def derive(task: str, version: str, base_id: str) -> tuple[int, str]:
    """``(seed, tag)`` of the holdout instance shaped like ``base_id``: a 31-bit seed and an 8-hex tag."""
    mac = hmac.new(secret(), f"{task}/v{version}/{base_id}".encode(), hashlib.sha256).digest()
    seed = int.from_bytes(mac[:8], "little") % 2**31
    tag = hashlib.sha256(b"public-tag:" + mac).hexdigest()[:8]
    return seed, tag


def protect_process() -> None:
    """Make this process non-dumpable: its ``/proc`` files (environ, mem, cwd) close to same-user processes."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass


def scrub(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the secret (for every process that runs method code)."""
    env.pop(ENV, None)
    return env
