"""``kernel_reads.outside_reads``: the reads of values made outside a kernel,
found by a set of the values made inside (``_values_made_in``) rather than by
asking each operand for its owner."""

from __future__ import annotations

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.passes.base import nested_ops
from xlac.passes.cpu.kernel_reads import _values_made_in, outside_reads

PROGRAM = b"""
func.func @main(%a: memref<8xf32>, %out: memref<8xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.mulf %x, %s : f32
    scf.for %j = %c0 to %c1 step %c1 {
      %z = arith.addf %y, %x : f32
      memref.store %z, %out[%j] : memref<8xf32>
    }
  }
  return
}
"""


def _loop():
    """The module (kept alive while its ops are read) and its outer loop."""
    module = parse_module(new_context(), PROGRAM, "t.mlir")
    main = module.body.operations[0].operation
    return module, next(op.operation for op in main.regions[0].blocks[0].operations
                        if op.operation.name == "scf.for")


def test_values_made_in_a_loop_are_its_ops_results_and_block_arguments():
    _module, loop = _loop()
    nested = nested_ops(loop)
    made = _values_made_in(loop, nested)
    inner = next(op for op in nested if op.name == "scf.for")
    expected = {*loop.results, *loop.regions[0].blocks[0].arguments, *inner.regions[0].blocks[0].arguments}
    for op in nested:
        expected.update(op.results)
    assert made == expected
    assert not any(value in made for value in loop.operands)       # the bounds come from outside


def test_outside_reads_are_the_reads_of_values_made_outside():
    _module, loop = _loop()
    reads = outside_reads(loop)
    assert [index for _, index, _ in reads[:3]] == [0, 1, 2]          # the loop's own bounds first
    inside = [(reader.name, index) for reader, index, _ in reads[3:]]
    # %a and %s, then %c0/%c1 (the inner loop's bounds) and %out: in pre-order
    assert inside == [("memref.load", 0), ("arith.mulf", 1), ("scf.for", 0), ("scf.for", 1),
                      ("scf.for", 2), ("memref.store", 1)]
