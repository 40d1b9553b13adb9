"""xla-gpu-wrap-host-code: sequential host code -> a one-iteration scf.parallel."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, functions, symbol_name
from xlac.passes.gpu.host_reads import control_operand, materialize_control_values, read_back_ops
from xlac.passes.gpu.launch_ops import host_blocks, host_control_flow

# Ops the GPU host schedule executes itself (xlac.targets.cuda.schedule): everything
# else touches buffer contents and must run on the device.
HOST_OPS = frozenset({
    "arith.constant", "memref.alloc", "memref.dealloc", "memref.copy", "memref.subview",
    "memref.get_global",                              # a constant buffer the runtime uploads
    "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast",
    "scf.parallel", "func.return", "scf.yield",     # scf.yield: host control flow's (the rest: below)
    "gpu.launch",                                     # a kernel xla-gpu-kernels wrote
})


class GpuWrapHostCode(ModulePass):
    """Wrap each run of sequential host ops in a 1-trip scf.parallel (a 1x1 kernel).

    Why: work with no parallel dimension (a full reduction to a 0-d buffer,
    a scalar store) produces no scf.parallel, so convert-parallel-loops-to-gpu
    would leave it in the host function, which then reads device memory on
    the CPU. Run it after scf-parallel-loop-tiling and before anything that
    canonicalizes (canonicalize deletes 1-trip loops). Host scalar chains a
    loop uses (a dynamic_slice's loaded and clamped index, the view it
    offsets) are first recomputed inside that loop: the host cannot read
    device memory, and a view with a computed offset cannot be a bare-pointer
    kernel argument. Host control flow (a while, if, index_switch: launch_ops.
    host_blocks) stays on the host and its regions are treated as the entry
    is; the one-element loads it branches on are read back (host_reads.py).
    Example:

        scf.for ... { memref.load %arg0 ... }   ->   scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
                                                        scf.for ... { memref.load %arg0 ... } }
    """

    name = "xla-gpu-wrap-host-code"

    def run(self, module: ir.Operation) -> None:
        # collective calls (xla-lower-collectives) and matmuls on cuBLASLt
        # (xla-gpu-library-matmuls) stay on the host: the runtime calls NCCL, cuBLASLt
        collectives = {symbol_name(f) for f in functions(module)
                       if "xla.collective" in f.attributes or "xla.gemm" in f.attributes}
        blocks = host_blocks(module)                   # function bodies, then host control flow's blocks
        for block in blocks:                           # may store in a block around: before any wrapping
            materialize_control_values(block)
        for block in blocks:
            for run in _sequential_runs(block, collectives):
                kept = _hoist_shared_scalars(run)
                if kept:
                    _wrap(kept)
            _sink_into_loops(block)


def _sequential_runs(block, collectives=frozenset()) -> list[list[ir.Operation]]:
    runs, current, folded, between = [], [], set(), []
    reads = read_back_ops(block)                      # predicates the host reads back
    for op in block.operations:
        op = op.operation
        if _folds_to_constant(op, folded):            # tile sizes: c1 * c16; canonicalize folds them later
            folded.update(op.results)
            continue
        host = op.name in HOST_OPS or op in reads or host_control_flow(op) or control_operand(op) \
            or (op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in collectives)
        if host and not (op.name in _VIEWS and _sinkable(op, folded)):
            if current:
                runs.append(current)
                current, between = [], []
            between.append(op)
            continue
        if not current and runs and _needs_merge(runs[-1], op, between, folded):
            for moved in between:                     # buffers made between: before the run
                moved.move_before(runs[-1][0])
            current = runs.pop()
        current.append(op)
    if current:
        runs.append(current)
    return runs


def _needs_merge(run: list[ir.Operation], op: ir.Operation, between: list[ir.Operation], folded) -> bool:
    """Whether ``op`` reads what ``run`` computes and the host could not recompute
    (a scalar loop's buffer: top_k's), with only new buffers made between them:
    then both are one kernel, the buffers made before it."""
    if not all(b.name == "memref.alloc" and not list(b.operands) for b in between):
        return False
    members = set(run)
    return any(_top_level(use.owner.operation, op.block) == op and not _sinkable(source, folded)
               for source in run for result in source.results for use in result.uses
               if _top_level(use.owner.operation, op.block) not in members)


def _folds_to_constant(op: ir.Operation, folded: set) -> bool:
    if op.name == "arith.constant":
        return True
    return op.name.startswith("arith.") and all(value in folded for value in op.operands)


def _hoist_shared_scalars(run: list[ir.Operation]) -> list[ir.Operation]:
    """Move out of ``run`` (to just after it) the scalar chains later code also uses.

    Returns the ops left to wrap. The moved chains are recomputed inside each
    loop that uses them (``_sink_into_loops``); placed after the run's kernel,
    a moved load sees what that kernel stored.
    """
    members, folded = set(run), set()
    shared = [op for op in run if _sinkable(op, folded) and _used_outside(op, members)]
    for op in shared:                                  # grows: what a shared op needs is shared too
        for operand in op.operands:
            source = operand.owner.operation if isinstance(operand, ir.OpResult) else None
            if source in members and source not in shared:
                if not _sinkable(source, folded):
                    _refuse(source)
                shared.append(source)
    kept = [op for op in run if op not in shared]
    feeds_kept = any(_top_level(use.owner.operation, op.block) in kept
                     for op in shared for result in op.results for use in result.uses)
    for op in run:
        if op not in shared and _used_outside(op, members):
            _refuse(op)
        if (op.name == "memref.load" and op in shared and feeds_kept
                and _written_before(op, run, shared)):
            _refuse(op)                                # its copy in the kernel would read too early
    anchor = kept[-1] if kept else None
    for op in [op for op in run if op in shared] if anchor else []:
        op.move_after(anchor)
        anchor = op
    return kept


def _used_outside(op, members) -> bool:
    return any(_top_level(use.owner.operation, op.block) not in members
               for result in op.results for use in result.uses)


def _top_level(op, block):
    """The op of ``block`` that holds ``op`` (``op`` itself if it is in ``block``)."""
    while op is not None and op.block != block:
        op = op.parent if op.parent is not None and op.parent.name != "builtin.module" else None
    return op


def _written_before(load, run, shared) -> bool:
    root = _root(load.operands[0])
    earlier = run[:run.index(load)]
    return any(op not in shared and _may_write(op, root) for op in earlier)


def _refuse(op):
    raise PassFailure(op.location, f"'{op.name}' computes a value the GPU host "
                      "code needs; host-side scalar code is not supported on cuda")


def _wrap(run: list[ir.Operation]) -> None:
    with run[0].context, run[0].location, ir.InsertionPoint(run[0]):
        index = ir.IndexType.get()
        bounds = [ir.Operation.create("arith.constant", results=[index],
                                      attributes={"value": ir.IntegerAttr.get(index, v)}).result
                  for v in (0, 1)]
        loop = ir.Operation.create(
            "scf.parallel", operands=[bounds[0], bounds[1], bounds[1]], regions=1,
            attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 1, 0])})
        body = loop.regions[0].blocks.append(index)
    with run[0].context, run[0].location, ir.InsertionPoint(body):
        terminator = ir.Operation.create("scf.reduce", operands=[])
    for op in run:
        op.move_before(terminator)


# Views the kernel may receive as an argument only when their offset is static
# (bare-pointer ABI); with a computed offset they move into the kernel.
_VIEWS = frozenset({"memref.subview", "memref.expand_shape", "memref.collapse_shape",
                    "memref.cast", "memref.reinterpret_cast"})
_SCALAR_PREFIXES = ("arith.", "math.", "index.", "complex.")
# Host ops that never write memory: a load may move past them into a later kernel.
_NO_WRITE = HOST_OPS - {"memref.copy", "scf.parallel"} | {"memref.load"}


def _root(value):
    """The buffer a view chain looks into."""
    while isinstance(value, ir.OpResult) and value.owner.operation.name in _VIEWS:
        value = value.owner.operation.operands[0]
    return value


def _may_write(op, root) -> bool:
    """Whether ``op`` may store into ``root`` (any memref use but a load counts)."""
    if op.name in _NO_WRITE or op.name.startswith(_SCALAR_PREFIXES):
        return False
    if op.name == "memref.copy":
        return _root(op.operands[1]) == root
    touched = []

    def visit(inner):
        if inner.name != "memref.load":
            touched.extend(_root(v) for v in inner.operands if isinstance(v.type, ir.MemRefType))
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return root in touched


def _sink_into_loops(block) -> None:
    """Recompute, inside each loop, the host scalar chains it uses (index loads, clamps)."""
    ops = [op.operation for op in block.operations]
    folded = set()
    for op in ops:
        if _folds_to_constant(op, folded):
            folded.update(op.results)
    position = {op: i for i, op in enumerate(ops)}
    for loop in ops:
        if loop.name == "scf.parallel":
            _sink_into(loop, ops, folded, position)
    for op in reversed(ops):                           # originals nothing uses any more
        if _sinkable(op, folded) and all(not list(r.uses) for r in op.results):
            op.erase()


def _sinkable(op, folded) -> bool:
    if op.name == "arith.constant" or any(r in folded for r in op.results):
        return False                                   # tile sizes must stay launch bounds
    if op.name in _VIEWS:                              # static views stay (View steps)
        source = op.operands[0].owner                  # a view of a moved view moves too
        return any(v not in folded for v in list(op.operands)[1:]) or (
            not isinstance(source, ir.Block) and source.name in _VIEWS and _sinkable(source.operation, folded))
    return op.name.startswith(_SCALAR_PREFIXES) or op.name == "memref.load"


def _sink_into(loop, ops, folded, position) -> None:
    operands = []

    def visit(inner):                                  # no raising in here: the walk would swallow it
        operands.extend((inner, index, value) for index, value in enumerate(inner.operands))
        return ir.WalkResult.ADVANCE

    for region in loop.regions:
        for op in region.blocks[0].operations:
            op.operation.walk(visit)
    chain = []
    uses = [use for use in operands if _collect(use[2], loop, ops, folded, position, chain)]
    if not chain:
        return
    mapping = {}
    with ir.InsertionPoint.at_block_begin(loop.regions[0].blocks[0]):
        for op in sorted(chain, key=position.get):
            clone = op.clone()
            for index, operand in enumerate(op.operands):
                if operand in mapping:
                    clone.operands[index] = mapping[operand]
            mapping.update(zip(op.results, clone.results))
    for owner, index, value in uses:
        owner.operands[index] = mapping[value]


def _collect(value, loop, ops, folded, position, chain) -> bool:
    """Whether ``value`` comes from a sinkable top-level op (added to ``chain``, with its inputs)."""
    if not isinstance(value, ir.OpResult):
        return False
    op = value.owner.operation
    if op not in position or not _sinkable(op, folded):
        return False
    root = _root(op.operands[0]) if op.name == "memref.load" else None
    if root is not None and any(
            _may_write(other, root) for other in ops[position[op] + 1:position[loop]]):
        raise PassFailure(op.location, "a host-side load whose buffer may change before the "
                          "kernel that uses it is not supported on cuda")
    if op not in chain:
        chain.append(op)
        for operand in op.operands:
            _collect(operand, loop, ops, folded, position, chain)
    return True
