"""xla-shared-parallel-dispatch: a module's parallel loops share one OpenMP region;
each loop's body becomes a plain function that region calls per iteration."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.helper_calls import fresh_name, symbols

DISPATCHER_STEM = "xla_parallel_for"
# Cheap values copied into a body function rather than passed in its context.
_COPIED = ("llvm.mlir.constant", "llvm.mlir.zero", "llvm.mlir.poison", "llvm.mlir.undef",
           "llvm.mlir.addressof")
# The wsloop schedules a dispatcher is written for (its attributes, as the
# pipeline's xla-openmp-dynamic-schedule leaves them).
_SCHEDULES = {"dynamic": "schedule(dynamic)", "": ""}
# The attributes a one-loop `omp.loop_nest` may carry (its count of collapsed loops is 1).
_NEST_ATTRIBUTES = ("operandSegmentSizes", "collapse_num_loops")
# Internal: a program split into pieces after this pass gets a copy in each piece
# that uses it (piece_modules.with_local_callees).
_DISPATCHER = """
llvm.func internal @{name}(%lb: i64, %ub: i64, %step: i64, %body: !llvm.ptr, %context: !llvm.ptr)
    attributes {{no_inline}} {{
  omp.parallel {{
    omp.wsloop {schedule} {{
      omp.loop_nest (%i) : i64 = (%lb) to (%ub) step (%step) {{
        llvm.call %body(%context, %i) : !llvm.ptr, (!llvm.ptr, i64) -> ()
        omp.yield
      }}
    }}
    omp.terminator
  }}
  llvm.return
}}
"""


class SharedParallelDispatch(ModulePass):
    """Each `omp.parallel { omp.wsloop { omp.loop_nest (%i) = (lb) to (ub) step (s)
    { body } } }` of the LLVM dialect (no clauses but the schedule, one loop) becomes
    a call of one `@xla_parallel_for` per schedule, which holds the module's only
    OpenMP region: it calls the loop's body, moved into `@<kernel>_chunk(ctx, i)`,
    for each iteration the OpenMP runtime hands its thread. The values the body
    reads from the kernel go through a struct on the kernel's stack (`ctx`), as the
    OpenMP outlining passes them; constants are copied in.

    Why: LLVM outlines every OpenMP region into a function of its own, with the
    dispatch loop (`__kmpc_dispatch_next`), the fork call and the barrier: ~3 ms of
    LLVM's IR pipeline and ~4.5 ms of its code generator per region however small
    its body (Zen 4), and LLVM runtime-unrolls the chunk loop (its trip count is
    the runtime's) 4x around the whole body (3 of BERT's 17 parallel kernels:
    ~10 ms each). One region per module, and a body in a plain function (the
    call keeps the chunk loop rolled), cost ~2 ms per further kernel instead of
    ~7-10. At run time the threads, the schedule (chunks of one iteration handed
    out on demand) and the barrier are the same; each iteration is one indirect
    call more, next to the runtime call that hands it out.

    Example:
        llvm.func @k(%a: !llvm.ptr) {
          omp.parallel { omp.wsloop schedule(dynamic) {
            omp.loop_nest (%i) : i64 = (%c0) to (%c4) step (%c1) { ...%a, %i...; omp.yield } } ... }
      becomes
        llvm.func @k(%a: !llvm.ptr) {
          %ctx = llvm.alloca ... ; llvm.store (%a) into %ctx
          llvm.call @xla_parallel_for(%c0, %c4, %c1, @k_chunk, %ctx)
        llvm.func internal @k_chunk(%ctx: !llvm.ptr, %i: i64) { %a = load from %ctx; ... }
    """

    name = "xla-shared-parallel-dispatch"
    acts_on = frozenset({"omp.parallel"})      # no parallel loop: skipped on the shared census

    def run(self, module: ir.Operation) -> None:
        # the ops of the census walk its Python neighbours share, not a walk of its own
        loops = [(op.parent.operation, op) for op in module_ops(module)
                 if op.name == "omp.parallel" and op.parent.operation.name == "llvm.func"
                 and _schedule(op) is not None]
        if not loops:
            return
        taken = symbols(module)
        dispatchers: dict[str, str] = {}
        for func, parallel in loops:
            schedule = _schedule(parallel)
            if schedule not in dispatchers:
                dispatchers[schedule] = fresh_name(taken, DISPATCHER_STEM)
                _add_dispatcher(module, dispatchers[schedule], schedule)
            body_name = fresh_name(taken, f"{_name(func)}_chunk")
            _call_dispatcher(module, func, parallel, body_name, dispatchers[schedule])


def _top_level_ops(func: ir.Operation) -> list[ir.Operation]:
    return [op.operation for block in func.regions[0].blocks for op in block.operations]


def _name(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def _only_ops(op: ir.Operation) -> list[ir.Operation]:
    """The ops of ``op``'s single one-block region, or none if it has another shape."""
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return []
    return [inner.operation for inner in op.regions[0].blocks[0].operations]


def _schedule(op: ir.Operation) -> str | None:
    """The schedule of a parallel loop this pass rewrites ("dynamic", "" for the
    default), or None: other ops, clauses, more than one loop or op in the region."""
    if op.name != "omp.parallel" or len(op.operands) or len(op.results):
        return None
    inner = _only_ops(op)
    if [o.name for o in inner] != ["omp.wsloop", "omp.terminator"] or len(inner[0].operands):
        return None
    wsloop = inner[0]
    nest = _only_ops(wsloop)
    if [o.name for o in nest] != ["omp.loop_nest"] or len(nest[0].operands) != 3 \
            or any(name not in _NEST_ATTRIBUTES for name in _attribute_names(nest[0])):
        return None
    names = [name for name in _attribute_names(wsloop) if name != "operandSegmentSizes"]
    if names == ["schedule_kind"]:
        kind = str(wsloop.attributes["schedule_kind"])
        return "dynamic" if kind == "#omp<schedulekind dynamic>" else None
    return "" if not names else None


def _attribute_names(op: ir.Operation) -> list[str]:
    return [getattr(attribute, "name", attribute) for attribute in op.attributes]


def _add_dispatcher(module: ir.Operation, name: str, schedule: str) -> None:
    text = _DISPATCHER.format(name=name, schedule=_SCHEDULES[schedule])
    parsed = ir.Module.parse(text, module.context)
    dispatcher = list(parsed.body.operations)[0].operation
    dispatcher.move_before(list(module.regions[0].blocks[0].operations)[0].operation)


def _call_dispatcher(module: ir.Operation, func: ir.Operation, parallel: ir.Operation,
                     body_name: str, dispatcher: str) -> None:
    nest = _only_ops(_only_ops(parallel)[0])[0]
    read = _read_inside(func, parallel, nest)
    passed = [value for value, _ in read if not _is_copied(value)]
    context_type = _struct([v.type for v in passed])
    body = _body_function(module, body_name, context_type, passed, parallel.location)
    entry = body.regions[0].blocks[0]
    stand_ins = _stand_ins(entry, passed, [value for value, _ in read if _is_copied(value)])
    for value, uses in read:
        for owner, index in uses:
            owner.operands[index] = stand_ins[value]
    _move_blocks(nest.regions[0], body, entry)
    _call_in_place(func, parallel, list(nest.operands), context_type, passed, body_name, dispatcher)
    parallel.erase()


def _read_inside(func: ir.Operation, parallel: ir.Operation, nest: ir.Operation) -> list:
    """``[(value, [(op, operand index)...])]``: the values of ``func`` the loop body
    reads, and where. Found from the kernel's side (its arguments and the results of
    its ops but the region: a few dozen values), their uses looked up in the
    body, not the body's every operand compared (a kernel's body holds thousands)."""
    candidates = [argument for block in func.regions[0].blocks for argument in block.arguments]
    for op in _top_level_ops(func):
        if op != parallel:
            candidates.extend(op.results)
    found = []
    for value in candidates:
        uses = [(use.owner, use.operand_number) for use in value.uses]
        inside = [(owner.operation, index) for owner, index in uses if _within(owner.operation, nest, func)]
        if inside:
            found.append((value, inside))
    return found


def _within(op: ir.Operation, nest: ir.Operation, func: ir.Operation) -> bool:
    """Whether ``op`` lies in ``nest``'s region (walking up to ``func``)."""
    parent = op.parent
    while parent is not None:
        parent = parent.operation
        if parent == nest:
            return True
        if parent == func:
            return False
        parent = parent.parent
    return False


def _is_copied(value: ir.Value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.operation.name in _COPIED


def _struct(types: list[ir.Type]) -> ir.Type:
    return ir.Type.parse("!llvm.struct<(" + ", ".join(map(str, types)) + ")>")


# The body function, up to the branch into the loop's body: the kernel's values read
# back from the context struct. Text, and generic ops below: the llvm dialect's
# Python builders are a module of their own to import (~0.1 s in each worker).
_BODY = """
llvm.func internal @{name}(%context: !llvm.ptr, %i: i64) attributes {{no_inline, sym_visibility = "private"}} {{
{reads}  llvm.unreachable
}}
"""


def _body_function(module: ir.Operation, name: str, context_type: ir.Type, passed, location) -> ir.Operation:
    reads = ""
    if passed:
        reads = f"  %all = llvm.load %context : !llvm.ptr -> {context_type}\n" + "".join(
            f"  %v{i} = llvm.extractvalue %all[{i}] : {context_type}\n" for i in range(len(passed)))
    parsed = ir.Module.parse(_BODY.format(name=name, reads=reads), module.context)
    body = list(parsed.body.operations)[0].operation
    body.move_after(list(module.regions[0].blocks[0].operations)[-1].operation)
    return body


def _stand_ins(entry: ir.Block, passed, copied) -> dict:
    """What each value the body reads is in the body function: read from the
    context (the entry's extractvalues, in order), or a copy of a constant."""
    ops = [op.operation for op in entry.operations]
    extracted = [op.results[0] for op in ops if op.name == "llvm.extractvalue"]
    stand_ins = dict(zip(passed, extracted))
    for value in copied:
        stand_ins[value] = value.owner.operation.clone(ir.InsertionPoint(ops[-1])).results[0]
    return stand_ins


def _move_blocks(region: ir.Region, body: ir.Operation, entry: ir.Block) -> None:
    """The loop body's blocks, after ``entry``, whose end branches to the first
    with the iteration number; each `omp.yield` becomes a return."""
    blocks = list(region.blocks)
    end = list(entry.operations)[-1].operation
    ir.Operation.create("llvm.br", operands=[entry.arguments[1]], successors=[blocks[0]],
                        loc=end.location, ip=ir.InsertionPoint(end))
    end.erase()
    for block in blocks:
        block.append_to(body.regions[0])
        last = list(block.operations)[-1].operation
        if last.name == "omp.yield":
            ir.Operation.create("llvm.return", loc=last.location, ip=ir.InsertionPoint(last))
            last.erase()


def _call_in_place(func: ir.Operation, parallel: ir.Operation, bounds, context_type: ir.Type,
                   passed, body_name: str, dispatcher: str) -> None:
    """The context struct on ``func``'s stack (allocated at its entry) filled
    with ``passed``, and the call of the dispatcher where ``parallel`` was."""
    ptr, i64 = ir.Type.parse("!llvm.ptr"), ir.IntegerType.get_signless(64)
    entry = func.regions[0].blocks[0]
    with parallel.location:
        first = ir.InsertionPoint.at_block_begin(entry)
        one = _op("llvm.mlir.constant", [], [i64], {"value": ir.IntegerAttr.get(i64, 1)}, first)
        context = _op("llvm.alloca", [one], [ptr], {"elem_type": ir.TypeAttr.get(context_type)}, first)
        here = ir.InsertionPoint(parallel)
        packed = _op("llvm.mlir.poison", [], [context_type], {}, here)
        for index, value in enumerate(passed):
            packed = _op("llvm.insertvalue", [packed, value], [context_type],
                         {"position": ir.DenseI64ArrayAttr.get([index])}, here)
        _op("llvm.store", [packed, context], [], {}, here, result=False)
        address = _op("llvm.mlir.addressof", [], [ptr], {"global_name": ir.FlatSymbolRefAttr.get(body_name)}, here)
        _op("llvm.call", [*bounds, address, context], [],
            {"callee": ir.FlatSymbolRefAttr.get(dispatcher),
             "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(bounds) + 2, 0]),
             "op_bundle_sizes": ir.DenseI32ArrayAttr.get([])}, here, result=False)


def _op(name: str, operands, results, attributes: dict, ip, result: bool = True):
    op = ir.Operation.create(name, results=results, operands=operands, attributes=attributes, ip=ip)
    return op.results[0] if result else op
