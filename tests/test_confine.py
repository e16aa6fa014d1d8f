"""bench.confine in a forked child: what each layer refuses (the battery in test_hostile.py runs it end to end)."""

from __future__ import annotations

import json
import os
import socket

import pytest

from bench import confine
from bench.sandbox import _probe_confinement

LAYERS = ",".join(_probe_confinement())


def _in_confined_child(workdir: str, probe) -> dict:
    """Fork, confine, run ``probe()`` and return what it reported (a dict of str -> str)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            layers = confine.confine(workdir)
            out = {"layers": ",".join(layers), **probe()}
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _try(fn) -> str:
    try:
        fn()
    except OSError as exc:
        return f"blocked {exc.errno}"
    return "open"


@pytest.mark.skipif("landlock" not in LAYERS, reason=f"no Landlock on this kernel ({LAYERS})")
def test_writes_only_beneath_the_workdir(tmp_path):
    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    other.mkdir()

    def probe():
        return {
            "inside": _try(lambda: (work / "a" / "b").mkdir(parents=True) or (work / "a" / "f").write_text("x")),
            "outside": _try(lambda: (other / "f").write_text("x")),
            "rename_out": _try(lambda: os.rename(work / "a" / "f", other / "f")),
            "devnull": _try(lambda: open(os.devnull, "w").write("x")),
            "read": _try(lambda: open(__file__).read()),
        }

    got = _in_confined_child(str(work), probe)
    assert got["inside"] == "open" and got["devnull"] == "open" and got["read"] == "open"
    assert got["outside"].startswith("blocked") and got["rename_out"].startswith("blocked")
    assert not (other / "f").exists() and (work / "a" / "f").read_text() == "x"


@pytest.mark.skipif("landlock" not in LAYERS, reason=f"no Landlock on this kernel ({LAYERS})")
def test_the_parents_proc_files_and_signals_are_closed(tmp_path):
    me = os.getpid()

    def probe():
        return {
            "environ": _try(lambda: open(f"/proc/{me}/environ", "rb").read()),
            "mem": _try(lambda: open(f"/proc/{me}/mem", "rb").read(1)),
            "cwd": _try(lambda: os.readlink(f"/proc/{me}/cwd")),
            "signal": _try(lambda: os.kill(me, 0)) if "scope" in LAYERS else "blocked (no scope: skipped)",
        }

    got = _in_confined_child(str(tmp_path), probe)
    for what in ("environ", "mem", "cwd", "signal"):
        assert got[what].startswith("blocked"), (what, got)


@pytest.mark.skipif("netns" not in LAYERS, reason=f"no network namespace here ({LAYERS})")
def test_no_network_not_even_loopback(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def probe():
        return {
            "tcp": _try(lambda: socket.create_connection(("127.0.0.1", port), timeout=1)),
            "udp": _try(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port))),
        }

    try:
        got = _in_confined_child(str(tmp_path), probe)
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    assert got["tcp"].startswith("blocked") and got["udp"].startswith("blocked")


def test_confine_can_be_turned_off_and_says_what_it_applied(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_CONFINE", "0")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    got = _in_confined_child(str(tmp_path), lambda: {"outside": _try(outside.touch)})
    assert got["layers"] == "" and got["outside"] == "open" and outside.exists()
    outside.unlink()
    monkeypatch.delenv("BENCH_CONFINE")
    assert set(LAYERS.split(",")) >= ({"no_new_privs"} if LAYERS else set())
