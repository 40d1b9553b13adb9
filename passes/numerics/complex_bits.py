"""c64 values as i64 for xla-complex-as-pairs, and what tells complex values apart.

A module that only moves whole c64 numbers and selects or gathers them
(`jnp.where`, `t[i]`, with transposes, broadcasts, reshapes, slices,
concatenates, calls) gets i64 for c64, the same 8 bytes: as pairs such a
select's or gather's vectors run along the 2 parts (no faster than the
complex loop), as i64 they are the integer schedules' (Zen 4: select 0.2 ->
0.1 ms, transposed 0.75-1.0 -> 0.2, a gather of rows 0.1 -> 0.05). c128 has
no 16-byte lanes: it stays complex there.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import nested_ops


def is_complex(type_: ir.Type) -> bool:
    return isinstance(type_, ir.RankedTensorType) and \
        isinstance(ir.RankedTensorType(type_).element_type, ir.ComplexType)


def touches_complex(op: ir.Operation) -> bool:
    return any(is_complex(v.type) for v in (*op.operands, *op.results))


def moves_c64_bits(funcs: list[ir.Operation]) -> bool:
    """Whether every function of ``funcs`` only moves whole c64 numbers and
    one of them selects or gathers them: then all go as i64 (retype_as_bits)."""
    return all(_moves_c64_bits(f) for f in funcs) and _picks_numbers(funcs)


# ops that only move whole c64 numbers, never their parts: the same op on
# i64 (the number's 8 bytes, in memory as they were)
_BIT_MOVES = ("stablehlo.select", "stablehlo.gather", "stablehlo.transpose",
              "stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.slice",
              "stablehlo.concatenate", "func.call", "func.return")


def _moves_c64_bits(func: ir.Operation) -> bool:
    """Whether every op of ``func`` on complex values moves whole c64 numbers
    (a select, a gather, data movement) in its body. Such a module has no
    pair form worth it (as pairs a select's or gather's vectors run along the
    2 parts, the complex loop's speed or slower) but runs as i64: Zen 4, a
    512x1024 select 0.46 -> 0.22 ms, a gather of 256 rows 0.25 -> 0.14 ms."""
    body = func.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    values = [*ftype.inputs, *ftype.results]
    for op in nested_ops(func):
        if touches_complex(op):
            if op.block != body or op.name not in _BIT_MOVES:
                return False
            values += [v.type for v in (*op.operands, *op.results)]
    return all(_is_c64(t) for t in values if is_complex(t))


def _picks_numbers(funcs: list[ir.Operation]) -> bool:
    """Whether ``funcs`` select or gather complex values: the moves measured
    faster as i64. A module of c64 transposes and broadcasts alone keeps the
    forms measured for them (pairs, or complex: _moves_c64_minor_dim)."""
    return any(op.name in ("stablehlo.select", "stablehlo.gather") and touches_complex(op)
               for f in funcs for op in nested_ops(f))


def _is_c64(type_: ir.Type) -> bool:
    return ir.ComplexType(ir.RankedTensorType(type_).element_type).element_type == ir.F32Type.get()


def _bits_of(type_: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(ir.RankedTensorType(type_).shape, ir.IntegerType.get_signless(64))


def retype_as_bits(func: ir.Operation) -> None:
    """Every c64 value of ``func`` (arguments, results of its moves) as i64 in
    place: the ops take any element type, so nothing is rebuilt."""
    entry = func.regions[0].blocks[0]
    for value in [*entry.arguments,
                  *(r for op in nested_ops(func) for r in op.results)]:
        if is_complex(value.type):
            value.set_type(_bits_of(value.type))
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    retyped = ir.FunctionType.get([a.type for a in entry.arguments],
                                  [_bits_of(t) if is_complex(t) else t for t in ftype.results])
    func.attributes["function_type"] = ir.TypeAttr.get(retyped)
