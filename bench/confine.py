"""Confinement of a job's child: what Linux lets an unprivileged process do to itself.

:mod:`bench.sandbox` forks one child per job; just before the child imports
or runs any of the method's code, :func:`confine` applies the layers below,
each one the kernel offers. None needs root or a container, and none can be
undone by the method, nor by anything it starts (children inherit them)::

    no_new_privs   no setuid/file-capability gain through execve (also what
                   Landlock needs to be allowed without privileges)
    netns          a new, empty network namespace: no interface but a down
                   loopback, so no TCP/UDP to anywhere, not even 127.0.0.1,
                   and no abstract Unix socket of the host (they are per
                   namespace). Unprivileged users get it inside a new user
                   namespace that maps their own uid and gid onto themselves,
                   where RLIMIT_NPROC then bounds the job's own processes (256).
    landlock       (kernel >= 5.13) writes only beneath the job's own working
                   directory (and /dev/null, /dev/shm, GPU device nodes): the store, results/, the
                   repository, the cache and every other file are read-only.
                   A Landlock domain also may not ptrace, so /proc/<pid>/mem,
                   environ, cwd and fd of the runner, the worker and the zygote
                   are closed to it. ABI >= 4: TCP bind and connect denied;
                   ABI >= 6: no signals to, and no abstract Unix sockets of,
                   processes outside the job.
    nocaps         (only when running as root) the bounding, ambient and
                   effective capability sets are emptied, so root inside a
                   job cannot mount, ptrace, load modules or override file
                   permissions; Landlock still holds its writes to the workdir.

What stays open on a plain machine (containers close it): a job can *read*
every file its user can read (the repository, the published results, the
Python installation: all public by design), see other processes in ``/proc``
and their command lines, and use CPU, memory and processes within the
rlimits :mod:`bench.sandbox` sets. Root is not bound by ``RLIMIT_NPROC``, so a
fork storm run as root is bounded only by the memory cap and the end-of-job sweep. See the
README's "Security" section for the whole table.

A layer the kernel lacks is skipped and named in :func:`describe`; nothing here
raises for a missing feature. ``BENCH_CONFINE=0`` in the runner's environment
turns every layer off (for debugging a method; never for published runs).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import struct
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["confine", "describe", "landlock_abi", "enabled"]

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

# Linux syscall numbers of Landlock: the same on every architecture (asm-generic, 444-446).
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

# filesystem rights (linux/landlock.h)
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

_PR_SET_NO_NEW_PRIVS = 38
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_CAP_VERSION_3 = 0x20080522
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(os.uname().machine)


def enabled() -> bool:
    """Whether confinement is on (``BENCH_CONFINE`` is not ``0``)."""
    return os.environ.get("BENCH_CONFINE", "1") != "0"


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: not available or not enabled)."""
    r = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    return int(r) if r > 0 else 0


#: Device nodes a job may open for writing (GPU drivers), besides /dev/null and /dev/shm.
_DEVICES = ("nvidia", "kfd", "dri")


def _write_rights(abi: int) -> int:
    rights = (
        _FS_WRITE_FILE | _FS_REMOVE_DIR | _FS_REMOVE_FILE | _FS_MAKE_CHAR | _FS_MAKE_DIR | _FS_MAKE_REG
        | _FS_MAKE_SOCK | _FS_MAKE_FIFO | _FS_MAKE_BLOCK | _FS_MAKE_SYM
    )
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    return rights


def read_roots(extra: Sequence[str] = ()) -> list[str]:
    """Where a job may read files: the system, the Python installation, the code; not the runs.

    The allow-list is the system directories (:data:`SYSTEM_READ`), every
    ``sys.prefix`` and ``sys.path`` directory (the standard library and
    site-packages; never the repository root itself nor an ancestor of it),
    the repository's top-level entries except :data:`REPO_HIDDEN` (the run
    store ``.bench``, the published ``results``, ``.git``), ``extra`` (plugin
    files and task paths) and ``$BENCH_CONFINE_READ`` (``os.pathsep``-separated,
    the maintainers' additions). Everything else (the store wherever it is,
    ``results/``, other temp dirs, the user's home with its keys) cannot be
    opened for reading, so a method can neither copy another method's stored
    solution nor print a secret file into its record.
    """
    from bench.environment import repo_root

    repo = str(repo_root())
    roots = [p for p in SYSTEM_READ if os.path.isdir(p)]
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path):
        if p and os.path.isdir(p):
            real = os.path.realpath(p)
            if not (repo == real or repo.startswith(real.rstrip("/") + "/")):
                roots.append(real)
    with contextlib.suppress(OSError):
        roots += [os.path.join(repo, n) for n in sorted(os.listdir(repo)) if n not in REPO_HIDDEN]
    roots += [p for p in extra if p]
    roots += [p for p in os.environ.get("BENCH_CONFINE_READ", "").split(os.pathsep) if p]
    return list(dict.fromkeys(roots))


