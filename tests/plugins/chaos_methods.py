"""Test-only methods that misbehave on purpose (loaded with --plugin in tests).

Each one targets the core ``knapsack`` task; the comment on each says which
status the runner must record.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import numpy as np

from bench import checkpoint, method


def _empty(instance):
    return np.zeros(len(instance.data["weights"]), dtype=np.int64)


@method(name="chaos-ok", kind="baseline", tasks=["knapsack"], deterministic=True)
def ok(instance, *, seed, budget):
    """ok: an empty knapsack is always feasible."""
    return _empty(instance)


@method(name="chaos-slow", kind="baseline", tasks=["knapsack"], deterministic=True)
def slow(instance, *, seed, budget):
    """ok: takes a while, so the runner can be killed mid-job."""
    checkpoint(_empty(instance))
    time.sleep(0.8)
    return _empty(instance)


@method(name="chaos-crash", kind="baseline", tasks=["knapsack"])
def crash(instance, *, seed, budget):
    """error: raises."""
    raise RuntimeError("chaos: deliberate crash")


@method(name="chaos-exit", kind="baseline", tasks=["knapsack"])
def exit_(instance, *, seed, budget):
    """error: the process exits without answering."""
    os._exit(3)


@method(name="chaos-hang", kind="baseline", tasks=["knapsack"])
def hang(instance, *, seed, budget):
    """timeout: sleeps far past its budget."""
    time.sleep(3600)


@method(name="chaos-ignore-term", kind="baseline", tasks=["knapsack"])
def ignore_term(instance, *, seed, budget):
    """timeout: ignores SIGTERM and spins."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        pass


@method(name="chaos-fork", kind="baseline", tasks=["knapsack"], deterministic=True)
def fork(instance, *, seed, budget):
    """ok: answers, but leaves children behind (one escapes with setsid); all must be killed."""
    for escape in (False, True):
        if os.fork() == 0:
            if escape:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(3600)
                    os._exit(0)
                os._exit(0)
            time.sleep(3600)
            os._exit(0)
    return _empty(instance)


@method(name="chaos-alloc", kind="baseline", tasks=["knapsack"])
def alloc(instance, *, seed, budget):
    """killed: allocates without bound until the memory limit stops it."""
    hoard = []
    while True:
        # np.empty reserves address space without touching it, so the limit (an
        # address-space rlimit) is reached at once, however little CPU the job gets
        # on a loaded machine; np.ones took over a second there and timed out.
        hoard.append(np.empty(2**22))  # 32 MiB a step


@method(name="chaos-invalid", kind="baseline", tasks=["knapsack"], deterministic=True)
def invalid(instance, *, seed, budget):
    """invalid: wrong length."""
    return np.zeros(len(instance.data["weights"]) + 1, dtype=np.int64)


@method(name="chaos-print", kind="baseline", tasks=["knapsack"], deterministic=True)
def loud(instance, *, seed, budget):
    """ok: prints 8 MB first; the record keeps only a tail."""
    line = "x" * 1023 + "\n"
    for _ in range(8 * 1024):
        sys.stdout.write(line)
    sys.stdout.write("END-OF-OUTPUT\n")
    return _empty(instance)


@method(name="chaos-segv", kind="baseline", tasks=["knapsack"])
def segv(instance, *, seed, budget):
    """killed: dies of a signal."""
    os.kill(os.getpid(), signal.SIGSEGV)


@method(name="chaos-threads", kind="baseline", tasks=["knapsack"], deterministic=True)
def threads(instance, *, seed, budget):
    """ok: prints the math-thread settings it runs with."""
    from threadpoolctl import threadpool_info

    print("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS"))
    print("MKL_NUM_THREADS", os.environ.get("MKL_NUM_THREADS"))
    print("BLAS", sorted({p["num_threads"] for p in threadpool_info()}))
    if "torch" in sys.modules:
        print("TORCH", sys.modules["torch"].get_num_threads())
    return _empty(instance)


@method(name="chaos-modules", kind="baseline", tasks=["knapsack"], deterministic=True)
def modules(instance, *, seed, budget):
    """ok: prints the method and baseline packages loaded in its process."""
    print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in ("methods", "baselines")))
    return _empty(instance)


@method(name="chaos-parricide", kind="baseline", tasks=["knapsack"])
def parricide(instance, *, seed, budget):
    """error: kills the worker process that forked it; the next job must still run."""
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(3600)
