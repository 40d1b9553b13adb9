"""A kernel the program runs more than once (a transformer's twelve layers),
outlined once: xla-inline-schedule-calls leaves the repeated calls of a
scheduled kernel function as calls (``REPEAT``) and xla-outline-kernels copies
the body in at the first call of each kind, outlines it, and points the calls
of the same kind at that kernel.

Why: a copy per call made each of them be copied in, walked, built into a
function, printed and erased again as a twin of the first (ViT: 166 kernels
made, 135 of them twins), all to find the 31 kernel functions the schedules
had already shared.

Two calls are of one kind when the kernels their copies would make are the
same op for op: the same function, and the values its body reads from the
call (an argument, or views and constants copied into the kernel) built the
same way, with the same ones equal (``Repeats.kind``). The function each
kernel becomes, and the arguments of its call, are then those the copy
would get.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import nested_ops, symbol_name, text_of
from xlac.passes.cpu.kernel_reads import bitcast, copied_in, crossing_type, does_work, outside_reads, passable
from xlac.passes.outline import inline_call

# on a call xla-inline-schedule-calls left for xla-outline-kernels
REPEAT = "xla.repeat"


def repeatable(func: ir.Operation, defined: set[str]) -> bool:
    """Whether calls of kernel function ``func`` may be left for
    xla-outline-kernels: its body is values to copy in (constants, views),
    then one op that does work, has no results and calls no function of
    ``defined`` (those with a body, which the inliner would put in), and the
    return. Such a body copied in at a call outlines as that one op, with
    the copies of the values it reads: nothing of it is left in the caller."""
    ops = [op.operation for op in func.regions[0].blocks[0].operations]
    if len(ops) < 2 or ops[-1].operands or len(func.regions[0].blocks) != 1:
        return False
    work = ops[-2]
    return (all(copied_in(op) and not op.regions for op in ops[:-2])
            and does_work(work) and not work.results
            and not any(op.name == "func.call" and _callee(op) in defined for op in nested_ops(work)))


class Repeats:
    """The calls xla-inline-schedule-calls left, and the kernel each kind became."""

    def __init__(self, module: ir.Operation):
        self.functions = {symbol_name(op.operation): op.operation
                          for op in module.regions[0].blocks[0].operations
                          if op.operation.name == "func.func"}
        self.kernel_of: dict[tuple, str | None] = {}     # kind -> kernel function, None: stays in place
        self.reads: dict[str, list[ir.Value]] = {}       # function -> what its work op reads, in order
        self.own: dict[str, dict[ir.Value, str]] = {}    # function -> its body's values, numbered
        self.texts: dict[ir.Operation, tuple] = {}
        self.called: set[str] = set()

    @staticmethod
    def is_repeat(op: ir.Operation) -> bool:
        return op.name == "func.call" and REPEAT in op.attributes

    def kind(self, call: ir.Operation) -> tuple[tuple, list[ir.Value]]:
        """``(kind of call, what its kernel would be passed)``: the walk of
        ``_inputs_of`` in xla-outline-kernels over the values the copy would
        read, each value written down as it is built (an argument of its type,
        a copied op of its text, one seen before by its number)."""
        name = _callee(call)
        self.called.add(name)
        func = self.functions[name]
        entry = func.regions[0].blocks[0]
        numbers: dict[ir.Value, int] = {}
        marks: list = [name]
        reads, own = self._reads(name, func)
        arguments: list[ir.Value] = []

        def visit(value: ir.Value) -> None:
            if isinstance(value.owner, ir.Block) and value.owner == entry:
                value = call.operands[ir.BlockArgument(value).arg_number]   # the copy reads the call's
            if value in numbers:
                marks.append(numbers[value])
                return
            numbers[value] = len(numbers)
            owner = value.owner
            if not isinstance(owner, ir.Block) and copied_in(owner.operation):
                for operand in owner.operation.operands:
                    visit(operand)
                # the function's own ops are the same in every copy: named by their place
                marks.append(own[value] if value in own else
                             (self._text(owner.operation), ir.OpResult(value).result_number))
            else:
                arguments.append(value)
                marks.append(text_of(value.type) if passable(value.type) else None)

        for value in reads:
            visit(value)
        return tuple(marks), arguments

    def _reads(self, name: str, func: ir.Operation) -> tuple[list[ir.Value], dict[ir.Value, str]]:
        """The values from outside the work op that it reads, in the order of
        its ``outside_reads`` (what a copy of it reads, but for the call's
        values), and a mark for each value the body makes."""
        if name not in self.reads:
            ops = [op.operation for op in func.regions[0].blocks[0].operations]
            seen: dict[ir.Value, None] = {}
            for _, _, value in outside_reads(ops[-2]):
                seen.setdefault(value)
            self.reads[name] = list(seen)
            self.own[name] = {result: f"{i}:{j}" for i, op in enumerate(ops)
                              for j, result in enumerate(op.results)}
        return self.reads[name], self.own[name]

    def _text(self, op: ir.Operation) -> tuple:
        """What a copy of ``op`` (no regions; its operands marked apart) is
        printed from. Not ``get_asm``: an op of the entry is printed with the
        names of the whole entry, which it numbers first (1.5 ms a view on ViT)."""
        if op not in self.texts:
            named = [op.attributes[i] for i in range(len(op.attributes))]
            self.texts[op] = (op.name, tuple((a.name, text_of(a.attr)) for a in named),
                              tuple(text_of(v.type) for v in op.operands),
                              tuple(text_of(r.type) for r in op.results))
        return self.texts[op]

    def copy_in(self, call: ir.Operation) -> ir.Operation:
        """The work op of a copy of the function's body put in place of ``call``,
        located at it, as xla-inline-schedule-calls would have put it."""
        name = _callee(call)
        self.called.add(name)
        return inline_call(call, self.functions[name], copy=True, relocate=True)[-1]

    def call_kernel(self, call: ir.Operation, kernel: str, arguments: list[ir.Value]) -> None:
        """``call`` replaced by the call of ``kernel`` its copy would have got."""
        with ir.InsertionPoint(call), call.location:
            sent = [bitcast(v, crossing_type(v.type)) for v in arguments]
            ir.Operation.create("func.call", operands=sent, attributes={
                "callee": ir.FlatSymbolRefAttr.get(kernel), "no_inline": ir.UnitAttr.get()})
        call.erase()

    def erase_functions(self) -> None:
        """The kernel functions whose calls were all left here: none is called now."""
        for name in self.called:
            self.functions[name].erase()


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value
