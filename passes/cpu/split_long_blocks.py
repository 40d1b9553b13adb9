"""xla-split-long-blocks: long straight runs of an LLVM function's code moved
into functions of their own."""

from __future__ import annotations

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, memoized_by_type
from xlac.passes.helper_calls import fresh_name, symbols
from xlac.record import record

# Cheap values copied into each part that uses them rather than passed in.
_COPIED = ("llvm.mlir.constant", "llvm.mlir.zero", "llvm.mlir.poison", "llvm.mlir.undef",
           "llvm.mlir.addressof")
# Ops that stay where they are and end a run: stack memory would die with
# the part that made it; terminators end the block anyway.
_STAYS = ("llvm.alloca", "llvm.intr.stacksave", "llvm.intr.stackrestore")
PART_STEM = "xla_part"


@record
class SplitLongBlocks(ModulePass):
    """Move the straight runs of each block longer than `longer-than` ops
    into `llvm.func @xla_part_<n>` (`no_inline`), at most `max-ops` ops each,
    called in their place: what the run reads from before it is passed in (constants
    are copied), what later code reads from it comes back (several values in
    a struct). Stack allocations, ops with regions and terminators stay.

    Why: LLVM's instruction selection takes time growing faster than a basic
    block's length, whatever the optimization level. The entry of a
    2,000-op transpose/dot chain is one block of 47,000 instructions (its
    kernels are shared, its buffers allocated and freed in line): 1.5 s of
    machine code on one process even at -O0, 0.16 s cut into blocks of
    400. Blocks are not enough (-O2 merges them back); functions are
    compiled apart, and in parallel (they go to other pieces). Example:

        llvm.func @main(%a: !llvm.ptr) { ...50,000 ops...; llvm.return }
      becomes
        llvm.func @main(%a: !llvm.ptr) {
          %r = llvm.call @xla_part_0(%a) : (!llvm.ptr) -> !llvm.ptr ...
        llvm.func @xla_part_0(%a: !llvm.ptr) -> !llvm.ptr attributes {no_inline} { ... }
    """

    name = "xla-split-long-blocks"
    max_ops: int = 2000
    longer_than: int = 8000        # blocks no longer stay whole: real models' entries are shorter

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        functions = [op.operation for op in body.operations
                     if op.operation.name == "llvm.func" and op.operation.regions[0].blocks]
        taken = symbols(module)
        for func in functions:
            for block in func.regions[0].blocks:
                if len(block.operations) > max(self.longer_than, self.max_ops):   # no op objects made
                    ops = [op.operation for op in block.operations]
                    for run in _runs(ops, self.max_ops):
                        _move_into_part(module, func, run, fresh_name(taken, PART_STEM))


