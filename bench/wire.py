"""Data-only encoding for everything that crosses a trust boundary.

A method process is untrusted: unpickling what it sends would let it run code
in the trusted verifier. So solutions, states and instances travel as *data*:
a JSON tree in which numpy arrays are replaced by placeholders, followed by the
raw array buffers. Object dtypes are refused on both sides.

The same tree/array split stores solutions on disk as ``.npz`` files that
``numpy.load(allow_pickle=False)`` can read.

Values allowed in a tree: ``None``, ``bool``, ``int``, ``float``, ``str``,
lists and tuples (decoded as lists), ``dict`` with ``str`` keys, numpy arrays
and numpy scalars (decoded as Python scalars).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import struct
from typing import Any

import numpy as np

__all__ = ["WireError", "encode", "decode", "digest", "save_npz", "load_npz"]

_MAGIC = b"BW1\n"
_PLACEHOLDER = "__nd__"
# Kinds numpy can rebuild from raw bytes without running code: bool, ints,
# floats, complex, fixed-width strings, datetimes.
_SAFE_KINDS = set("biufcUSMm")


class WireError(ValueError):
    """A value cannot be encoded, or a byte string is not a valid message."""


def _flatten(value: Any, arrays: list[np.ndarray], path: str) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, np.generic):
        return _flatten(value.item(), arrays, path)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _SAFE_KINDS:
            raise WireError(f"{path or 'value'}: arrays of dtype {value.dtype} cannot be sent")
        # ascontiguousarray makes 0-d arrays 1-d; keep the shape
        arrays.append(np.ascontiguousarray(value).reshape(value.shape))
        return {_PLACEHOLDER: len(arrays) - 1}
    if isinstance(value, (list, tuple)):
        return [_flatten(v, arrays, f"{path}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise WireError(f"{path or 'value'}: dict keys must be str, got {type(k).__name__}")
            if k == _PLACEHOLDER:
                raise WireError(f"{path or 'value'}: the key {_PLACEHOLDER!r} is reserved")
            out[k] = _flatten(v, arrays, f"{path}.{k}" if path else k)
        return out
    if hasattr(value, "__array__") and hasattr(value, "shape"):
        # torch tensors and the like: convert to numpy on the sending side.
        return _flatten(np.asarray(value), arrays, path)
    raise WireError(f"{path or 'value'}: cannot send a {type(value).__name__}; use arrays, numbers, str, lists or dicts")


def _unflatten(tree: Any, arrays: list[np.ndarray]) -> Any:
    if isinstance(tree, list):
        return [_unflatten(v, arrays) for v in tree]
    if isinstance(tree, dict):
        if set(tree) == {_PLACEHOLDER}:
            idx = tree[_PLACEHOLDER]
            if type(idx) is not int or not 0 <= idx < len(arrays):
                raise WireError(f"array placeholder {idx!r} out of range")
            return arrays[idx]
        return {k: _unflatten(v, arrays) for k, v in tree.items()}
    return tree


def _safe_dtype(spec: str) -> np.dtype:
    try:
        dt = np.dtype(spec)
    except TypeError as exc:
        raise WireError(f"unknown dtype {spec!r}") from exc
    if dt.kind not in _SAFE_KINDS:
        raise WireError(f"dtype {spec!r} is not allowed")
    return dt


def encode(value: Any) -> bytes:
    """Encode a tree of plain values and numpy arrays as bytes.

    Raises
    ------
    WireError
        If the tree holds something other than the allowed value types.
    """
    arrays: list[np.ndarray] = []
    tree = _flatten(value, arrays, "")
    header = json.dumps(
        {
            "tree": tree,
            "arrays": [{"dtype": a.dtype.str, "shape": list(a.shape)} for a in arrays],
        },
        sort_keys=True,
        allow_nan=True,
        separators=(",", ":"),
    ).encode()
    parts = [_MAGIC, struct.pack("<Q", len(header)), header]
    parts.extend(a.tobytes() for a in arrays)
    return b"".join(parts)


def decode(buf: bytes | memoryview) -> Any:
    """Decode bytes made by :func:`encode`. Never executes code from ``buf``."""
    mv = memoryview(buf)
    if bytes(mv[:4]) != _MAGIC:
        raise WireError("not a bench wire message (bad magic)")
    if len(mv) < 12:
        raise WireError("truncated message")
    (hlen,) = struct.unpack("<Q", mv[4:12])
    if 12 + hlen > len(mv):
        raise WireError("truncated message header")
    try:
        header = json.loads(bytes(mv[12 : 12 + hlen]))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise WireError(f"malformed message header: {exc}") from exc
    if not isinstance(header, dict) or "tree" not in header or not isinstance(header.get("arrays", []), list):
        raise WireError("malformed message header: expected an object with 'tree' and 'arrays'")
    offset = 12 + hlen
    arrays = []
    for spec in header.get("arrays", []):
        try:
            dt = _safe_dtype(spec["dtype"])
            shape = tuple(int(s) for s in spec["shape"])
        except WireError:
            raise
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise WireError(f"malformed array spec {spec!r}: {exc}") from None
        if any(s < 0 for s in shape):
            raise WireError(f"negative array shape {shape}")
        nbytes = math.prod(shape) * dt.itemsize  # Python ints: no overflow
        if offset + nbytes > len(mv):
            raise WireError("truncated array data")
        arrays.append(np.frombuffer(mv[offset : offset + nbytes], dtype=dt).reshape(shape).copy())
        offset += nbytes
    if offset != len(mv):
        raise WireError(f"{len(mv) - offset} trailing bytes after message")
    return _unflatten(header["tree"], arrays)


def digest(value: Any) -> str:
    """sha256 (hex) of the canonical encoding of ``value``."""
    return hashlib.sha256(encode(value)).hexdigest()


def save_npz(path, value: Any) -> None:
    """Write ``value`` as a compressed ``.npz`` readable without pickle."""
    arrays: list[np.ndarray] = []
    tree = _flatten(value, arrays, "")
    payload = {f"a{i}": a for i, a in enumerate(arrays)}
    payload["__tree__"] = np.array(json.dumps(tree, allow_nan=True))
    if hasattr(path, "write"):
        np.savez_compressed(path, **payload)
    else:
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **payload)


def load_npz(path_or_bytes) -> Any:
    """Read a value written by :func:`save_npz` (``allow_pickle=False``)."""
    src = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    with np.load(src, allow_pickle=False) as z:
        if "__tree__" not in z.files:
            raise WireError(f"{path_or_bytes if isinstance(path_or_bytes, str) else 'npz'}: no __tree__ entry")
        tree = json.loads(str(z["__tree__"]))
        n = sum(1 for f in z.files if f != "__tree__")
        arrays = [z[f"a{i}"] for i in range(n)]
    return _unflatten(tree, arrays)
