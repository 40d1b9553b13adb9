"""xla-outline-kernels: each kernel of the entry in a function of its own, and
identical kernels in one function."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops, public_definitions
from xlac.passes.cpu.kernel_reads import bitcast, copied_in, crossing_type, does_work, inert, outside_reads, passable
from xlac.passes.cpu.kernel_repeats import Repeats
from xlac.passes.outline import FirstAlike
from xlac.record import record

KERNEL_STEM = "xla_kernel"
# The texts the last run printed of the kernels it kept (compared with others':
# ``_Kernels.outline``), for the pieces' keys right after it (``printed_texts``)
_PRINTED: dict = {"module": None, "texts": {}}


@record
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
    pointer passed is the aligned one, not malloc's), stays in place. The calls
    xla-inline-schedule-calls left (``kernel_repeats``) are copied in at the
    first call of each kind only; the others call its kernel. Example:

        scf.forall (%i) in (8) { ... %buf ... }
      becomes
        call @xla_kernel_0(%buf) {no_inline} : (memref<8x64xf32>) -> ()
        func.func private @xla_kernel_0(%arg0: memref<8x64xf32>)
            attributes {llvm.no_inline} { scf.forall ... }
    """

    name = "xla-outline-kernels"
    dedupe: bool = True

    def run(self, module: ir.Operation) -> None:
        _PRINTED.update(module=None, texts={})      # a run that fails leaves none behind
        kernels = _Kernels(module, self.dedupe)
        repeats = Repeats(module)
        for func in public_definitions(module):
            _outline_body(func, kernels, repeats)
        repeats.erase_functions()
        _PRINTED.update(module=module, texts=kernels.printed)


def printed_texts(module: ir.Operation) -> dict[str, str]:
    """The kernels' texts this pass printed in its last run, as
    ``pieces.function_texts`` prints them (the functions unchanged since: the
    caller's guarantee), if that run was on ``module``; taken once.

    Why: the pieces' keys right after this pass (``early_pieces.CUT_AFTER``)
    printed every function again, the kernels this pass had printed to compare
    them among them (BERT: 21 of its 41 functions, 92 of 198 kB)."""
    ran_on = _PRINTED["module"]
    texts = _PRINTED["texts"] if ran_on is not None and ran_on == module else {}
    _PRINTED.update(module=None, texts={})
    return texts


class _Kernels:
    """The kernel functions made so far, shared where their texts are the same."""

    def __init__(self, module: ir.Operation, dedupe: bool):
        self.module = module
        self.dedupe = dedupe
        self.alike = FirstAlike()               # the kernels made, for sharing
        taken = {ir.StringAttr(op.operation.attributes["sym_name"]).value
                 for op in module.regions[0].blocks[0].operations
                 if "sym_name" in op.operation.attributes}
        self.index = 0
        self.taken = taken
        self.printed: dict[str, str] = {}       # name -> the text of a kept kernel printed

    def outline(self, group: list[ir.Operation]) -> str | None:
        """The kernel function ``group`` now calls; None: it stays in place."""
        nested = [nested_ops(op) for op in group]
        reads = [read for op, inside in zip(group, nested) for read in outside_reads(op, inside)]
        plan = _inputs_of(group, reads)
        if plan is None:
            return None
        copied, arguments = plan
        name = self._fresh()
        call = _call(group, name, arguments)       # in the caller, before the ops move out
        func = _new_function(self.module, group, reads, name, copied, arguments)
        if not self.dedupe:
            return name
        # what two kernels with one text have alike: their arguments' types,
        # how many ops are copied in, the ops' names, how many ops they hold
        key = (tuple(v.type for v in arguments), len(copied), tuple(op.name for op in group),
               sum(map(len, nested)))
        same = self.alike.first(key, name, lambda: self._text(func, name))
        if same is None:
            return name
        func.erase()                               # the ops with it: the same kernel exists
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(same)
        self.taken.discard(name)                   # a later kernel may take the name:
        self.printed.pop(name, None)               # not this text
        return same

    def _text(self, func: ir.Operation, name: str) -> str:
        """A kernel function's text without its name (all two copies differ
        in), its whole text kept in ``printed``."""
        text = func.get_asm(enable_debug_info=False, use_local_scope=True, assume_verified=True)
        self.printed[name] = text
        return text.replace(f"@{name}(", "@(", 1)

    def _fresh(self) -> str:
        while f"{KERNEL_STEM}_{self.index}" in self.taken:
            self.index += 1
        name = f"{KERNEL_STEM}_{self.index}"
        self.taken.add(name)
        return name


