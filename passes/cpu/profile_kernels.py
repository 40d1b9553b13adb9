"""xla-profile-kernels: a clock call around every kernel of the entry function."""

from __future__ import annotations

from xlac.errors import format_location
from xlac.mlir import ir
from xlac.passes.base import ModulePass, public_definitions, symbol_name

ENTER, EXIT = "xlac_profile_enter", "xlac_profile_exit"
KERNELS_ATTR = "xla.profile_kernels"          # the kernels' names, by id
_PASSIVE = ("memref.alloc", "memref.alloca", "memref.dealloc", "memref.subview",
            "memref.expand_shape", "memref.collapse_shape", "memref.cast",
            "memref.reinterpret_cast", "memref.get_global", "arith.constant", "func.return",
            "ub.poison", "memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index")


class ProfileKernels(ModulePass):
    """Wrap each op of a public function's body that does work (a loop nest, a
    parallel region, a copy, a call) in calls of `@xlac_profile_enter(id)` and
    `@xlac_profile_exit(id)`, and list the kernels' names (source location and
    op) in the module attribute `xla.profile_kernels`.

    Why: the compiled program is one function; to see which kernel takes the
    time (`exe.profile()`, `xla-run --profile`), the runtime times the calls
    (the JIT resolves the two symbols to its clock). Runs after the parallel
    loops are OpenMP regions, so a region is timed whole, on the calling thread.
    Example: `omp.parallel {...}` becomes `call @xlac_profile_enter(%c3)`,
    `omp.parallel {...}`, `call @xlac_profile_exit(%c3)`.
    """

    name = "xla-profile-kernels"

    def run(self, module: ir.Operation) -> None:
        names: list[str] = []
        i64 = ir.IntegerType.get_signless(64, module.context)
        for func in public_definitions(module):
            for op in list(func.regions[0].blocks[0].operations):
                if op.operation.name not in _PASSIVE:
                    _wrap(op.operation, len(names), i64)
                    names.append(f"{format_location(op.location)} {op.operation.name}")
        if names:
            _declare(module, i64)
            module.attributes[KERNELS_ATTR] = ir.ArrayAttr.get(
                [ir.StringAttr.get(name) for name in names])


def _wrap(op: ir.Operation, index: int, i64: ir.Type) -> None:
    with op.location, ir.InsertionPoint(op):
        tag = ir.Operation.create("arith.constant", results=[i64],
                                  attributes={"value": ir.IntegerAttr.get(i64, index)}).result
        _call(ENTER, tag)
        done = _call(EXIT, tag)
    op.move_before(done)            # enter, the op, exit


def _call(name: str, tag: ir.Value) -> ir.Operation:
    return ir.Operation.create("func.call", operands=[tag],
                               attributes={"callee": ir.FlatSymbolRefAttr.get(name)})


def _declare(module: ir.Operation, i64: ir.Type) -> None:
    body = module.regions[0].blocks[0]
    taken = {symbol_name(op.operation) for op in body.operations if "sym_name" in op.operation.attributes}
    for name in (ENTER, EXIT):
        if name not in taken:
            with module.context, ir.Location.unknown(module.context):
                ir.InsertionPoint(body).insert(ir.Operation.parse(f"func.func private @{name}(i64)"))
