"""xla-hand-over-loop-carries: a while's recomputed vector carry is handed to the
next trip uncopied; results as the reference's (elementwise f32: the same bits)."""

from __future__ import annotations

import numpy as np
import pytest
from reference_checks import check_against_reference

import xlac
from conftest import runnable_levels

# fori_loop(0, 100, lambda i, c: c * 0.5 + 1.0, v): one vector carry the body recomputes
_FORI = """
func.func @main(%v: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %c = %v) : tensor<i32>, tensor<1024xf32>
    cond {
      %n = stablehlo.constant dense<100> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %h = stablehlo.constant dense<0.5> : tensor<1024xf32>
      %o = stablehlo.constant dense<1.0> : tensor<1024xf32>
      %m = stablehlo.multiply %c, %h : tensor<1024xf32>
      %a = stablehlo.add %m, %o : tensor<1024xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %a : tensor<i32>, tensor<1024xf32>
    }
  return %r#1 : tensor<1024xf32>
}
"""

# carries of ranks 1 and 2 swapped and aliased between trips (the 2-D one passes
# through unchanged, the two vectors trade places), a condition reading a vector
# carry, a carry read after the body computed its new value, a nested loop, an
# unused result
_TANGLED = """
func.func @main(%v: tensor<8xf32>, %w: tensor<8xf32>, %m: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:5 = stablehlo.while(%i = %c0, %a = %v, %b = %w, %k = %m, %u = %v)
      : tensor<i32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>
    cond {
      %n = stablehlo.constant dense<12> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %s = stablehlo.slice %a [0:1] : (tensor<8xf32>) -> tensor<1xf32>
      %e = stablehlo.reshape %s : (tensor<1xf32>) -> tensor<f32>
      %big = stablehlo.constant dense<1.0e6> : tensor<f32>
      %small = stablehlo.compare LT, %e, %big : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %go = stablehlo.and %lt, %small : tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %row = stablehlo.slice %k [1:2, 0:8] : (tensor<4x8xf32>) -> tensor<1x8xf32>
      %r8 = stablehlo.reshape %row : (tensor<1x8xf32>) -> tensor<8xf32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %inner:2 = stablehlo.while(%j = %z, %x = %a) : tensor<i32>, tensor<8xf32>
        cond {
          %three = stablehlo.constant dense<20> : tensor<i32>
          %lt2 = stablehlo.compare LT, %j, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt2 : tensor<i1>
        } do {
          %y = stablehlo.add %x, %r8 : tensor<8xf32>
          %one2 = stablehlo.constant dense<1> : tensor<i32>
          %j1 = stablehlo.add %j, %one2 : tensor<i32>
          stablehlo.return %j1, %y : tensor<i32>, tensor<8xf32>
        }
      %new = stablehlo.multiply %inner#1, %b : tensor<8xf32>
      %later = stablehlo.subtract %a, %new : tensor<8xf32>
      %un = stablehlo.add %u, %later : tensor<8xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %b, %later, %k, %un : tensor<i32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>
    }
  return %r#1, %r#2, %r#3 : tensor<8xf32>, tensor<8xf32>, tensor<4x8xf32>
}
"""


# lax.scan(lambda c, e: (c * 0.5 + e, c * c), zeros(256), x): the new carry is
# a 1 x 256 row reshaped to 256 (a view of the body's buffer), the ys written per row
_SCAN_ROWS = """
func.func @main(%x: tensor<20x256xf32>) -> (tensor<256xf32>, tensor<20x256xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %c_init = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<256xf32>
  %ys0 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<20x256xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %c = %c_init, %ys = %ys0) : tensor<i32>, tensor<256xf32>, tensor<20x256xf32>
    cond {
      %n = stablehlo.constant dense<20> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %row = stablehlo.dynamic_slice %x, %i, %z, sizes = [1, 256] : (tensor<20x256xf32>, tensor<i32>, tensor<i32>) -> tensor<1x256xf32>
      %e = stablehlo.reshape %row : (tensor<1x256xf32>) -> tensor<256xf32>
      %h = stablehlo.constant dense<0.5> : tensor<256xf32>
      %m = stablehlo.multiply %c, %h : tensor<256xf32>
      %next_c = stablehlo.add %m, %e : tensor<256xf32>
      %t = stablehlo.multiply %c, %c : tensor<256xf32>
      %t2 = stablehlo.reshape %t : (tensor<256xf32>) -> tensor<1x256xf32>
      %w = stablehlo.dynamic_update_slice %ys, %t2, %i, %z : (tensor<20x256xf32>, tensor<1x256xf32>, tensor<i32>, tensor<i32>) -> tensor<20x256xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %next_c, %w : tensor<i32>, tensor<256xf32>, tensor<20x256xf32>
    }
  return %r#1, %r#2 : tensor<256xf32>, tensor<20x256xf32>
}
"""

@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_a_recomputed_vector_carry_as_the_reference(cpu):
    v = np.random.default_rng(1).standard_normal(1024, dtype=np.float32)
    check_against_reference(_FORI, [v], cpu)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_swapped_nested_and_unused_carries_as_the_reference(cpu):
    rng = np.random.default_rng(2)
    args = [rng.standard_normal(8, dtype=np.float32), rng.standard_normal(8, dtype=np.float32),
            rng.standard_normal((4, 8), dtype=np.float32)]
    check_against_reference(_TANGLED, args, cpu)


def test_the_condition_copies_no_carry():
    text = xlac.compile(_FORI, cpu="x86-64-v3", cache=False).as_text("bufferized")
    main = text.split("func.func public @main", 1)[1]
    before = main.split("scf.while", 1)[1].split("} do {", 1)[0]
    assert "memref.copy" not in before and "memref.alloc" not in before


def test_the_nested_loops_keep_their_loops_and_copy_no_carry():
    text = xlac.compile(_TANGLED, cpu="x86-64-v3", cache=False).as_text("bufferized")
    main = text.split("func.func public @main", 1)[1]
    assert main.count("scf.while") == 2


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_a_scan_of_rows_as_the_reference(cpu):
    x = np.random.default_rng(4).standard_normal((20, 256), dtype=np.float32)
    check_against_reference(_SCAN_ROWS, [x], cpu)


def test_the_scan_hands_its_row_over():
    text = xlac.compile(_SCAN_ROWS, cpu="x86-64-v3", cache=False).as_text("bufferized")
    before = text.split("func.func public @main", 1)[1].split("scf.while", 1)[1].split("} do {", 1)[0]
    assert "memref.copy" not in before and "memref.alloc" not in before



@pytest.mark.parametrize("trips", [0, 1, 9])
def test_a_count_of_trips_from_the_caller_as_the_reference(trips):
    """No trip: the result is the init buffer itself, freed once."""
    text = _FORI.replace("%v: tensor<1024xf32>)", "%v: tensor<1024xf32>, %n: tensor<i32>)") \
        .replace("      %n = stablehlo.constant dense<100> : tensor<i32>\n", "")
    v = np.random.default_rng(6).standard_normal(1024, dtype=np.float32)
    check_against_reference(text, [v, np.int32(trips)], "x86-64-v3")
