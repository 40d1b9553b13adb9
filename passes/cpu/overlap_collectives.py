"""xla-overlap-collectives: each collective split into a start and a done,
the start as early and the done as late as the program's dependences allow."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, module_ops, nested_ops, symbol_name
from xlac.passes.cpu.builders.collective_schedule import hoist_after_operands, sink_to_first_use
from xlac.record import record

# Collectives whose buffer call can be started and waited for apart (replica_id
# and partition_id move nothing).
_STARTABLE = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
              "collective_permute", "collective_broadcast")


@record
class OverlapCollectives(ModulePass):
    """Turn each collective buffer call of xla-lower-collectives

        %s = bufferization.to_buffer %v read_only
        %r = memref.alloc()
        call @__xlac_all_reduce_0_buffers0(%s, %r)
        %t = bufferization.to_tensor %r restrict writable

    into a start and a done, and schedule them apart:

        %s = bufferization.to_buffer %v read_only       // right after %v is made
        %r = memref.alloc()
        %q = call @..._start(%s, %r) -> i32              // MPI_Iallreduce
        ... computation that needs neither %t nor what depends on it ...
        call @..._done(%q, %v, %r)                       // MPI_Wait
        %t = bufferization.to_tensor %r restrict writable // right before %t's first use

    Why: a blocking collective idles the rank for the whole transfer; XLA's
    latency-hiding scheduler splits collectives into start/done pairs for the
    same reason. The done takes the operand tensor %v as an argument the
    callee only reads (`bufferization.access = "read"`), so one-shot
    bufferization keeps %v's buffer alive and unwritten until the wait (MPI
    still reads it), and the deallocation pass frees it only after.
    The users of %t that only compute on tensors (linalg, tensor, arith)
    are moved down first, each right before its own first use, so that the
    done waits as late as the results are needed (a bias gradient's
    reduction is not done right after its all-reduce but where the update
    reads it). Runs on tensors before bufferization, on the CPU target.
    Where no computation ends up between a start and its done, the two
    become one blocking call again (unless ``always``): MPI's blocking
    collectives are faster than a start and an immediate wait.
    """

    name = "xla-overlap-collectives"
    always: bool = False       # split even where no computation lies between (tests)

    def run(self, module: ir.Operation) -> None:
        declarations = {symbol_name(f): f for f in functions(module)
                        if "xla.collective" in f.attributes and not f.regions[0].blocks}
        split: dict[str, tuple[str, str]] = {}
        pairs = []
        for call in [op for op in module_ops(module) if op.name == "func.call"]:
            callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            decl = declarations.get(callee)
            if decl is None or ir.StringAttr(decl.attributes["xla.collective"]).value not in _STARTABLE:
                continue
            pattern = _buffer_call(call)
            if pattern is None:
                continue
            if callee not in split:
                split[callee] = _declare_halves(module, decl, pattern[0])
            pairs.append((callee, *_split_and_schedule(call, pattern, split[callee])))
        for callee, start, done in pairs:
            if not self.always and not _hides_computation(start, done):
                _back_to_blocking(callee, start, done)
        for callee, (start_name, done_name) in split.items():
            for name in (callee, start_name, done_name):
                if not _has_uses(module, name):
                    _function(module, name).erase()


def _buffer_call(call: ir.Operation):
    """(operand tensor, to_buffer op, alloc op, to_tensor op) of a collective's buffer call,
    all in the call's block, or None if the call is not in that form."""
    if len(call.operands) != 2:
        return None
    send, recv = (_op(v.owner) for v in call.operands)
    if send is None or recv is None or send.name != "bufferization.to_buffer" \
            or recv.name != "memref.alloc":
        return None
    readers = [use.owner for use in recv.results[0].uses]
    tensors = [_op(r) for r in readers if _op(r).name == "bufferization.to_tensor"]
    if len(readers) != 2 or len(tensors) != 1:
        return None
    block = call.parent
    if any(op.parent != block for op in (send, recv, tensors[0])):
        return None
    return send.operands[0], send, recv, tensors[0]


def _op(owner) -> ir.Operation | None:
    if isinstance(owner, ir.Block):
        return None
    return owner.operation if hasattr(owner, "operation") else owner