def _outline_body(func: ir.Operation, kernels: _Kernels, repeats: Repeats) -> None:
    """Outline the kernels of ``func``'s body: each op that does work, with the
    later ops that read its results (a matmul's loop and the store of its
    tile) and only inert ops (allocations, views) between them. A call left
    by xla-inline-schedule-calls (``kernel_repeats``) calls the kernel of the
    first call of its kind, or where none was made yet, or the call would
    join an open kernel, has its function's body copied in."""
    current: list[ir.Operation] = []
    for op in [op.operation for op in func.regions[0].blocks[0].operations]:
        kind = None
        if repeats.is_repeat(op):
            if not current:
                kind, arguments = repeats.kind(op)
                if repeats.kernel_of.get(kind) is not None and kernels.dedupe:
                    repeats.call_kernel(op, repeats.kernel_of[kind], arguments)
                    continue
            op = repeats.copy_in(op)
        if does_work(op):
            current.append(op)
        elif current and not inert(op):
            current = []                           # its results escape to a call, a store...
            continue
        if current and _closed(current, func):
            made = kernels.outline(current)
            if kind is not None and current == [op]:
                repeats.kernel_of[kind] = made
            current = []


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


def _inputs_of(group: list[ir.Operation], reads: list[tuple[ir.Operation, int, ir.Value]]
               ) -> tuple[list[ir.Operation], list[ir.Value]] | None:
    """``(ops to copy in, in order; values to pass)``, or None if some value
    the kernel reads cannot be passed as a plain pointer or number.
    ``reads``: the group's ops' ``outside_reads``, in order."""
    copied: list[ir.Operation] = []
    arguments: list[ir.Value] = []
    seen: set = set()

    def visit(value: ir.Value) -> bool:
        if value in seen:
            return True
        seen.add(value)
        owner = value.owner
        if not isinstance(owner, ir.Block) and copied_in(owner.operation):
            if not all(visit(v) for v in owner.operation.operands):
                return False
            copied.append(owner.operation)
            return True
        arguments.append(value)
        return passable(value.type)

    seen.update(r for op in group for r in op.results)   # made inside the kernel
    if not all(visit(value) for _, _, value in reads) or _frees(reads, set(arguments)):
        return None
    return copied, arguments


def _frees(reads: list[tuple[ir.Operation, int, ir.Value]], arguments: set) -> bool:
    """Whether the group frees a buffer it is passed: a bare pointer is the
    buffer's aligned address, which is not what malloc returned."""
    return any(index == 0 and value in arguments and reader.name in ("memref.dealloc", "memref.realloc")
               for reader, index, value in reads)


def _new_function(module: ir.Operation, group: list[ir.Operation],
                  reads: list[tuple[ir.Operation, int, ir.Value]], name: str,
                  copied: list[ir.Operation], arguments: list[ir.Value]) -> ir.Operation:
    """``@name(arguments)`` holding copies of ``copied`` and then the group's
    ops, whose ``reads`` of the caller's values read the kernel's own."""
    context = module.context
    types = [crossing_type(v.type) for v in arguments]
    with group[0].location:
        func = ir.Operation.create("func.func", regions=1, attributes={
            "sym_name": ir.StringAttr.get(name),
            "sym_visibility": ir.StringAttr.get("private"),
            "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [], context)),
            "llvm.no_inline": ir.UnitAttr.get()})      # convert-func-to-llvm keeps it
        ir.InsertionPoint(module.regions[0].blocks[0]).insert(func)
        entry = ir.Block.create_at_start(func.regions[0], types)
        with ir.InsertionPoint(entry):
            received = [bitcast(a, v.type) for a, v in zip(entry.arguments, arguments)]
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
        sent = [bitcast(v, crossing_type(v.type)) for v in arguments]
        return ir.Operation.create("func.call", operands=sent, attributes={
            "callee": ir.FlatSymbolRefAttr.get(name), "no_inline": ir.UnitAttr.get()})
