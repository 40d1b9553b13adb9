"""captured_values: the values an op's nested ops read from outside it, each
once, in the order first read; values made inside (results of nested ops,
arguments of its blocks and of nested blocks) are not among them."""

from __future__ import annotations

from xlac.context import new_context
from xlac.mlir import ir
from xlac.passes.base import nested_ops
from xlac.passes.helper_calls import captured_values

PROGRAM = """
func.func @f(%a: memref<8xf32>, %b: memref<8xf32>, %s: f32, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %y = arith.addf %x, %s : f32
    scf.for %j = %c0 to %i step %c1 {
      %z = arith.mulf %y, %s : f32
      memref.store %z, %a[%j] : memref<8xf32>
    }
    memref.store %y, %a[%i] : memref<8xf32>
  }
  return
}
"""


def _loop_and_function():
    context = new_context()
    module = ir.Module.parse(PROGRAM, context)
    function = module.body.operations[0].operation
    loop = next(op for op in nested_ops(function) if op.name == "scf.for")
    return module, function, loop


def _names(values, function) -> list[str]:
    """Each value as the function's printer names it (%arg0, %c0, ...)."""
    state = ir.AsmState(function)
    return [v.get_name(state) for v in values]


def test_outside_values_once_in_first_read_order():
    module, function, loop = _loop_and_function()
    # the outer loop's bounds are its own operands, not read inside it
    assert _names(captured_values(loop), function) == ["%arg1", "%arg2", "%c0", "%c1", "%arg0"]
    assert module.operation.verify()


def test_a_walk_passed_in_gives_the_same_values():
    module, function, loop = _loop_and_function()
    assert captured_values(loop, nested_ops(loop)) == captured_values(loop)


def test_the_inner_loop_captures_the_outer_loops_values():
    module, function, loop = _loop_and_function()
    inner = next(op for op in nested_ops(loop) if op.name == "scf.for")
    # %y and %s read in its body; the index %j is its own block's argument
    names = _names(captured_values(inner), function)
    assert names == ["%1", "%arg2", "%arg0"]
