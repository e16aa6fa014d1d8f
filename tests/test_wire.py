"""bench.wire: the data-only codec between untrusted method processes and the verifier."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

from bench import wire
from bench.wire import WireError

MAGIC = b"BW1\n"

# Set by _Trap.__reduce__ if anything ever unpickles a payload we planted.
EXECUTED: list[str] = []


def _mark_executed(tag: str) -> None:
    EXECUTED.append(tag)


class _Trap:
    def __reduce__(self):
        return (_mark_executed, ("unpickled",))


@pytest.fixture(autouse=True)
def _clear_executed():
    EXECUTED.clear()
    yield
    assert EXECUTED == [], "a payload was unpickled: the decoder executed attacker data"


def message(header: object, body: bytes = b"") -> bytes:
    """A wire message with a hand-written header (to build malformed ones)."""
    h = json.dumps(header).encode()
    return MAGIC + struct.pack("<Q", len(h)) + h + body


def roundtrip(value):
    return wire.decode(wire.encode(value))


def assert_same_array(got, want: np.ndarray) -> None:
    assert isinstance(got, np.ndarray)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype.kind in "fc":
        np.testing.assert_array_equal(got, want)  # treats NaN == NaN
    else:
        assert (got == want).all()


# ----------------------------------------------------------------------------- round trips


def test_plain_tree_roundtrips_exactly():
    value = {
        "none": None,
        "t": True,
        "f": False,
        "int": -7,
        "big": 2**70,
        "float": 0.1,
        "str": "héllo ✓",
        "empty_list": [],
        "empty_dict": {},
        "nested": {"a": [1, [2, [3, {"b": "c"}]]], "z": {"y": {"x": None}}},
    }
    got = roundtrip(value)
    assert got == value
    assert type(got["t"]) is bool and type(got["int"]) is int and type(got["float"]) is float


def test_tuples_decode_as_lists():
    assert roundtrip({"a": (1, (2, 3))}) == {"a": [1, [2, 3]]}


def test_non_finite_floats_roundtrip():
    got = roundtrip({"nan": float("nan"), "inf": float("inf"), "ninf": -float("inf")})
    assert np.isnan(got["nan"]) and got["inf"] == float("inf") and got["ninf"] == -float("inf")


@pytest.mark.parametrize(
    "dtype",
    [
        "int8", "int16", "int32", "int64",
        "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64",
        "complex64", "complex128",
        "bool",
        ">i4", ">f8",  # non-native byte order must survive
    ],
)
def test_numeric_arrays_roundtrip_with_dtype(dtype):
    a = (np.arange(-3, 9) % 5).astype(dtype).reshape(3, 4)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * a[::-1]
    got = roundtrip({"x": a})["x"]
    assert_same_array(got, a)


def test_float_specials_inside_arrays():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-310])
    got = roundtrip(a)
    assert_same_array(got, a)
    assert np.signbit(got[3])


def test_extreme_integers_survive():
    a = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], dtype=np.int64)
    b = np.array([np.iinfo(np.uint64).max], dtype=np.uint64)
    got = roundtrip([a, b])
    assert_same_array(got[0], a)
    assert_same_array(got[1], b)


def test_unicode_and_bytes_arrays_roundtrip():
    u = np.array(["héllo", "ü", ""])
    s = np.array([b"ab", b"\x00\xff"])
    got = roundtrip({"u": u, "s": s})
    assert_same_array(got["u"], u)
    assert got["u"].dtype == np.dtype("<U5")
    assert_same_array(got["s"], s)


def test_datetime_arrays_roundtrip():
    d = np.array(["2020-01-01", "2025-07-13"], dtype="datetime64[D]")
    td = np.array([1, -2], dtype="timedelta64[s]")
    got = roundtrip([d, td])
    assert_same_array(got[0], d)
    assert_same_array(got[1], td)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 5)])
def test_empty_arrays_keep_shape_and_dtype(shape):
    a = np.zeros(shape, dtype=np.float32)
    assert_same_array(roundtrip(a), a)


def test_zero_dim_array_keeps_shape():
    a = np.array(5, dtype=np.int16)
    got = roundtrip({"x": a})["x"]
    assert got.shape == ()
    assert got.dtype == np.int16 and got == 5


def test_non_contiguous_arrays_roundtrip():
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    strided = base[::2, ::3]
    transposed = base.T
    fortran = np.asfortranarray(base)
    reversed_ = base[::-1]
    assert not strided.flags.c_contiguous and not transposed.flags.c_contiguous
    got = roundtrip([strided, transposed, fortran, reversed_])
    assert_same_array(got[0], np.array([[0, 3], [12, 15]], dtype=np.int32))
    assert_same_array(got[1], transposed)
    assert_same_array(got[2], base)
    assert_same_array(got[3], reversed_)


def test_many_arrays_keep_their_positions():
    arrays = [np.full(i + 1, i, dtype=np.int64) for i in range(5)]
    got = roundtrip({"list": arrays, "same_twice": [arrays[0], arrays[0]]})
    for g, a in zip(got["list"], arrays, strict=True):
        assert_same_array(g, a)
    assert_same_array(got["same_twice"][1], arrays[0])


def test_decoded_arrays_are_writable_copies():
    buf = wire.encode(np.arange(3))
    got = wire.decode(buf)
    got[0] = 99  # must not raise (frombuffer alone would be read-only)
    assert wire.decode(buf)[0] == 0


def test_decode_accepts_memoryview_and_bytearray():
    value = {"a": np.arange(4, dtype=np.uint8), "b": [1, "x"]}
    buf = wire.encode(value)
    for b in (memoryview(buf), bytearray(buf)):
        got = wire.decode(b)
        assert_same_array(got["a"], value["a"])
        assert got["b"] == [1, "x"]


def test_array_like_objects_are_converted_to_arrays():
    class FakeTensor:  # what torch tensors look like to the codec
        shape = (2,)

        def __array__(self, dtype=None, copy=None):
            return np.array([1.5, 2.5])

    got = roundtrip({"t": FakeTensor()})["t"]
    assert_same_array(got, np.array([1.5, 2.5]))


@pytest.mark.parametrize(
    ("scalar", "expected"),
    [
        (np.int8(-3), -3),
        (np.int64(2**40), 2**40),
        (np.uint16(65535), 65535),
        (np.float32(1.5), 1.5),
        (np.float64(0.1), 0.1),
        (np.bool_(True), True),
        (np.str_("abc"), "abc"),
    ],
)
def test_numpy_scalars_decode_as_python_scalars(scalar, expected):
    got = roundtrip({"s": scalar})["s"]
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize("scalar", [np.complex128(1 + 2j), np.datetime64("2020-01-01"), np.bytes_(b"ab")])
def test_unsendable_numpy_scalars_raise_wire_error(scalar):
    with pytest.raises(WireError, match=r"x\[0\]"):
        wire.encode({"x": [scalar]})


# ----------------------------------------------------------------------------- refused values


class Custom:
    pass


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ({1, 2}, r"^value: cannot send a set"),
        ({"a": [1, {"b": {1}}]}, r"^a\[1\]\.b: cannot send a set"),
        ({"obj": Custom()}, r"^obj: cannot send a Custom"),
        ([b"raw"], r"^\[0\]: cannot send a bytes"),
        (1 + 2j, r"^value: cannot send a complex"),
        ({"a": {1: "x"}}, r"^a: dict keys must be str, got int"),
        ({("t",): 1}, r"^value: dict keys must be str, got tuple"),
        ({"a": {"__nd__": 0}}, r"^a: the key '__nd__' is reserved"),
        ({"sol": {"arr": np.array([{"x": 1}], dtype=object)}}, r"^sol\.arr: arrays of dtype object cannot be sent"),
        ([np.zeros(2, dtype=[("a", "i4")])], r"^\[0\]: arrays of dtype .* cannot be sent"),
    ],
)
def test_unsupported_values_raise_wire_error_naming_the_path(value, pattern):
    with pytest.raises(WireError, match=pattern):
        wire.encode(value)


def test_save_npz_refuses_object_arrays_too(tmp_path):
    with pytest.raises(WireError, match="dtype object"):
        wire.save_npz(tmp_path / "x.npz", {"a": np.array([None], dtype=object)})


def test_wire_error_is_a_value_error():
    assert issubclass(WireError, ValueError)


# ----------------------------------------------------------------------------- exact format


def test_encoding_of_none_is_the_documented_layout():
    header = b'{"arrays":[],"tree":null}'
    expected = MAGIC + struct.pack("<Q", len(header)) + header
    assert wire.encode(None) == expected
    assert wire.digest(None) == hashlib.sha256(expected).hexdigest()


def test_array_bytes_follow_the_header():
    buf = wire.encode({"x": np.array([1, 2], dtype="<i4")})
    (hlen,) = struct.unpack("<Q", buf[4:12])
    header = json.loads(buf[12 : 12 + hlen])
    assert header == {"arrays": [{"dtype": "<i4", "shape": [2]}], "tree": {"x": {"__nd__": 0}}}
    assert buf[12 + hlen :] == b"\x01\x00\x00\x00\x02\x00\x00\x00"


# ----------------------------------------------------------------------------- malformed input


def test_bad_magic():
    good = wire.encode({"a": 1})
    for buf in (b"", b"BW", b"XXXX" + good[4:], b"BW2\n" + good[4:]):
        with pytest.raises(WireError, match="bad magic"):
            wire.decode(buf)


def test_magic_without_length():
    with pytest.raises(WireError, match="truncated message"):
        wire.decode(MAGIC + b"\x05\x00")


def test_truncated_header():
    good = wire.encode({"key": "value"})
    with pytest.raises(WireError, match="truncated message header"):
        wire.decode(good[:-3])


def test_header_length_beyond_buffer():
    with pytest.raises(WireError, match="truncated message header"):
        wire.decode(MAGIC + struct.pack("<Q", 2**63) + b"{}")


def test_truncated_array_data():
    good = wire.encode({"a": np.arange(10, dtype=np.int64)})
    for cut in (1, 8, 79):
        with pytest.raises(WireError, match="truncated array data"):
            wire.decode(good[:-cut])


def test_trailing_bytes():
    good = wire.encode({"a": np.arange(3)})
    with pytest.raises(WireError, match="1 trailing bytes"):
        wire.decode(good + b"\x00")
    with pytest.raises(WireError, match="trailing bytes"):
        wire.decode(wire.encode(None) + b"junk")


def test_malformed_json_header():
    h = b'{"tree": '
    with pytest.raises(WireError, match="malformed message header"):
        wire.decode(MAGIC + struct.pack("<Q", len(h)) + h)


@pytest.mark.parametrize("dtype", ["|O", "O", "object", "|V8", [["a", "|O"]], {"names": ["a"], "formats": ["O"]}])
def test_object_or_void_dtype_in_header_is_refused_without_unpickling(dtype):
    payload = pickle.dumps(np.array([_Trap()], dtype=object))
    buf = message({"tree": {"__nd__": 0}, "arrays": [{"dtype": dtype, "shape": [1]}]}, payload)
    with pytest.raises(WireError, match="dtype"):
        wire.decode(buf)


def test_unknown_dtype_name_is_refused():
    with pytest.raises(WireError, match="unknown dtype"):
        wire.decode(message({"tree": None, "arrays": [{"dtype": "zz9", "shape": [1]}]}, b"\x00" * 8))


def test_negative_shape_is_refused():
    buf = message({"tree": {"__nd__": 0}, "arrays": [{"dtype": "<i8", "shape": [-1, 2]}]}, b"\x00" * 16)
    with pytest.raises(WireError, match="negative array shape"):
        wire.decode(buf)


@pytest.mark.parametrize("idx", [1, -1, "0", None])
def test_placeholder_out_of_range(idx):
    buf = message({"tree": {"a": {"__nd__": idx}}, "arrays": [{"dtype": "<i8", "shape": [1]}]}, b"\x00" * 8)
    with pytest.raises(WireError, match="placeholder"):
        wire.decode(buf)


def _huge_shape_message() -> bytes:
    # 2**62 * 4 elements overflows int64 to 0 bytes, so the length check passes.
    return message({"tree": None, "arrays": [{"dtype": "<i8", "shape": [2**62, 4]}]})


@pytest.mark.parametrize(
    "buf",
    [
        pytest.param(message([1, 2]), id="header-not-an-object"),
        pytest.param(message({"arrays": []}), id="header-without-tree"),
        pytest.param(message({"tree": None, "arrays": [{"shape": [1]}]}), id="array-without-dtype"),
        pytest.param(message({"tree": None, "arrays": [{"dtype": "<i4", "shape": ["x"]}]}), id="shape-not-int"),
        pytest.param(_huge_shape_message(), id="shape-overflows-int64"),
        pytest.param(message({"tree": None, "arrays": [{"dtype": "<i8", "shape": [2**64]}]}), id="shape-too-big"),
        pytest.param(MAGIC + struct.pack("<Q", 3) + b'"\x80"', id="header-not-utf8"),
    ],
)
def test_structurally_broken_headers_raise_wire_error(buf):
    with pytest.raises(WireError):
        wire.decode(buf)


# ----------------------------------------------------------------------------- digest


def test_digest_is_stable_and_order_independent():
    a = {"x": np.arange(5, dtype=np.int32), "y": [1, "two", None], "z": 0.5}
    b = {"z": 0.5, "y": [1, "two", None], "x": np.arange(5, dtype=np.int32)}
    assert wire.digest(a) == wire.digest(a)
    assert wire.digest(a) == wire.digest(b)
    assert wire.digest(a) == hashlib.sha256(wire.encode(a)).hexdigest()
    assert len(wire.digest(a)) == 64


def test_digest_of_non_contiguous_equals_contiguous_copy():
    base = np.arange(12).reshape(3, 4)
    assert wire.digest(base[:, ::2]) == wire.digest(np.ascontiguousarray(base[:, ::2]))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": 1}, {"x": 2}),
        ({"x": 1}, {"y": 1}),
        ({"x": 1}, {"x": 1.0}),
        ({"x": 1}, {"x": True}),
        ([1, 2], [2, 1]),
        (np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int64)),
        (np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)),
        (np.arange(3), np.arange(3).tolist()),
        (np.array([1.0, 2.0]), np.array([1.0, 2.0000001])),
    ],
)
def test_digest_differs_for_different_content(a, b):
    assert wire.digest(a) != wire.digest(b)


# ----------------------------------------------------------------------------- npz


VALUE = {
    "labels": np.array([0, 2, 1, 2], dtype=np.int8),
    "x": np.linspace(0, 1, 6).reshape(2, 3),
    "meta": {"name": "G1", "n": 4, "ok": True, "scores": [0.5, None]},
    "strided": np.arange(10)[::3],
}


def _check_value(got):
    assert_same_array(got["labels"], VALUE["labels"])
    assert_same_array(got["x"], VALUE["x"])
    assert_same_array(got["strided"], np.array([0, 3, 6, 9]))
    assert got["meta"] == VALUE["meta"]


@pytest.mark.parametrize("as_str", [True, False])
def test_npz_roundtrip_through_a_file(tmp_path, as_str):
    path = tmp_path / "sol.npz"
    wire.save_npz(str(path) if as_str else path, VALUE)
    _check_value(wire.load_npz(str(path) if as_str else path))


def test_npz_roundtrip_through_bytesio_and_bytes():
    buf = io.BytesIO()
    wire.save_npz(buf, VALUE)
    _check_value(wire.load_npz(buf.getvalue()))
    buf.seek(0)
    _check_value(wire.load_npz(buf))


def test_npz_is_readable_by_numpy_without_pickle(tmp_path: Path):
    path = tmp_path / "sol.npz"
    wire.save_npz(path, VALUE)
    with np.load(path, allow_pickle=False) as z:
        assert sorted(z.files) == ["__tree__", "a0", "a1", "a2"]
        for name in z.files:
            assert z[name].dtype.kind != "O"
        tree = json.loads(str(z["__tree__"]))
    assert tree["labels"] == {"__nd__": 0}


def test_npz_of_plain_values():
    buf = io.BytesIO()
    wire.save_npz(buf, [1, "a", None])
    assert wire.load_npz(buf.getvalue()) == [1, "a", None]


def test_npz_with_pickled_object_array_is_refused_without_unpickling():
    buf = io.BytesIO()
    np.savez(buf, __tree__=np.array(json.dumps({"__nd__": 0})), a0=np.array([_Trap()], dtype=object))
    with pytest.raises(ValueError, match="allow_pickle"):
        wire.load_npz(buf.getvalue())


def test_npz_without_tree_is_refused(tmp_path):
    path = tmp_path / "foreign.npz"
    np.savez(path, x=np.arange(3))
    with pytest.raises(WireError, match=r"foreign\.npz: no __tree__ entry"):
        wire.load_npz(str(path))
    buf = io.BytesIO()
    np.savez(buf, x=np.arange(3))
    with pytest.raises(WireError, match="no __tree__"):
        wire.load_npz(buf.getvalue())


def test_npz_zero_dim_array_keeps_shape():
    buf = io.BytesIO()
    wire.save_npz(buf, {"x": np.array(2.5)})
    got = wire.load_npz(buf.getvalue())["x"]
    assert isinstance(got, np.ndarray) and got.shape == () and got == 2.5
