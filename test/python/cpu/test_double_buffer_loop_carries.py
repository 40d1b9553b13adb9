"""xla-double-buffer-loop-carries: a while's recomputed vector carry alternates
between two buffers allocated before the loop; results as the reference's
(elementwise f32: the same bits)."""

from __future__ import annotations

import numpy as np
import pytest
from reference_checks import check_against_reference

import xlac
from conftest import runnable_levels

# fori_loop(0, 1024, lambda i, c: c * 0.999 + 0.001 * i, v) as jax writes it: a
# small body inlined in the loop, its buffer hoisted out by buffer-loop-hoisting
_FORI = """
func.func public @main(%v: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %c = %v) : tensor<i32>, tensor<64xf32>
    cond {
      %n = stablehlo.constant dense<1024> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %h = stablehlo.constant dense<0.999> : tensor<64xf32>
      %m = stablehlo.multiply %c, %h : tensor<64xf32>
      %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
      %k = stablehlo.constant dense<0.001> : tensor<f32>
      %s = stablehlo.multiply %k, %f : tensor<f32>
      %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<64xf32>
      %a = stablehlo.add %m, %b : tensor<64xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %a : tensor<i32>, tensor<64xf32>
    }
  return %r#1 : tensor<64xf32>
}
"""

# an inner loop in an outer one whose carry keeps the inner loop's result of the
# trip before (%p): were the inner loop's two buffers hoisted out of the outer
# loop, the next inner loop would write over %p while it is still read
_NESTED = """
func.func public @main(%v: tensor<16xf32>, %n: tensor<i32>, %inner_n: tensor<i32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %c = %v, %p = %v) : tensor<i32>, tensor<16xf32>, tensor<16xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %z = stablehlo.constant dense<0> : tensor<i32>
      %inner:2 = stablehlo.while(%j = %z, %x = %c) : tensor<i32>, tensor<16xf32>
        cond {
          %lt2 = stablehlo.compare LT, %j, %inner_n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt2 : tensor<i1>
        } do {
          %h = stablehlo.constant dense<0.5> : tensor<16xf32>
          %o = stablehlo.constant dense<1.0> : tensor<16xf32>
          %m = stablehlo.multiply %x, %h : tensor<16xf32>
          %y = stablehlo.add %m, %o : tensor<16xf32>
          %one2 = stablehlo.constant dense<1> : tensor<i32>
          %j1 = stablehlo.add %j, %one2 : tensor<i32>
          stablehlo.return %j1, %y : tensor<i32>, tensor<16xf32>
        }
      %next_c = stablehlo.subtract %inner#1, %p : tensor<16xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %next_c, %inner#1 : tensor<i32>, tensor<16xf32>, tensor<16xf32>
    }
  return %r#1, %r#2 : tensor<16xf32>, tensor<16xf32>
}
"""

# two carries trading places every trip beside one recomputed: the recomputed
# one alone alternates; the swapped ones keep their buffers
_SWAPPED = """
func.func public @main(%v: tensor<8xf32>, %w: tensor<8xf32>, %n: tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%i = %c0, %a = %v, %b = %w, %s = %v) : tensor<i32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %t = stablehlo.multiply %a, %b : tensor<8xf32>
      %u = stablehlo.add %s, %t : tensor<8xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %b, %a, %u : tensor<i32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
  return %r#1, %r#2, %r#3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
"""


def _outer_loop(text: str) -> str:
    """The bufferized text of main's first scf.while, both regions."""
    lines = text.split("func.func public @main", 1)[1].splitlines()
    start = next(n for n, line in enumerate(lines) if "scf.while" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(n for n in range(start + 1, len(lines)) if lines[n] == " " * indent + "}")
    return "\n".join(lines[start:end + 1])


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_a_small_inlined_body_as_the_reference(cpu):
    v = np.random.default_rng(1).standard_normal(64, dtype=np.float32)
    check_against_reference(_FORI, [v], cpu)


def test_a_small_inlined_body_allocates_copies_and_frees_nothing_per_trip():
    loop = _outer_loop(xlac.compile(_FORI, cpu="x86-64-v3", cache=False).as_text("bufferized"))
    assert "memref.alloc" not in loop and "memref.copy" not in loop
    assert "arith.select" in loop


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_an_inner_loop_whose_result_outlives_its_outer_trip_as_the_reference(cpu):
    v = np.random.default_rng(2).standard_normal(16, dtype=np.float32)
    check_against_reference(_NESTED, [v, np.int32(5), np.int32(3)], cpu)


@pytest.mark.parametrize("cpu", runnable_levels("x86-64-v3", "x86-64-v4"))
def test_swapped_carries_beside_a_recomputed_one_as_the_reference(cpu):
    rng = np.random.default_rng(3)
    check_against_reference(_SWAPPED, [rng.standard_normal(8, dtype=np.float32),
                                        rng.standard_normal(8, dtype=np.float32), np.int32(7)], cpu)


@pytest.mark.parametrize("trips", [0, 1, 2, 9])
def test_a_count_of_trips_from_the_caller_as_the_reference(trips):
    """No trip: the result is the init buffer; an odd or even count ends in either buffer."""
    text = _FORI.replace("%v: tensor<64xf32>)", "%v: tensor<64xf32>, %n: tensor<i32>)") \
        .replace("      %n = stablehlo.constant dense<1024> : tensor<i32>\n", "")
    v = np.random.default_rng(6).standard_normal(64, dtype=np.float32)
    check_against_reference(text, [v, np.int32(trips)], "x86-64-v3")


# a continued fraction's shape (jax's betainc, igamma): a flag the condition
# alone reads rides in the before region only, so the condition's positions are
# one behind the carries' -- the carries after it still alternate
_FLAGGED = """
func.func public @main(%v: tensor<64xf32>, %n: tensor<i32>) -> tensor<64xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %t = stablehlo.constant dense<true> : tensor<i1>
  %r:3 = stablehlo.while(%i = %c0, %go = %t, %c = %v) : tensor<i32>, tensor<i1>, tensor<64xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %p = stablehlo.and %lt, %go : tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %h = stablehlo.constant dense<0.5> : tensor<64xf32>
      %o = stablehlo.constant dense<1.0> : tensor<64xf32>
      %m = stablehlo.multiply %c, %h : tensor<64xf32>
      %y = stablehlo.add %m, %o : tensor<64xf32>
      %d = stablehlo.subtract %y, %c : tensor<64xf32>
      %e = stablehlo.abs %d : tensor<64xf32>
      %eps = stablehlo.constant dense<1.0e-3> : tensor<64xf32>
      %big = stablehlo.compare GT, %e, %eps, FLOAT : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xi1>
      %f = stablehlo.constant dense<false> : tensor<i1>
      %any = stablehlo.reduce(%big init: %f) applies stablehlo.or across dimensions = [0] : (tensor<64xi1>, tensor<i1>) -> tensor<i1>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %any, %y : tensor<i32>, tensor<i1>, tensor<64xf32>
    }
  return %r#2 : tensor<64xf32>
}
"""


def test_a_flag_only_the_condition_reads_leaves_no_copy_per_trip():
    loop = _outer_loop(xlac.compile(_FLAGGED, cpu="x86-64-v3", cache=False).as_text("bufferized"))
    assert "memref.copy %arg" not in loop and "arith.select" in loop


@pytest.mark.parametrize("trips", [0, 1, 2, 100])
def test_a_flag_only_the_condition_reads_as_the_reference(trips):
    v = np.random.default_rng(7).standard_normal(64, dtype=np.float32) * 10
    check_against_reference(_FLAGGED, [v, np.int32(trips)], "x86-64-v3")
