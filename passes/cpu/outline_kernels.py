"""xla-outline-kernels: each kernel of the entry in a function of its own, and
identical kernels in one function."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops, public_definitions
from xlac.signature import constant_index

KERNEL_STEM = "xla_kernel"
# Ops that only name memory or a value: copied into each kernel that reads
# them (so kernels over equal views of different buffers are equal) rather
# than passed in, which also keeps every argument a plain pointer.
# Every arith op is pure too.
_COPIED = ("ub.poison", "memref.get_global", "memref.subview", "memref.expand_shape",
           "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast",
           "memref.transpose", "vector.constant_mask", "vector.create_mask", "vector.broadcast")
# Ops with no effect a kernel could be moved across.
_INERT = (*_COPIED, "memref.alloc", "memref.alloca")
# Top-level ops that are no kernel: memory management, views, calls, the end.
_NOT_KERNELS = (*_INERT, "memref.dealloc", "func.call", "func.return",
                "memref.extract_strided_metadata", "memref.extract_aligned_pointer_as_index",
                "memref.load", "memref.store")


def _copied(op: ir.Operation) -> bool:
    if op.name == "memref.get_global" and _program_constant(op):
        return False
    return op.name in _COPIED or (op.name.startswith("arith.") and not op.regions)


def _program_constant(op: ir.Operation) -> bool:
    """Whether ``op`` reads one of the program's large constants
    (xla-constant-arguments-to-globals): passed in, as the argument it was,
    so kernels over different weights stay one function. Copied in, each was
    a kernel of its own: ResNet-18 with its weights in the program had 87
    functions for LLVM against 60 with them as arguments."""
    return constant_index(ir.FlatSymbolRefAttr(op.attributes["name"]).value) is not None


def _inert(op: ir.Operation) -> bool:
    return op.name in _INERT or _copied(op)


@dataclass(frozen=True)
class OutlineKernels(ModulePass):
    """Move each op of a public function's body that does work (a loop nest, a
    parallel loop, a linalg op) into a private function `@xla_kernel_<n>` and
    call it, and give kernels that are the same op for op one function.

    Why: the program is otherwise one function of every kernel inlined, which
    LLVM optimizes as one (its cost grows faster than the function) and which
    cannot be split into pieces compiled in parallel and cached apart (XLA
    also emits one LLVM function per kernel). The layers of a ResNet or a
    transformer lower to the same kernels on other buffers: each is
    compiled once. The calls are `no_inline`, and so are the functions in
    LLVM (`llvm.no_inline` becomes `llvm.func`'s `no_inline`: else LLVM copies
    each kernel into the JIT's `_mlir_` wrapper of it). Values the kernel reads are passed
    in; constants and views of buffers are copied in. An op whose results
    are used, or that reads a view with a dynamic offset or stride (it has
    no bare-pointer form), or that frees a buffer it would be passed (the
    pointer passed is the aligned one, not malloc's), stays in place. Example:

        scf.forall (%i) in (8) { ... %buf ... }
      becomes
        call @xla_kernel_0(%buf) {no_inline} : (memref<8x64xf32>) -> ()
        func.func private @xla_kernel_0(%arg0: memref<8x64xf32>)
            attributes {llvm.no_inline} { scf.forall ... }
    """

    name = "xla-outline-kernels"
    dedupe: bool = True

    def run(self, module: ir.Operation) -> None:
        kernels = _Kernels(module, self.dedupe)
        for func in public_definitions(module):
            for group in _kernel_groups(func):
                kernels.outline(group)


class _Kernels:
    """The kernel functions made so far, by their text (for sharing)."""

    def __init__(self, module: ir.Operation, dedupe: bool):
        self.module = module
        self.dedupe = dedupe
        self.by_text: dict[str, str] = {}
        taken = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                 for op in module.regions[0].blocks[0].operations
                 if "sym_name" in op.operation.attributes}
        self.index = 0
        self.taken = taken

    def outline(self, group: list[ir.Operation]) -> None:
        reads = [read for op in group for read in _outside_reads(op)]
        plan = _inputs_of(group, reads)
        if plan is None:
            return
        copied, arguments = plan
        name = self._fresh()
        call = _call(group, name, arguments)       # in the caller, before the ops move out
        func = _new_function(self.module, group, reads, name, copied, arguments)
        text = func.get_asm(enable_debug_info=False, use_local_scope=True,
                            assume_verified=True).replace(f"@{name}(", "@(", 1)
        if self.dedupe and text in self.by_text:
            func.erase()                           # the ops with it: the same kernel exists
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(self.by_text[text])
            self.taken.discard(name)
        else:
            self.by_text[text] = name

    def _fresh(self) -> str:
        while f"{KERNEL_STEM}_{self.index}" in self.taken:
            self.index += 1
        name = f"{KERNEL_STEM}_{self.index}"
        self.taken.add(name)
        return name


def _kernel_groups(func: ir.Operation) -> list[list[ir.Operation]]:
    """The kernels of ``func``'s body: each op that does work, with the later
    ops that read its results (a matmul's loop and the store of its tile)
    and only inert ops (allocations, views) between them."""
    groups: list[list[ir.Operation]] = []
    current: list[ir.Operation] = []
    for op in [op.operation for op in func.regions[0].blocks[0].operations]:
        if _does_work(op):
            current.append(op)
        elif current and not _inert(op):
            current = []                           # its results escape to a call, a store...
            continue
        if current and _closed(current, func):
            groups.append(current)
            current = []
    return groups


def _does_work(op: ir.Operation) -> bool:
    return not (op.name in _NOT_KERNELS or _copied(op) or op.name.startswith(("omp.", "llvm.")))


def _closed(group: list[ir.Operation], func: ir.Operation) -> bool:
    """Whether every result of the group's ops is read inside the group."""
    for op in group:
        for result in op.results:
            for use in result.uses:
                if _top_level(use.owner, func) not in group:
                    return False
    return True


def _top_level(op, func: ir.Operation) -> ir.Operation:
    op = op.operation
    while op.parent is not None and op.parent.operation != func:
        op = op.parent.operation
    return op


def _outside_reads(op: ir.Operation) -> list[tuple[ir.Operation, int, ir.Value]]:
    """``(reader, operand index, value)`` of each value ``op`` or an op inside
    it reads that is made outside ``op``, ``op``'s own operands first, then
    the ops inside in pre-order.

    Why one list: what the kernel is passed, whether it frees one of those,
    and where it reads them once moved were each a walk of every op inside
    the kernel and of all their operands; only these reads matter to any.
    """
    nested = nested_ops(op)
    inside = {op.operation, *nested}
    reads = [(op, index, value) for index, value in enumerate(op.operands)]
    for each in nested:
        for index, value in enumerate(each.operands):
            owner = value.owner
            if (owner.owner if isinstance(owner, ir.Block) else owner).operation not in inside:
                reads.append((each, index, value))
    return reads


def _inputs_of(group: list[ir.Operation], reads: list[tuple[ir.Operation, int, ir.Value]]
               ) -> tuple[list[ir.Operation], list[ir.Value]] | None:
    """``(ops to copy in, in order; values to pass)``, or None if some value
    the kernel reads cannot be passed as a plain pointer or number.
    ``reads``: the group's ops' ``_outside_reads``, in order."""
    copied: list[ir.Operation] = []
    arguments: list[ir.Value] = []
    seen: set = set()

    def visit(value: ir.Value) -> bool:
        if value in seen:
            return True
        seen.add(value)
        owner = value.owner
        if not isinstance(owner, ir.Block) and _copied(owner.operation):
            if not all(visit(v) for v in owner.operation.operands):
                return False
            copied.append(owner.operation)
            return True
        arguments.append(value)
        return _passable(value.type)

    seen.update(r for op in group for r in op.results)   # made inside the kernel
    if not all(visit(value) for _, _, value in reads) or _frees(reads, set(arguments)):
        return None
    return copied, arguments


def _frees(reads: list[tuple[ir.Operation, int, ir.Value]], arguments: set) -> bool:
    """Whether the group frees a buffer it is passed: a bare pointer is the
    buffer's aligned address, which is not what malloc returned."""
    return any(index == 0 and value in arguments and reader.name in ("memref.dealloc", "memref.realloc")
               for reader, index, value in reads)


def _passable(t: ir.Type) -> bool:
    """A type the bare-pointer convention passes: a number or a memref of static strides."""
    if isinstance(t, ir.MemRefType):
        strides, offset = t.get_strides_and_offset()
        dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
        return offset != dynamic and dynamic not in strides
    return isinstance(t, (ir.IndexType, ir.IntegerType, ir.FloatType))


def _crossing_type(t: ir.Type) -> ir.Type:
    """The type a value of type ``t`` crosses the call as: a 16-bit float as its
    bits. LLVM passes a bf16 (and, without F16C, an f16) scalar widened to f32,
    narrowing it again with libgcc's ``__truncsfbf2`` (``__truncsfhf2``), which
    the JIT cannot find (``jnp.pad`` of bf16 on an AVX2 machine)."""
    if isinstance(t, (ir.BF16Type, ir.F16Type)):
        return ir.IntegerType.get_signless(16)
    return t


def _bitcast(value: ir.Value, to: ir.Type) -> ir.Value:
    if value.type == to:
        return value
    return ir.Operation.create("arith.bitcast", results=[to], operands=[value]).result


def _new_function(module: ir.Operation, group: list[ir.Operation],
                  reads: list[tuple[ir.Operation, int, ir.Value]], name: str,
                  copied: list[ir.Operation], arguments: list[ir.Value]) -> ir.Operation:
    """``@name(arguments)`` holding copies of ``copied`` and then the group's
    ops, whose ``reads`` of the caller's values read the kernel's own."""
    context = module.context
    types = [_crossing_type(v.type) for v in arguments]
    with group[0].location:
        func = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get(name),
            "sym_visibility": ir.StringAttr.get("private"),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [], context)),
            "llvm.no_inline": ir.UnitAttr.get()})      # convert-func-to-llvm keeps it
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(func)
        entry = ir.Block.create_at_start(func.regions[0], types)
        with ir.InsertionPoint(entry):
            received = [_bitcast(a, v.type) for a, v in zip(entry.arguments, arguments)]
            end = ir.Operation.create("func.return")
    mapping = dict(zip(arguments, received))
    for original in copied:
        clone = original.clone(ir.InsertionPoint(end))
        _rewire(clone, mapping)
        mapping.update(zip(original.results, clone.results))
    for op in group:
        op.move_before(end)
    for reader, index, value in reads:      # a value made inside the group is in no mapping
        if value in mapping:
            reader.operands[index] = mapping[value]
    return func


def _rewire(op: ir.Operation, mapping: dict) -> None:
    """Make ``op`` read the kernel's own values in place of the caller's."""
    for i, value in enumerate(op.operands):
        if value in mapping:
            op.operands[i] = mapping[value]


def _call(group: list[ir.Operation], name: str, arguments: list[ir.Value]) -> ir.Operation:
    """The call, where the group's last op is: what it reads is defined by then."""
    with ir.InsertionPoint(group[-1]), group[0].location:
        sent = [_bitcast(v, _crossing_type(v.type)) for v in arguments]
        return ir.Operation.create("func.call", operands=sent, attributes={
            "callee": ir.FlatSymbolRefAttr.get(name), "no_inline": ir.UnitAttr.get()})