def _runs(ops: list[ir.Operation], max_ops: int) -> list[list[ir.Operation]]:
    """Consecutive movable ops, cut every ``max_ops``; runs shorter than a
    tenth of that are left in place (a call costs more than they do)."""
    runs, current, shortest = [], [], max(2, max_ops // 10)
    holds_masks = memoized_by_type(_holds_i1_vector)
    for op in ops:
        movable = op.name not in _STAYS and not op.regions and op.name not in _COPIED \
            and not _is_terminator(op) and not _touches(op, holds_masks)
        if movable:
            current.append(op)
        if not movable or len(current) == max_ops:
            if len(current) >= shortest:
                runs.append(current)
            current = []
    if len(current) >= shortest:
        runs.append(current)
    return runs


def _touches(op: ir.Operation, holds) -> bool:
    """Whether ``op`` reads or makes a value of a type ``holds`` says yes to."""
    return any(holds(v.type) for v in op.operands) or any(holds(r.type) for r in op.results)


def _holds_i1_vector(type_: ir.Type) -> bool:
    """Vectors of i1, alone or in an array or struct. Such values never cross
    into a part: an AVX-512 target keeps a vector<1xi1> in a mask register,
    and LLVM aborted ("Cannot emit physreg copy instruction") passing 64 of
    them to a part of a CNN training step's entry (its ops stay, and with
    them every op that reads or makes such a value, so none is passed)."""
    return "xi1>" in str(type_)


def _is_terminator(op: ir.Operation) -> bool:
    return op.name in ("llvm.return", "llvm.br", "llvm.cond_br", "llvm.switch", "llvm.unreachable")


def _move_into_part(module: ir.Operation, func: ir.Operation, run: list[ir.Operation],
                    name: str) -> None:
    # the run's ops, compared by what they are (the bindings make a new object
    # per look; a set works while nothing edits them, until the outputs are found)
    inside = set(run)
    inputs, copied = _reads(run, inside)
    outputs, outside_uses = [], []     # what later code reads, and where
    for op in run:
        for result in op.results:
            uses = [(use.owner.operation, use.operand_number) for use in result.uses
                    if not _within(use.owner, func, inside)]
            if uses:
                outputs.append(result)
                outside_uses.append(uses)
    part = _new_function(module, name, inputs, outputs, run[0].location)
    entry = part.regions[0].blocks[0]
    mapping = dict(zip(inputs, entry.arguments))   # values hash by what they stand for
    with ir.InsertionPoint.at_block_terminator(entry):
        for value in copied:
            mapping[value] = value.owner.operation.clone().results[0]
    for new, uses in zip(_call_in_place(run[0], name, inputs, outputs), outside_uses):
        for user, index in uses:
            user.operands[index] = new
    end = _end(entry)
    for op in run:
        op.move_before(end)
        _rewire(op, mapping)
    _return(end, outputs, run[-1].location)


def _reads(run: list[ir.Operation], inside: set) -> tuple[list[ir.Value], list[ir.Value]]:
    """``(values to pass in, constants to copy in)``: what ``run`` reads from before it."""
    inputs, copied, seen = [], [], set()
    for op in run:
        for value in op.operands:
            owner = value.owner
            if not isinstance(owner, ir.Block) and owner.operation in inside:
                continue
            if value in seen:
                continue
            seen.add(value)
            if not isinstance(owner, ir.Block) and owner.operation.name in _COPIED:
                copied.append(value)
            else:
                inputs.append(value)
    return inputs, copied


def _within(op, func: ir.Operation, inside: set) -> bool:
    """Whether ``op`` is (or is nested in) one of the run's ops."""
    op = op.operation
    while op.parent is not None and op.parent.operation != func:
        op = op.parent.operation
    return op in inside


def _packed(types: list[ir.Type]) -> ir.Type | None:
    """What a part returns: nothing, the one value, or a struct of them."""
    if not types:
        return None
    if len(types) == 1:
        return types[0]
    return ir.Type.parse("!llvm.struct<(" + ", ".join(map(str, types)) + ")>")


def _new_function(module: ir.Operation, name: str, inputs, outputs, location) -> ir.Operation:
    result = _packed([v.type for v in outputs])
    signature = ir.Type.parse(f"!llvm.func<{result if result is not None else '!llvm.void'} "
                              f"({', '.join(str(v.type) for v in inputs)})>")
    llvm = dialect("llvm")
    with location, ir.InsertionPoint(module.regions[0].blocks[0]):
        part = llvm.LLVMFuncOp(name, ir.TypeAttr.get(signature), sym_visibility="private",
                               no_inline=True)
        block = ir.Block.create_at_start(part.regions[0], [v.type for v in inputs])
        with ir.InsertionPoint(block):
            llvm.UnreachableOp()                # the end marker, replaced by the return
    return part.operation


def _end(block: ir.Block) -> ir.Operation:
    return list(block.operations)[-1].operation


def _rewire(op: ir.Operation, mapping: dict) -> None:
    for index, value in enumerate(op.operands):
        new = mapping.get(value)
        if new is not None:
            op.operands[index] = new


def _call_in_place(first: ir.Operation, name: str, inputs, outputs) -> list[ir.Value]:
    """The call before ``first``; the values that stand for ``outputs`` after it."""
    llvm = dialect("llvm")
    with ir.InsertionPoint(first), first.location:
        call = llvm.CallOp(_packed([v.type for v in outputs]), list(inputs), [], [],
                           callee=name, no_inline=True)
        if len(outputs) == 1:
            return [call.result]
        return [llvm.ExtractValueOp(v.type, call.result, [i]).result for i, v in enumerate(outputs)]


def _return(end: ir.Operation, outputs, location) -> None:
    """Replace the end marker by the return of the part's ``outputs``."""
    llvm = dialect("llvm")
    with ir.InsertionPoint(end), location:
        if not outputs:
            llvm.ReturnOp()
        elif len(outputs) == 1:
            llvm.ReturnOp(arg=outputs[0])
        else:
            packed = llvm.PoisonOp(_packed([v.type for v in outputs])).result
            for index, value in enumerate(outputs):
                packed = llvm.InsertValueOp(packed, value, [index]).result
            llvm.ReturnOp(arg=packed)
    end.erase()
