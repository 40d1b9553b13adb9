"""xla-spread-readonly-reads: a read-only argument read by many ops is read through a few aliases."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions
from xlac.record import record

_READONLY = "bufferization.writable"


@record
class SpreadReadonlyReads(ModulePass):
    """Give every ``group`` readers (in program order) of a function argument
    marked `bufferization.writable = false` an alias of their own:
    `bufferization.to_tensor (bufferization.to_buffer %arg) restrict`.

    Why: one-shot-bufferize checks each operand it decides on against every
    other use of the operand's aliases, so a weight read by every layer of
    an unrolled loop (1,000 dots reading one argument) made its analysis
    quadratic: 0.05 s at 500 ops, 0.57 s at 2,000. Nothing writes the
    argument or an alias of it (it is read-only, and so is each alias: no
    `writable`), so hiding the aliases from each other hides no conflict;
    after bufferization each alias is the argument's buffer again. Example,
    `group=2`:

        %1 = call @k(%w, %x)   %2 = call @k(%w, %1)   %3 = call @k(%w, %2)
      ->
        %b = bufferization.to_buffer %w read_only : tensor<64xf32> to memref<64xf32>
        %w1 = bufferization.to_tensor %b restrict : memref<64xf32> to tensor<64xf32>
        %1 = call @k(%w, %x)   %2 = call @k(%w, %1)   %3 = call @k(%w1, %2)
    """

    name = "xla-spread-readonly-reads"
    group: int = 16

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            if not func.regions[0].blocks:
                continue
            block = func.regions[0].blocks[0]
            spread = [argument for number, argument in enumerate(block.arguments)
                      if _readonly(func, number) and isinstance(argument.type, ir.RankedTensorType)
                      and _more_uses_than(argument, self.group)]
            if spread:
                start = ir.InsertionPoint.at_block_begin(block)
                for argument, readers in _readers_in_order(func, spread).items():
                    self._spread(argument, readers, start)

    def _spread(self, argument: ir.Value, readers: list[tuple[ir.Operation, int]],
                start: ir.InsertionPoint) -> None:
        alias = argument
        for count, (op, index) in enumerate(readers):
            if count and count % self.group == 0:
                alias = _alias(argument, start)
            if alias != argument:
                op.operands[index] = alias


def _readonly(func: ir.Operation, number: int) -> bool:
    if "arg_attrs" not in func.attributes:
        return False
    attrs = ir.DictAttr(ir.ArrayAttr(func.attributes["arg_attrs"])[number])
    return _READONLY in attrs and not ir.BoolAttr(attrs[_READONLY]).value


def _more_uses_than(value: ir.Value, count: int) -> bool:
    """Without counting every use of a value used everywhere."""
    return any(seen >= count for seen, _ in enumerate(value.uses))


def _readers_in_order(func: ir.Operation, values: list[ir.Value]) -> dict:
    """Each of ``values`` -> (op, operand number) of its every use, in program
    order; one walk of ``func`` for all of them."""
    found: dict[ir.Value, list[tuple[ir.Operation, int]]] = {value: [] for value in values}

    def visit(op: ir.Operation):
        for index, operand in enumerate(op.operands):
            uses = found.get(operand)
            if uses is not None:
                uses.append((op, index))
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _alias(argument: ir.Value, where: ir.InsertionPoint) -> ir.Value:
    tensor = ir.RankedTensorType(argument.type)
    with argument.context, ir.Location.unknown(argument.context):
        memref = ir.MemRefType.get(tensor.shape, tensor.element_type)
        buffer = ir.Operation.create("bufferization.to_buffer", results=[memref],
                                     operands=[argument],
                                     attributes={"read_only": ir.UnitAttr.get()}, ip=where)
        return ir.Operation.create("bufferization.to_tensor", results=[argument.type],
                                   operands=[buffer.results[0]],
                                   attributes={"restrict": ir.UnitAttr.get()}, ip=where).results[0]
