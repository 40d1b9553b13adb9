"""Every wrong call is answered right or refused with a clean InputError.

A table of calls (every dtype given every other dtype, wrong ranks and
shapes, strided, Fortran-ordered and big-endian arrays, 0-d arrays, Python
lists and scalars, ragged lists, strings, None, objects, out-of-range ints,
too many and too few arguments) is made for one program taking one argument
of each dtype, and run against each kind of executable: JIT, loaded,
deserialized, dynamic-shape. A call either returns the right values or
raises ``xlac.InputError`` naming the argument, with a message that does not
contradict itself; nothing else (no bare ValueError, no wrong result).
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from executable_kinds import KINDS, executables, expected

import xlac

TYPES = ["f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64",
         "i1", "complex<f32>", "complex<f64>"]
DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8,
                                np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.bool_, np.complex64, np.complex128)]
SHAPE = (2, 3)
OK, REFUSE = "ok", "refuse"


def good(dtype: np.dtype) -> np.ndarray:
    return (np.arange(6).reshape(SHAPE) % 2 if dtype == np.bool_ else
            np.arange(6).reshape(SHAPE)).astype(dtype)


def python_cases(dtype: np.dtype):
    """(name, value, expectation): Python values convert by numpy's same-kind rule."""
    kind = "f" if dtype.kind == "V" else dtype.kind
    ints = [[0, 1, 2], [3, 4, 5]]
    yield "list of ints", ints, OK if kind in "iufc" else REFUSE
    yield "list of floats", [[0.5, 1.5, 2.5]] * 2, OK if kind in "fc" else REFUSE
    yield "list of bools", [[True, False, True]] * 2, OK
    yield "list of complex", [[1j, 2, 3]] * 2, OK if kind == "c" else REFUSE
    yield "tuple of ints", ((0, 1, 2), (3, 4, 5)), OK if kind in "iufc" else REFUSE
    yield "ints past i8", [[300, 1, 2]] * 2, REFUSE if dtype in (np.int8, np.uint8, np.bool_) \
        else OK
    yield "negative ints", [[-1, 1, 2]] * 2, REFUSE if kind in "ub" else OK
    yield "an int no dtype holds", [[2 ** 70, 1, 2]] * 2, REFUSE
    yield "past int64", [[2 ** 63, 1, 2]] * 2, OK if dtype == np.uint64 or kind in "fc" \
        else REFUSE
    yield "ragged list", [[1, 2, 3], [4, 5]], REFUSE
    yield "list of strings", [["a", "b", "c"]] * 2, REFUSE
    yield "string", "abc", REFUSE
    yield "list with None", [[None, 1, 2]] * 2, REFUSE
    yield "Python scalar", 1, REFUSE
    yield "numpy scalar", dtype.type(1), REFUSE


def array_cases(dtype: np.dtype):
    """(name, value, expectation): arrays must have the dtype and shape."""
    array = good(dtype)
    for other in DTYPES:
        if other != dtype:
            source = array.real if dtype.kind == "c" and other.kind != "c" else array
            yield f"{other.name} array", source.astype(other), REFUSE
    for shape in [(6,), (2, 3, 1), (3, 2), (2, 4), (2, 2), ()]:
        yield f"shape {shape}", np.zeros(shape, dtype), REFUSE
    yield "strided", np.repeat(array, 2, axis=1)[:, ::2], OK
    yield "fortran order", np.asfortranarray(array), OK
    yield "read-only", _read_only(array), OK
    if dtype.kind != "V" and dtype.itemsize > 1:
        yield "big-endian", array.astype(dtype.newbyteorder(">")), OK
        yield "big-endian strided", np.repeat(array, 2, axis=1).astype(
            dtype.newbyteorder(">"))[:, ::2], OK
    yield "object array", array.astype(object), REFUSE
    yield "string array", np.full(SHAPE, "x"), REFUSE
    yield "None", None, REFUSE
    yield "an object", object(), REFUSE


