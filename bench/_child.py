"""The method's side of the job protocol, run inside a forked child.

Messages (all :mod:`bench.wire` data)::

    runner -> child   {"op": "start", "method", "instance", "seed", "budget", "params"}
    child  -> runner  {"op": "ready"} | {"op": "skip", "reason"} | {"op": "error", ...}
    runner -> child   {"op": "select", "state"}           (once for one-shot tasks)
    child  -> runner  {"op": "checkpoint", "solution"}*    (optional, any number)
                      {"op": "truncated", "reason"}*       (bench.truncated: the clock cut the run short)
                      {"op": "action", "action"} | {"op": "error", ...} | {"op": "unsendable", ...}
    runner -> child   {"op": "stop"}
"""

from __future__ import annotations

import inspect
import random
import socket
import sys
import time
import traceback
from typing import Any

from bench import sandbox, wire
from bench.sandbox import recv_msg, send_msg
from bench.task import Instance

_TAIL = 4000


def _error(exc: BaseException) -> dict[str, Any]:
    return {
        "op": "error",
        "type": type(exc).__name__,
        "message": str(exc)[:_TAIL],
        "traceback": "".join(traceback.format_exception(exc))[-_TAIL:],
    }


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


def _send_result(sock: socket.socket, op: str, key: str, value: Any) -> None:
    try:
        payload = wire.encode({"op": op, key: value})
    except wire.WireError as exc:
        send_msg(sock, {"op": "unsendable", "message": str(exc)})
        return
    sock.sendall(sandbox._LEN.pack(len(payload)) + payload)


def serve(sock: socket.socket) -> int:
    """Answer the runner until it says stop. Returns the process exit code."""
    # the zygote discovered the methods (only its task's family) before forking us:
    # discovering again here would import every other family inside the job's clock
    from bench.registry import METHODS

    start = recv_msg(sock)
    sandbox._DEADLINE = time.monotonic() + float(start["budget"])
    try:
        spec = METHODS.get(start["method"])
        pub = start["instance"]
        instance = Instance(
            id=pub["id"], params=pub["params"], data=pub["data"], tags=tuple(pub["tags"]), digest="public"
        )
        seed, budget = int(start["seed"]), float(start["budget"])
        params = dict(start["params"])
        _seed_everything(seed)
        if spec.supports is not None:
            ok = spec.check_supports(instance, params)
            if ok is not True:
                reason = ok if isinstance(ok, str) and ok else f"{spec.name}.supports() returned {ok!r}"
                send_msg(sock, {"op": "skip", "reason": reason, "baseline_kb": sandbox.BASELINE_RSS_KB})
                return 0
        sandbox._CHECKPOINT_HOOK = lambda sol: _send_result(sock, "checkpoint", "solution", sol)
        sandbox._TRUNCATED_HOOK = lambda why: send_msg(sock, {"op": "truncated", "reason": why[:_TAIL]})
        target = spec.target
        if inspect.isclass(target):
            obj = target(instance, seed=seed, budget=budget, **params)

            def answer(state: dict[str, Any]) -> Any:
                return obj.select(state)
        else:

            def answer(state: dict[str, Any]) -> Any:
                return target(instance, seed=seed, budget=budget, **params)

        send_msg(sock, {"op": "ready", "baseline_kb": sandbox.BASELINE_RSS_KB})
    except BaseException as exc:
        send_msg(sock, {**_error(exc), "baseline_kb": sandbox.BASELINE_RSS_KB})
        return 1

    while True:
        msg = recv_msg(sock)
        if msg["op"] == "stop":
            return 0
        if msg["op"] != "select":
            send_msg(sock, {"op": "error", "type": "ProtocolError", "message": f"unexpected op {msg['op']!r}", "traceback": ""})
            return 1
        try:
            action = answer(msg["state"])
        except BaseException as exc:
            send_msg(sock, _error(exc))
            return 1
        _send_result(sock, "action", "action", action)