def _declare_halves(module: ir.Operation, decl: ir.Operation, operand: ir.Value) -> tuple[str, str]:
    """Declare ``@<callee>_start(send, recv) -> i32`` and ``@<callee>_done(i32, operand, recv)``
    with the collective's attributes; their names."""
    name = symbol_name(decl)
    ftype = ir.FunctionType(ir.TypeAttr(decl.attributes["function_type"]).value)
    send, recv = (str(t) for t in ftype.inputs)
    attrs = ", ".join(f"{name} = {decl.attributes[name]}" for name in decl.attributes
                      if name.startswith("xla."))
    text = (f'func.func private @{name}_start({send}, {recv}) -> i32 '
            f'attributes {{{attrs}, xla.collective_phase = "start"}}\n'
            f'func.func private @{name}_done(i32, {operand.type} {{bufferization.access = "read"}}, '
            f'{recv}) attributes {{{attrs}, xla.collective_phase = "done"}}\n')
    parsed = ir.Module.parse("module {\n" + text + "}", context=module.context)
    for op in reversed([o.operation for o in parsed.body.operations]):
        op.move_after(decl)
    return f"{name}_start", f"{name}_done"


def _split_and_schedule(call: ir.Operation, pattern, names: tuple[str, str]) -> None:
    operand, to_buffer, alloc, to_tensor = pattern
    start_name, done_name = names
    with call.location, ir.InsertionPoint(call):
        i32 = ir.IntegerType.get_signless(32)
        start = ir.Operation.create("func.call", results=[i32], operands=list(call.operands),
                                    attributes={"callee": ir.FlatSymbolRefAttr.get(start_name)})
        done = ir.Operation.create("func.call", results=[],
                                   operands=[start.results[0], operand, call.operands[1]],
                                   attributes={"callee": ir.FlatSymbolRefAttr.get(done_name)})
    call.erase()
    # start: the buffers and the call right after the operand is made
    hoist_after_operands(to_buffer)
    if len(alloc.operands):
        hoist_after_operands(alloc)
    else:
        alloc.move_after(to_buffer)
    hoist_after_operands(start)
    # done: the tensor's users first, so that the wait can go as late as they allow
    sink_to_first_use(to_tensor, also_users=True)
    done.move_before(to_tensor)
    return start, done


# What may lie between a start and its done without being computation to hide
# the transfer behind: views, buffers, constants, and other collectives' halves.
_NOT_COMPUTATION = ("bufferization.to_buffer", "bufferization.to_tensor", "memref.alloc",
                    "tensor.empty", "arith.constant", "tensor.expand_shape",
                    "tensor.collapse_shape")


def _hides_computation(start: ir.Operation, done: ir.Operation) -> bool:
    """Whether any computation runs between ``start`` and ``done`` (same block)."""
    ops = [o.operation for o in start.block.operations]
    between = ops[ops.index(start) + 1:ops.index(done)]
    return any(op.name not in _NOT_COMPUTATION and not _is_half(op) for op in between)


def _is_half(op: ir.Operation) -> bool:
    return op.name == "func.call" and \
        ir.FlatSymbolRefAttr(op.attributes["callee"]).value.endswith(("_start", "_done"))


def _back_to_blocking(callee: str, start: ir.Operation, done: ir.Operation) -> None:
    """One blocking call where the done was: with nothing to overlap, MPI's blocking
    collectives are the faster ones (MPICH's non-blocking all-reduce within a host
    runs a generic schedule: 1.8x the time of MPI_Allreduce at 1 MB, 2.3x at 4 KB)."""
    with done.location, ir.InsertionPoint(done):
        ir.Operation.create("func.call", results=[], operands=list(start.operands),
                            attributes={"callee": ir.FlatSymbolRefAttr.get(callee)})
    done.erase()
    start.erase()


def _function(module: ir.Operation, name: str) -> ir.Operation:
    return next(f for f in functions(module) if symbol_name(f) == name)


def _has_uses(module: ir.Operation, callee: str) -> bool:
    return any(op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value == callee
               for op in nested_ops(module))