def _read_only(array):
    copy = array.copy()
    copy.setflags(write=False)
    return copy


def wrong_calls():
    """(name, argument list, index of the changed argument or None, expectation)."""
    base = [good(d) for d in DTYPES]
    for index, dtype in enumerate(DTYPES):
        for name, value, expect in [*array_cases(dtype), *python_cases(dtype)]:
            yield f"{TYPES[index]}: {name}", base[:index] + [value] + base[index + 1:], index, \
                expect
    yield "no arguments", [], None, REFUSE
    yield "one too few", base[:-1], None, REFUSE
    yield "one too many", base + [base[0]], None, REFUSE


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return executables(TYPES, tmp_path_factory.mktemp("inputs"))


@pytest.mark.parametrize("kind", KINDS)
def test_every_wrong_call_is_answered_or_refused_cleanly(kinds, kind):
    exe = kinds[kind]
    failures, counts = [], {OK: 0, REFUSE: 0}
    for name, args, index, expect in wrong_calls():
        with np.errstate(over="ignore"):         # 2**63 as f16 is inf: numpy's rule
            problem = _call(exe, args, index, expect)
        counts[expect] += 1
        if problem:
            failures.append(f"{name}: {problem}")
    print(f"{kind}: {sum(counts.values())} calls, {counts[OK]} to answer, "
          f"{counts[REFUSE]} to refuse, {len(failures)} wrong")
    assert not failures, "\n".join(failures[:20])
    assert sum(counts.values()) > 600


def _call(exe, args, index, expect) -> str:
    """"" if the call went as it should, else what went wrong."""
    try:
        outputs = exe.run(*args)
    except xlac.InputError as error:
        if expect == OK:
            return f"refused: {error}"
        return _message_problem(str(error), index)
    except Exception as error:  # noqa: BLE001 - any other exception is the failure counted
        return f"raised {type(error).__name__}: {error}"
    if expect == REFUSE:
        return "accepted"
    for position, (value, dtype, output) in enumerate(zip(args, DTYPES, outputs)):
        want = expected(value, dtype)
        if output.dtype != dtype or not np.array_equal(output, want):
            return f"wrong result for argument {position}: {output!r}, expected {want!r}"
    return ""


def _message_problem(message: str, index: int | None) -> str:
    if index is not None and f"argument {index} " not in message:
        return f"the message does not name argument {index}: {message}"
    for compiled, given in re.findall(r"compiled for (\S+), called with (\S+)", message):
        if compiled == given.rstrip(";,"):
            return f"the message contradicts itself: {message}"
    return ""


def test_big_endian_arrays_give_the_same_values(kinds):
    exe = kinds["jit"]
    args = [good(d) for d in DTYPES]
    args[0] = np.linspace(-1, 1, 6, dtype=">f4").reshape(SHAPE)
    np.testing.assert_array_equal(exe.run(*args)[0], 2 * args[0].astype(np.float32))


def test_refusals_say_what_was_expected_and_got(kinds):
    args = [good(d) for d in DTYPES]
    args[1] = good(np.dtype(np.float32))
    args[4] = [[1, 2, 3], [4, 5]]
    with pytest.raises(xlac.InputError) as info:
        kinds["jit"].run(*args)
    message = str(info.value)
    assert "argument 1 compiled for f64[2,3], called with f32[2,3];" in message
    assert "argument 4 compiled for s8[2,3], called with a list numpy cannot read" in message


def test_pytree_arguments_are_named_by_their_path():
    jax = pytest.importorskip("jax")

    def scale(params, x):
        return params["w"] * x

    lowered = jax.jit(scale).lower({"w": np.ones(3, np.float32)}, np.ones(3, np.float32))
    exe = xlac.compile(lowered, cache=False)
    with pytest.raises(xlac.InputError, match=r"argument 0 \(args\[0\]\['w'\]\) compiled for "
                                              r"f32\[3\], called with s32\[2\]"):
        exe({"w": np.ones(2, np.int32)}, np.ones(3, np.float32))
