"""Loops and branches on the device: while, if, case, scan and fori_loop whose
predicate or index the device computes run on cuda (the host reads it back
through pinned memory each time; a known trip count reads nothing back),
checked through the fake driver and the SIMT emulator against the reference
interpreter."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from xlac.reference.server import shared_server  # noqa: E402
from xlac.targets.cuda.control_flow import Branch, Loop, ReadBack, walk_steps  # noqa: E402
from xlac_emulator.fake_cuda import FakeDriver  # noqa: E402

# counts to %n, squaring %x: the predicate depends on an input
WHILE = """
func.func @main(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      %v1 = stablehlo.multiply %v, %v : tensor<4xf32>
      stablehlo.return %i1, %v1 : tensor<i32>, tensor<4xf32>
    }
  return %r#1, %r#0 : tensor<4xf32>, tensor<i32>
}"""

# (a, b) <- (b, a + b) and (c, d) <- (d, c) while the sum of a is below %limit:
# carried values swap places every iteration; the predicate is a reduction
SWAP = """
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<3xi32>, %d: tensor<3xi32>,
                %limit: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<3xi32>, tensor<3xi32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r:4 = stablehlo.while(%x = %a, %y = %b, %u = %c, %w = %d)
      : tensor<8xf32>, tensor<8xf32>, tensor<3xi32>, tensor<3xi32>
    cond {
      %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]
          : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
      %p = stablehlo.compare LT, %s, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %z = stablehlo.add %x, %y : tensor<8xf32>
      stablehlo.return %y, %z, %w, %u : tensor<8xf32>, tensor<8xf32>, tensor<3xi32>, tensor<3xi32>
    }
  return %r#0, %r#1, %r#2, %r#3 : tensor<8xf32>, tensor<8xf32>, tensor<3xi32>, tensor<3xi32>
}"""

# a matmul in the body (the shared-memory matmul kernel), an unsigned counter
MATMUL_LOOP = """
func.func @main(%h: tensor<16x32xf32>, %w: tensor<32x32xf32>, %n: tensor<ui32>) -> tensor<16x32xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<ui32>
  %c1 = stablehlo.constant dense<1> : tensor<ui32>
  %r:2 = stablehlo.while(%i = %c0, %x = %h) : tensor<ui32>, tensor<16x32xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]
          : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
      %t = stablehlo.tanh %d : tensor<16x32xf32>
      %i1 = stablehlo.add %i, %c1 : tensor<ui32>
      stablehlo.return %i1, %t : tensor<ui32>, tensor<16x32xf32>
    }
  return %r#1 : tensor<16x32xf32>
}"""

# a loop started from a slice of a kernel's result (a random key split off a pair
# of keys, the other used too): carried as a copy of its own, not a view
SLICED_CARRY = """
func.func @main(%keys: tensor<2x2xui32>, %n: tensor<i32>) -> (tensor<2xui32>, tensor<1x2xui32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<2xui32>
  %five = stablehlo.constant dense<5> : tensor<2x2xui32>
  %all = stablehlo.multiply %keys, %five : tensor<2x2xui32>
  %s = stablehlo.slice %all [1:2, 0:2] : (tensor<2x2xui32>) -> tensor<1x2xui32>
  %t = stablehlo.slice %all [0:1, 0:2] : (tensor<2x2xui32>) -> tensor<1x2xui32>
  %k = stablehlo.reshape %s : (tensor<1x2xui32>) -> tensor<2xui32>
  %r:2 = stablehlo.while(%i = %c0, %key = %k) : tensor<i32>, tensor<2xui32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %m = stablehlo.multiply %key, %three : tensor<2xui32>
      %x = stablehlo.xor %m, %key : tensor<2xui32>
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i1, %x : tensor<i32>, tensor<2xui32>
    }
  return %r#1, %t : tensor<2xui32>, tensor<1x2xui32>
}"""

# an inner while in the outer one's body: %m inner steps of x <- 2x + 1 per outer step
NESTED = """
func.func @main(%x: tensor<5xf32>, %n: tensor<i32>, %m: tensor<i32>) -> tensor<5xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2.0> : tensor<5xf32>
  %one = stablehlo.constant dense<1.0> : tensor<5xf32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<5xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %s:2 = stablehlo.while(%j = %c0, %w = %v) : tensor<i32>, tensor<5xf32>
        cond {
          %q = stablehlo.compare LT, %j, %m : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %q : tensor<i1>
        } do {
          %j1 = stablehlo.add %j, %c1 : tensor<i32>
          %t = stablehlo.multiply %w, %two : tensor<5xf32>
          %w1 = stablehlo.add %t, %one : tensor<5xf32>
          stablehlo.return %j1, %w1 : tensor<i32>, tensor<5xf32>
        }
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i1, %s#1 : tensor<i32>, tensor<5xf32>
    }
  return %r#1 : tensor<5xf32>
}"""

# a data-dependent loop in one branch of an if, a plain kernel in the other
LOOP_IN_BRANCH = """
func.func @main(%x: tensor<6xf32>, %n: tensor<i32>) -> tensor<6xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %p = stablehlo.compare GT, %n, %c0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = "stablehlo.if"(%p) ({
    %w:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<6xf32>
      cond {
        %q = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %q : tensor<i1>
      } do {
        %i1 = stablehlo.add %i, %c1 : tensor<i32>
        %v1 = stablehlo.sine %v : tensor<6xf32>
        stablehlo.return %i1, %v1 : tensor<i32>, tensor<6xf32>
      }
    stablehlo.return %w#1 : tensor<6xf32>
  }, {
    %y = stablehlo.negate %x : tensor<6xf32>
    stablehlo.return %y : tensor<6xf32>
  }) : (tensor<i1>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}"""

# three branches; an index out of range (negative or too large) takes the last
CASE = """
func.func @main(%k: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.case"(%k) ({
    %a = stablehlo.exponential %x : tensor<4xf32>
    stablehlo.return %a : tensor<4xf32>
  }, {
    %b = stablehlo.negate %x : tensor<4xf32>
    stablehlo.return %b : tensor<4xf32>
  }, {
    %c = stablehlo.multiply %x, %x : tensor<4xf32>
    stablehlo.return %c : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}"""

# fori_loop(0, 12) (more trips than xla-unroll-short-loops unrolls): the trip
# count is known, the host reads nothing back
FORI = """
func.func @main(%x: tensor<3x4xf32>) -> (tensor<i32>, tensor<3x4xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c12 = stablehlo.constant dense<12> : tensor<i32>
  %half = stablehlo.constant dense<0.5> : tensor<3x4xf32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<3x4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %c12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      %t = stablehlo.tanh %v : tensor<3x4xf32>
      %v1 = stablehlo.add %t, %half : tensor<3x4xf32>
      stablehlo.return %i1, %v1 : tensor<i32>, tensor<3x4xf32>
    }
  return %r#0, %r#1 : tensor<i32>, tensor<3x4xf32>
}"""

# a counted loop whose carries swap: (u, w) <- (w + 1, u), 12 times (the body reads the
# loop's state buffers themselves, no copy made by bufferization between)
FORI_SWAP = """
func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c12 = stablehlo.constant dense<12> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<4xi32>
  %r:3 = stablehlo.while(%i = %c0, %u = %a, %w = %b) : tensor<i32>, tensor<4xi32>, tensor<4xi32>
    cond {
      %p = stablehlo.compare LT, %i, %c12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      %w1 = stablehlo.add %w, %one : tensor<4xi32>
      stablehlo.return %i1, %w1, %u : tensor<i32>, tensor<4xi32>, tensor<4xi32>
    }
  return %r#1, %r#2 : tensor<4xi32>, tensor<4xi32>
}"""

# lax.scan: a carry and a stacked output written at the counter (a dynamic_update_slice)
SCAN = """
func.func @main(%xs: tensor<10x3xf32>, %init: tensor<3xf32>) -> (tensor<3xf32>, tensor<10x3xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c10 = stablehlo.constant dense<10> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<10x3xf32>
  %r:3 = stablehlo.while(%i = %c0, %carry = %init, %ys = %z) : tensor<i32>, tensor<3xf32>, tensor<10x3xf32>
    cond {
      %p = stablehlo.compare LT, %i, %c10, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %row = stablehlo.dynamic_slice %xs, %i, %c0, sizes = [1, 3] : (tensor<10x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
      %x = stablehlo.reshape %row : (tensor<1x3xf32>) -> tensor<3xf32>
      %next = stablehlo.add %carry, %x : tensor<3xf32>
      %y = stablehlo.reshape %next : (tensor<3xf32>) -> tensor<1x3xf32>
      %ys1 = stablehlo.dynamic_update_slice %ys, %y, %i, %c0 : (tensor<10x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<10x3xf32>
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      stablehlo.return %i1, %next, %ys1 : tensor<i32>, tensor<3xf32>, tensor<10x3xf32>
    }
  return %r#1, %r#2 : tensor<3xf32>, tensor<10x3xf32>
}"""

_RNG = np.random.default_rng(7)
_X4 = np.array([1.1, 0.9, 1.0, -1.05], np.float32)
CASES = {
    "while, 3 trips": (WHILE, [_X4, np.int32(3)]),
    "while, no trip": (WHILE, [_X4, np.int32(0)]),
    "swapped carries": (SWAP, [np.full(8, 0.25, np.float32), np.linspace(0, 1, 8, dtype=np.float32),
                               np.array([1, 2, 3], np.int32), np.array([7, 8, 9], np.int32),
                               np.float32(40.0)]),
    "swapped carries, no trip": (SWAP, [np.ones(8, np.float32), np.ones(8, np.float32),
                                        np.array([1, 2, 3], np.int32), np.array([7, 8, 9], np.int32),
                                        np.float32(1.0)]),
    "matmul in the body": (MATMUL_LOOP, [_RNG.standard_normal((16, 32)).astype(np.float32),
                                         (_RNG.standard_normal((32, 32)) / 4).astype(np.float32),
                                         np.uint32(3)]),
    "sliced carry": (SLICED_CARRY, [np.array([[1, 2], [3, 4]], np.uint32), np.int32(5)]),
    "nested whiles": (NESTED, [np.linspace(-1, 1, 5, dtype=np.float32), np.int32(3), np.int32(2)]),
    "nested, inner no trip": (NESTED, [np.linspace(-1, 1, 5, dtype=np.float32), np.int32(2), np.int32(0)]),
    "loop in taken branch": (LOOP_IN_BRANCH, [np.linspace(0, 2, 6, dtype=np.float32), np.int32(4)]),
    "other branch": (LOOP_IN_BRANCH, [np.linspace(0, 2, 6, dtype=np.float32), np.int32(-1)]),
    **{f"case {k}": (CASE, [np.int32(k), _X4]) for k in (-3, 0, 1, 2, 9)},
    "fori_loop, swapped carries": (FORI_SWAP, [np.arange(4, dtype=np.int32),
                                               np.arange(10, 14, dtype=np.int32)]),
    "fori_loop": (FORI, [_RNG.standard_normal((3, 4)).astype(np.float32)]),
    "scan": (SCAN, [_RNG.standard_normal((10, 3)).astype(np.float32), np.ones(3, np.float32)]),
}


def _emulated(exe, args):
    """The results on the fake driver with the kernels emulated, and the driver."""
    driver = FakeDriver(execute=True, kernels=exe.function.kernels)
    function = exe.function.with_driver(driver)
    try:
        return exe.with_function(function).run(*args), driver
    finally:
        function.close()


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_on_the_device_matches_the_interpreter(name):
    text, args = CASES[name]
    got, _ = _emulated(xlac.compile(text, target="cuda"), args)
    want = shared_server().run(text.encode(), [np.asarray(a) for a in args])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def test_a_data_dependent_loop_reads_its_predicate_back_every_iteration():
    exe = xlac.compile(WHILE, target="cuda")
    (loop,) = [s for s in exe.function.steps if isinstance(s, Loop)]
    assert loop.trips == -1 and isinstance(loop.before[-1 - len(loop.forwarded) * 2], ReadBack)
    _, driver = _emulated(exe, [_X4, np.int32(3)])
    assert driver.read_backs == 4                          # 3 trips and the test that ends them
    assert not getattr(driver, "graphs", [])               # no CUDA graph around host control flow


@pytest.mark.parametrize("text", [FORI, SCAN], ids=["fori_loop", "scan"])
def test_a_known_trip_count_reads_nothing_back(text):
    exe = xlac.compile(text, target="cuda")
    loops = [s for s in walk_steps(exe.function.steps) if isinstance(s, Loop)]
    assert [loop.trips for loop in loops] == [12 if text is FORI else 10]
    assert not any(isinstance(s, ReadBack) for s in walk_steps(exe.function.steps))
    _, driver = _emulated(exe, CASES["fori_loop" if text is FORI else "scan"][1])
    assert driver.read_backs == 0


def test_a_case_is_one_branch_on_the_read_back_index():
    exe = xlac.compile(CASE, target="cuda")
    (read, branch) = [s for s in exe.function.steps if isinstance(s, (ReadBack, Branch))]
    assert read.element == "i32" and branch.selector == read.value and branch.keys == (0, 1)


def test_control_flow_survives_serialization():
    exe = xlac.compile(NESTED, target="cuda")
    again = xlac.deserialize(exe.serialize(), target="cuda")
    assert again.function.steps == exe.function.steps
    args = CASES["nested whiles"][1]
    np.testing.assert_array_equal(_emulated(again, args)[0][0], _emulated(exe, args)[0][0])


@pytest.mark.heavy                       # ~9 s on 2 cores: the emulator runs 8 N-body steps
def test_the_nbody_scan_runs_on_the_device_as_on_the_cpu():
    """jax_nbody: 8 velocity-Verlet steps in a lax.scan whose counter the device keeps
    (the program the GPU run found refused), emulated, against the cpu target."""
    from conftest import require_shared
    from xlac_emulator.simt import run_emulated
    text = require_shared("models", "jax_nbody.mlir").read_text()
    stored = np.load(require_shared("models", "jax_nbody.inputs.npz"))
    args = [stored[name] for name in stored.files]
    exe = xlac.compile(text, target="cuda")
    assert any(isinstance(step, Loop) for step in walk_steps(exe.function.steps))
    got, want = run_emulated(exe, *args), xlac.compile(text)(*args)
    for device, host in zip(got, want):
        np.testing.assert_allclose(device, host, rtol=2e-5, atol=1e-5 * np.max(np.abs(host)))
