"""The fast path of a call (``xlac.calls``): repeated calls with ready arrays skip
the full checks, and every other call still takes them, whatever came before.

Behaviour and structure only, no timings: which path a call took is seen by
making the full checks fail loudly.
"""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest
from executable_kinds import KINDS, executables

import xlac
import xlac.dynamic
import xlac.executable
from xlac.calls import data_pointers

PAIR = ["f32", "i32"]


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return executables(PAIR, tmp_path_factory.mktemp("calls"))


def pair(rows: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, 3)).astype(np.float32),
            rng.integers(-1000, 1000, (rows, 3), dtype=np.int32))


def assert_doubled(outputs, x, n):
    np.testing.assert_array_equal(outputs[0], x + x)
    np.testing.assert_array_equal(outputs[1], np.asarray(n) + np.asarray(n))


@pytest.fixture
def full_checks(monkeypatch):
    """Counts the calls that took the full checks (``check_inputs``)."""
    taken = []

    def counted(check):
        def check_inputs(*args, **kwargs):
            taken.append(args[1])
            return check(*args, **kwargs)
        return check_inputs

    monkeypatch.setattr(xlac.executable, "check_inputs", counted(xlac.executable.check_inputs))
    monkeypatch.setattr(xlac.dynamic, "check_inputs", counted(xlac.dynamic.check_inputs))
    return taken


@pytest.mark.parametrize("kind", KINDS)
def test_ready_arrays_skip_the_full_checks_and_others_do_not(kinds, kind, full_checks):
    exe = kinds[kind]
    x, n = pair()
    exe.run(x, n)                                 # a dynamic one compiles (2, 3) here
    full_checks.clear()
    for seed in range(5):
        x, n = pair(seed=seed)
        assert_doubled(exe.run(x, n), x, n)
    assert full_checks == []
    assert_doubled(exe.run(x, n.tolist()), x, n)
    assert len(full_checks) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_inputs_to_convert_after_ready_ones_are_converted(kinds, kind):
    exe = kinds[kind]
    x, n = pair()
    wide = np.repeat(x, 2, axis=1)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    misaligned = np.frombuffer(raw.data, np.uint8, x.nbytes, 1).view(np.float32).reshape(x.shape)
    misaligned[...] = x
    for value in [x, wide[:, ::2], x, np.asfortranarray(x), misaligned, x.astype(">f4"),
                  x.tolist(), x[::-1][::-1], x]:
        assert_doubled(exe.run(value, n), x, n)


@pytest.mark.parametrize("kind", KINDS)
def test_a_changed_dtype_is_refused_as_before(kinds, kind):
    exe = kinds[kind]
    x, n = pair()
    for _ in range(3):
        exe.run(x, n)
    rows = "?" if kind == "dynamic" else "2"
    with pytest.raises(xlac.InputError) as info:
        exe.run(x.astype(np.float64), n.astype(np.int64))
    assert str(info.value) == (f"argument 0 compiled for f32[{rows},3], called with f64[2,3]; "
                               f"argument 1 compiled for s32[{rows},3], called with s64[2,3]; "
                               f"the executable takes (f32[{rows},3], s32[{rows},3])")
    with pytest.raises(xlac.InputError, match=r"expected 2 argument\(s\)"):
        exe.run(x)
    assert_doubled(exe.run(x, n), x, n)


def test_a_dynamic_executable_follows_changing_shapes(kinds):
    exe = kinds["dynamic"]
    for rows in [1, 3, 1, 4, 4, 3, 1]:
        x, n = pair(rows, seed=rows)
        assert_doubled(exe(x, n), x, n)
        assert f"{rows}x3xf32" in exe.as_text("linalg")          # the latest call's shapes
    assert {((r, 3), (r, 3)) for r in (1, 3, 4)} <= set(exe.specializations)
    with pytest.raises(xlac.InputError, match=r"argument 1 compiled for s32\[\?,3\], called "
                                              r"with s32\[3,4\]"):
        exe(pair(3)[0], np.zeros((3, 4), np.int32))


