"""A repeated kernel's calls left by xla-inline-schedule-calls for
xla-outline-kernels (passes/cpu/kernel_repeats.py) give the module that a
copy per call gives: the same kernels, calls, arguments and locations (the
copies' constants that only twins of a kernel read, left unread in the caller,
are gone after the canonicalize that follows)."""

from __future__ import annotations

import pytest

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.pipeline.pass_manager import run_passes

# @xla_scheduled_0 called for buffers, for one buffer twice (one argument, not
# two), for views (copied in) at two offsets, after a loop whose result a later
# loop reads (the call joins that kernel), and inside a loop (copied there)
PROGRAM = """
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>, %out: memref<8xf32>, %w: memref<16xf32>) {
  %t = memref.alloc() : memref<8xf32>
  call @xla_scheduled_0(%t, %a) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":1:1)
  call @xla_scheduled_0(%out, %b) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":2:1)
  call @xla_scheduled_0(%t, %t) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":3:1)
  %lo = memref.subview %w[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  %hi = memref.subview %w[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  %lo2 = memref.cast %lo : memref<8xf32, strided<[1]>> to memref<8xf32>
  call @xla_scheduled_0(%lo2, %a) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":4:1)
  call @xla_scheduled_1(%hi, %b) : (memref<8xf32, strided<[1], offset: 8>>, memref<8xf32>) -> () loc("m.py":5:1)
  call @xla_scheduled_1(%hi, %a) : (memref<8xf32, strided<[1], offset: 8>>, memref<8xf32>) -> () loc("m.py":6:1)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %a[%i] : memref<8xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  call @xla_scheduled_0(%out, %a) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":7:1)
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %s, %out[%i] : memref<8xf32>
  }
  call @xla_scheduled_0(%t, %b) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":8:1)
  scf.for %i = %c0 to %c1 step %c1 {
    func.call @xla_scheduled_0(%t, %a) : (memref<8xf32>, memref<8xf32>) -> () loc("m.py":9:1)
  }
  memref.dealloc %t : memref<8xf32>
  return
}

func.func private @xla_scheduled_0(%dest: memref<8xf32>, %src: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %src[%i] : memref<8xf32>
    %y = math.exp %x : f32 loc("kernel.py":2:5)
    memref.store %y, %dest[%i] : memref<8xf32>
  }
  return
}

func.func private @xla_scheduled_1(%dest: memref<8xf32, strided<[1], offset: 8>>, %src: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %src[%i] : memref<8xf32>
    memref.store %x, %dest[%i] : memref<8xf32, strided<[1], offset: 8>>
  }
  return
}
"""


def _outlined(leave: bool, dedupe: bool) -> str:
    module = parse_module(new_context(), PROGRAM.encode(), "m.mlir")
    inline = "xla-inline-schedule-calls{leave-repeats=true}" if leave else "xla-inline-schedule-calls"
    # canonicalize (as the llvm stage next): the copies' constants the twins left unread go
    run_passes(module, [inline, "inline{default-pipeline=}", f"xla-outline-kernels{{dedupe={str(dedupe).lower()}}}",
                        "canonicalize"])
    return module.operation.get_asm(enable_debug_info=True)


@pytest.mark.parametrize("dedupe", [True, False])
def test_repeats_left_to_outlining_make_the_same_module(dedupe):
    assert _outlined(True, dedupe) == _outlined(False, dedupe)


def test_repeats_are_left_and_their_functions_go():
    module = parse_module(new_context(), PROGRAM.encode(), "m.mlir")
    run_passes(module, ["xla-inline-schedule-calls{leave-repeats=true}"])
    text = str(module)
    assert text.count("xla.repeat") == 8           # the call inside the loop is copied in
    run_passes(module, ["inline{default-pipeline=}", "xla-outline-kernels"])
    text = str(module)
    assert "xla_scheduled" not in text and "xla.repeat" not in text
    # kinds: (t, a) = (out, b) = (t, b); (t, t); the view; the strided view; the
    # call joining the open loop's kernel, and the one inside the loop
    assert text.count("func.func private @xla_kernel_") == 6
