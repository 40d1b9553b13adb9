"""xla-outline-fusions: each of xla-fuse's kernels in a function of its own
while linalg fuses elementwise ops, so it fuses inside kernels only."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops, symbol_name
from xlac.passes.fusion.inline_fusions import GROUP_ATTR
from xlac.passes.helper_calls import captured_values

CALL_ATTR = "xla.fusion_call"
_STEM = "xla_fusion"
_CONSTANTS = ("stablehlo.constant", "arith.constant")


@dataclass(frozen=True)
class OutlineFusions(ModulePass):
    """Move each run of ops tagged with one `xla.fusion_group` into a private
    function called `no_inline` (constants it reads copied in); with
    `release=true`, let those calls be inlined again.

    Why: upstream `linalg-fuse-elementwise-ops` fuses every single-use
    producer into its consumer, across xla-fuse's kernels: a chain of 10,000
    elementwise ops, which xla-fuse cut into kernels of at most 64 ops,
    became one loop of 10,000 ops, one function that LLVM's -O3 took minutes
    over. Between this pass and its `release=true` twin each kernel of at
    least `min-ops` ops is a function, and fusion stays inside it. Smaller
    kernels still fuse with their neighbours: a layer norm's rsqrt joins the
    normalization (1.2x faster than as two kernels). Example (min-ops=2):

        %a = stablehlo.exponential %x {xla.fusion_group = 3 : i64, ...}
        %b = stablehlo.add %a, %y {xla.fusion_group = 3 : i64, ...}
      becomes
        %b = call @xla_fusion_3(%x, %y) {no_inline, xla.fusion_call}
    """

    name = "xla-outline-fusions"
    release: bool = False
    min_ops: int = 32            # smaller kernels may still fuse with their neighbours

    def run(self, module: ir.Operation) -> None:
        if self.release:
            _release(module)
            return
        taken = {symbol_name(op.operation) for op in module.regions[0].blocks[0].operations
                 if "sym_name" in op.operation.attributes}
        for func in functions(module):
            for block in _blocks(func):
                for run in _runs(block):
                    if len(run) >= self.min_ops:
                        _outline(module, run, _fresh(taken))


def _release(module: ir.Operation) -> None:
    for op in nested_ops(module):
        if op.name == "func.call" and CALL_ATTR in op.attributes:
            del op.attributes[CALL_ATTR]
            del op.attributes["no_inline"]


def _blocks(func: ir.Operation) -> list[ir.Block]:
    """Every block of ``func``, loop bodies included."""
    found = list(func.regions[0].blocks)
    for op in nested_ops(func):
        for region in op.regions:
            found.extend(region.blocks)
    return found


def _runs(block: ir.Block) -> list[list[ir.Operation]]:
    """Consecutive ops of one kernel (constants between them allowed), two or more."""
    runs: list[list[ir.Operation]] = []
    current: list[ir.Operation] = []
    group = None
    for op in [op.operation for op in block.operations]:
        tag = _group(op)
        if tag is not None and tag == group:
            current.append(op)
            continue
        if tag is None and op.name in _CONSTANTS and current:
            continue                               # copied into the kernel that reads it
        if len(current) > 1:
            runs.append(current)
        current, group = ([op], tag) if tag is not None else ([], None)
    if len(current) > 1:
        runs.append(current)
    return runs


def _group(op: ir.Operation) -> int | None:
    if GROUP_ATTR not in op.attributes:
        return None
    return ir.IntegerAttr(op.attributes[GROUP_ATTR]).value


def _fresh(taken: set[str]) -> str:
    index = 0
    while f"{_STEM}_{index}" in taken:
        index += 1
    taken.add(f"{_STEM}_{index}")
    return f"{_STEM}_{index}"


def _outline(module: ir.Operation, run: list[ir.Operation], name: str) -> None:
    inside = {r for op in run for r in op.results}
    captured: list[ir.Value] = []
    for op in run:
        for value in [*op.operands, *captured_values(op)]:
            if value not in inside and value not in captured:
                captured.append(value)
    copied = [v for v in captured if not isinstance(v.owner, ir.Block)
              and v.owner.operation.name in _CONSTANTS]
    arguments = [v for v in captured if v not in copied]
    members = set(run)
    results = [r for op in run for r in op.results
               if any(_outside(use.owner, members) for use in r.uses)]
    with run[0].location:
        call = ir.Operation.create("func.call", results=[r.type for r in results],
                                   operands=arguments, attributes={
                                       "callee": ir.FlatSymbolRefAttr.get(name),
                                       "no_inline": ir.UnitAttr.get(),
                                       CALL_ATTR: ir.UnitAttr.get()},
                                   ip=ir.InsertionPoint(run[0]))
    for result, new in zip(results, call.results):
        for use in list(result.uses):            # the readers after the run, not in it
            if _outside(use.owner, members):
                use.owner.operands[use.operand_number] = new
    with run[0].location:
        func = _function(module, name, arguments, results)
    entry = func.regions[0].blocks[0]
    end = list(entry.operations)[0].operation
    mapping = dict(zip(arguments, entry.arguments))
    for value in copied:
        clone = value.owner.operation.clone(ir.InsertionPoint(end))
        mapping[value] = clone.results[0]
    for op in run:
        op.move_before(end)
        for inner in [op, *nested_ops(op)]:
            for i, value in enumerate(inner.operands):
                if value in mapping:
                    inner.operands[i] = mapping[value]


def _outside(owner, members: set) -> bool:
    op = owner.operation
    while op is not None:
        if op in members:
            return False
        op = op.parent.operation if op.parent is not None else None
    return True


def _function(module: ir.Operation, name: str, arguments: list[ir.Value],
              results: list[ir.Value]) -> ir.Operation:
    types = [v.type for v in arguments]
    func = ir.Operation.create("func.func", regions=1, attributes={
        "sym_name": ir.StringAttr.get(name),
        "sym_visibility": ir.StringAttr.get("private"),
        "function_type": ir.TypeAttr.get(ir.FunctionType.get(types, [r.type for r in results]))})
    ir.InsertionPoint(module.regions[0].blocks[0]).insert(func)
    entry = ir.Block.create_at_start(func.regions[0], types)
    with ir.InsertionPoint(entry):
        ir.Operation.create("func.return", operands=results)   # the run's ops move in before it
    return func