def test_zero_d_arrays_scalars_and_empty_arrays():
    exe = xlac.compile("func.func @main(%x: tensor<f32>, %e: tensor<0x2xi32>) -> "
                       "(tensor<f32>, tensor<0x2xi32>) {\n"
                       "  %0 = stablehlo.add %x, %x : tensor<f32>\n"
                       "  return %0, %e : tensor<f32>, tensor<0x2xi32>\n}", cache=False)
    empty = np.zeros((0, 2), np.int32)
    for value in [np.float32(1.5), np.array(1.5, np.float32), 1.5, np.array(1.5, np.float32)]:
        doubled, same = exe(value, empty)
        assert doubled.shape == () and doubled == 3.0 and same.shape == (0, 2)


def test_sub_byte_bool_and_ml_dtypes_results_on_repeated_calls():
    types = ["i4", "ui4", "i1", "bf16", "f8E4M3FN"]
    args = ", ".join(f"%a{i}: tensor<4x{t}>" for i, t in enumerate(types))
    results = ", ".join(f"tensor<4x{t}>" for t in types)
    body = "".join(f"  %r{i} = stablehlo.{'or' if t == 'i1' else 'add'} %a{i}, %a{i} : "
                   f"tensor<4x{t}>\n" for i, t in enumerate(types))
    names = ", ".join(f"%r{i}" for i in range(len(types)))
    exe = xlac.compile(f"func.func @main({args}) -> ({results}) {{\n{body}"
                       f"  return {names} : {results}\n}}", cache=False)
    inputs = [np.array([1, -2, 7, -8], np.int8), np.array([1, 2, 9, 15], np.uint8),
              np.array([True, False, True, False]),
              np.array([0.5, -1, 3, 8], ml_dtypes.bfloat16),
              np.array([0.5, -1, 3, 8], ml_dtypes.float8_e4m3fn)]
    want = [np.array([2, -4, -2, 0], np.int8), np.array([2, 4, 2, 14], np.uint8), inputs[2],
            inputs[3] + inputs[3], inputs[4] + inputs[4]]
    for _ in range(3):
        for got, expected in zip(exe.run(*inputs), want):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kind", KINDS)
def test_threads_calling_one_executable_each_get_their_own_results(kinds, kind):
    exe, failures = kinds[kind], []
    start = threading.Barrier(4)

    def calls(thread: int):
        rows = 1 + thread % 3 if kind == "dynamic" else 2
        start.wait()
        for step in range(200):
            x, n = pair(rows, seed=thread * 1000 + step)
            outputs = exe.run(x, n)
            if not (np.array_equal(outputs[0], x + x) and np.array_equal(outputs[1], n + n)):
                failures.append((thread, step))

    threads = [threading.Thread(target=calls, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_pytree_of_a_jax_function_on_repeated_calls():
    jax = pytest.importorskip("jax")

    def affine(params, x, unused):
        return {"y": params["w"] * x + params["b"], "x": x}

    ones = np.ones(3, np.float32)
    lowered = jax.jit(affine).lower({"w": ones, "b": ones}, ones, ones)
    exe = xlac.compile(lowered, cache=False)
    for step in range(3):
        w, b, x = (np.full(3, step + k, np.float32) for k in range(3))
        out = exe({"w": w, "b": b}, x, ones)
        np.testing.assert_array_equal(out["y"], w * x + b)
        np.testing.assert_array_equal(out["x"], x)
    with pytest.raises(xlac.InputError, match="called with arguments of structure"):
        exe({"w": w}, x, ones)
    np.testing.assert_array_equal(exe(b, w, x)["y"], w * x + b)   # flat: the leaves, keys sorted


def test_a_function_taking_pointers_gets_each_arrays_data(kinds):
    seen = []
    exe = kinds["jit"].with_function(lambda pointers: seen.append(pointers))
    x, n = pair()
    outputs = exe.run(x, n)
    assert seen == [[x.ctypes.data, n.ctypes.data, *(o.ctypes.data for o in outputs)]]


def test_data_pointers_are_read_from_the_array_objects():
    base = np.arange(64, dtype=np.float64)
    arrays = [base, base[3:], base[5:9], np.array(2.0), np.zeros(0, np.int8), np.zeros((3, 0)),
              base.reshape(8, 8)[1:, 2:], np.ones(3, ml_dtypes.bfloat16)]
    assert data_pointers(arrays) == [array.ctypes.data for array in arrays]