#: System directories a job may read (libraries, configuration, /proc and /sys, devices).
SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev", "/var/lib", "/var/cache")
#: Top-level entries of the repository a job may not read.
REPO_HIDDEN = frozenset({".bench", "results", ".git"})


def _landlock(writable_dir: str, readable: Sequence[str] | None) -> str:
    """Restrict this process to writing beneath ``writable_dir`` (and reading beneath ``readable``)."""
    abi = landlock_abi()
    if abi <= 0:
        return ""
    write = _write_rights(abi)
    read = _FS_READ_FILE | _FS_READ_DIR | _FS_EXECUTE
    fs = write | (read if readable is not None else 0)
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("<QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("<QQ", fs, net)
    else:
        attr = struct.pack("<Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return ""
    try:
        file_rights = _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0) | (_FS_READ_FILE if readable is not None else 0)
        rules = [(writable_dir, fs), (os.devnull, file_rights), ("/dev/shm", fs)]
        # accelerators are opened read-write (CUDA, ROCm, DRM); nothing else under /dev is
        with contextlib.suppress(OSError):
            rules += [(os.path.join("/dev", n), file_rights) for n in os.listdir("/dev") if n.startswith(_DEVICES)]
        if readable is not None:
            # listing any directory shows names only; opening a file needs an allowed root
            rules.append(("/", _FS_READ_DIR))
            rules += [(p, read if os.path.isdir(p) else _FS_READ_FILE | _FS_EXECUTE) for p in readable]
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = ctypes.create_string_buffer(struct.pack("<Qi", rights, fd), 12)
                if _libc.syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH), rule, ctypes.c_uint32(0)) < 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"landlock_add_rule({path}): {os.strerror(err)}")
            finally:
                os.close(fd)
        if _libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)
    parts = [f"landlock-abi{abi}:fs"]
    if readable is not None:
        parts.append("read")
    if net:
        parts.append("tcp")
    if scoped:
        parts.append("scope")
    return "+".join(parts)


def _netns(max_procs: int) -> str:
    """Move this (single-threaded) process into a new, empty network namespace.

    An unprivileged process gets it inside a new user namespace; there, since
    Linux 5.14, ``RLIMIT_NPROC`` counts the processes of that namespace only,
    so ``max_procs`` bounds the job's own processes (a fork storm), whatever
    else its user runs.
    """
    if _libc.unshare(_CLONE_NEWNET) == 0:
        return "netns"
    if os.geteuid() == 0:
        return ""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return ""
    # map our own ids onto themselves, so that files and getuid() read as before
    with contextlib.suppress(OSError):
        with open("/proc/self/setgroups", "w") as fh:
            fh.write("deny")
        with open("/proc/self/uid_map", "w") as fh:
            fh.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as fh:
            fh.write(f"{gid} {gid} 1")
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    limit = max_procs if hard == resource.RLIM_INFINITY else min(max_procs, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    except (ValueError, OSError):
        return "userns+netns"
    return f"userns+netns+nproc{limit}"


def _drop_capabilities() -> str:
    """As root: empty the bounding, ambient, effective, permitted and inheritable sets."""
    if os.geteuid() != 0 or _SYS_CAPSET is None:
        return ""
    last = 63
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            last = int(fh.read())
    for cap in range(last + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = ctypes.create_string_buffer(struct.pack("<Ii", _CAP_VERSION_3, 0), 8)
    data = ctypes.create_string_buffer(bytes(24), 24)
    if _libc.syscall(_SYS_CAPSET, header, data) != 0:
        return ""
    return "nocaps"


#: The most processes a job may have at once where the kernel can count them per job (see _netns).
MAX_PROCS = 256


def confine(workdir: str, max_procs: int = MAX_PROCS, readable: Sequence[str] | None = None) -> list[str]:
    """Apply every available layer to this process (a freshly forked job child).

    Must be called while the process has a single thread, after its own
    setup writes (``/proc/self/clear_refs``, its output files) and before any
    method code runs. ``readable`` (see :func:`read_roots`) limits where it
    may open files for reading; ``None`` leaves reads open. Returns the names
    of the layers applied.
    """
    if not enabled():
        return []
    applied = []
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        applied.append("no_new_privs")
    for layer in (lambda: _netns(max_procs), lambda: _landlock(workdir, readable), _drop_capabilities):
        name = layer()
        if name:
            applied.append(name)
    return applied


def describe() -> dict[str, Any]:
    """What :func:`confine` would apply on this machine, without applying it (for records and docs)."""
    abi = landlock_abi()
    return {
        "enabled": enabled(),
        "landlock_abi": abi,
        "root": os.geteuid() == 0,
    }
