"""xla-outline-fusions: each of xla-fuse's kernels in a function of its own
while linalg fuses elementwise ops, so it fuses inside kernels only."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops
from xlac.passes.fusion.inline_fusions import GROUP_ATTR, KIND_ATTR
from xlac.passes.fusion.op_classes import CONSTANT, ELEMENTWISE, MOVEMENT, is_expensive, iteration_size, op_class
from xlac.passes.helper_calls import fresh_name, symbols
from xlac.passes.outline import outline_ops
from xlac.record import record

CALL_ATTR = "xla.fusion_call"
# the consumers that would redo a fused expensive op per point of their bigger loop:
# a dot's or convolution's epilogue, and a reduction's producers (both as xla-fuse kinds)
_RECOMPUTING_KINDS = ("output", "input")
_STEM = "xla_fusion"
_CONSTANTS = ("stablehlo.constant", "arith.constant")
_LOOPS = ("scf.while", "scf.for")


@record
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
    normalization (1.2x faster than as two kernels: the row schedule computes
    it once per vector of a row). But a kernel of any size is a function when
    it computes an expensive op (sqrt, exp, ...) that a bigger dot or
    convolution epilogue or a bigger reduction reads: xla-fuse kept it apart not to recompute it per
    broadcast element, and linalg would fuse it in anyway (MobileNetV2's batch
    norm after the stem convolution: a per-channel sqrt and divide redone at
    each of 802,816 outputs, 3.4 ms of the kernel's 4.0). Example (min-ops=2):

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
        taken = symbols(module)
        for func in functions(module):
            for block in _blocks(func):
                sizes = _group_sizes(block)
                for run in _runs(block):
                    if len(run) >= self.min_ops or _recomputed_if_fused(run, sizes) \
                            or _elementwise_multi_output(run):
                        outline_ops(module, run, fresh_name(taken, _STEM), {
                            "no_inline": ir.UnitAttr.get(module.context),
                            CALL_ATTR: ir.UnitAttr.get(module.context)})


def _release(module: ir.Operation) -> None:
    """Let the kernels' calls inline, and drop xla-fuse's group numbers, read
    no more: two like ops of two kernels (torch_lstm's scale of 1 in each
    step's kernel) are then one op to cse, and so are the ops they feed."""
    for op in nested_ops(module):
        if op.name == "func.call" and CALL_ATTR in op.attributes:
            del op.attributes[CALL_ATTR]
            del op.attributes["no_inline"]
        if GROUP_ATTR in op.attributes:
            del op.attributes[GROUP_ATTR]


def _blocks(func: ir.Operation) -> list[ir.Block]:
    """Every block of ``func``, loop bodies included."""
    found = list(func.regions[0].blocks)
    for op in nested_ops(func):
        for region in op.regions:
            found.extend(region.blocks)
    return found


def _runs(block: ir.Block) -> list[list[ir.Operation]]:
    """Consecutive ops of one kernel (constants between them allowed), two or
    more, not all constants: canonicalize hoists a kernel's constants to the
    top of the block, where they were a run of their own when another
    kernel's ops came before the rest (i0e/i1e's 59 coefficients: a function
    returning 29 full-size splats, each then filled in memory and read by
    the kernel, not folded into it)."""
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
        _close(current, runs)
        current, group = ([op], tag) if tag is not None else ([], None)
    _close(current, runs)
    return runs


def _close(run: list[ir.Operation], runs: list[list[ir.Operation]]) -> None:
    """Keep ``run`` if it computes: constants alone are copied into their readers."""
    if len(run) > 1 and any(op.name not in _CONSTANTS for op in run):
        runs.append(run)


def _group_sizes(block: ir.Block) -> dict[int, int]:
    """Each kernel's loop size: the most points any of its ops visits."""
    sizes: dict[int, int] = {}
    for op in block.operations:
        tag = _group(op.operation)
        if tag is not None:
            sizes[tag] = max(sizes.get(tag, 0), iteration_size(op.operation))
    return sizes


def _recomputed_if_fused(run: list[ir.Operation], sizes: dict[int, int]) -> bool:
    """Whether ``run`` computes an expensive op and a dot's or convolution's
    epilogue, or a reduction's producers, of a bigger loop read one of its
    results: fused there, it would run once per point of that loop (the
    N-body force's `(r^2 + eps)^-1.5` per pair, fused into the sum over the
    pairs' x, y and z: three square roots and divides a pair)."""
    if not any(is_expensive(op) for op in run):
        return False
    members, size = set(run), sizes.get(_group(run[0]), 0)
    for op in run:
        for result in op.results:
            for use in result.uses:
                user = use.owner.operation
                if user not in members and _kind(user) in _RECOMPUTING_KINDS \
                        and sizes.get(_group(user), 0) > size:
                    return True
    return False


def _elementwise_multi_output(run: list[ir.Operation]) -> bool:
    """A multi-output kernel of elementwise ops in a loop body: xla-merge-kernel-generics
    makes it one loop nest, as the small kernel of igamma's series loop (7 results
    of 20 ops, 11 loop nests a trip when fused with its neighbours instead).
    Outside loops such kernels still fuse with their neighbours (torch_lstm's
    two, unrolled: two kernels more when outlined). Nor when a reduction's
    kernel reads a result: there linalg fuses the producer into the sum
    (jax_nbody's step: the pairs' 256x256x3 differences, written and read
    back once outlined, 1.8 -> 2.7 ms a call at x86-64-v3)."""
    classes = [op_class(op) for op in run]
    return _kind(run[0]) == "multi_output" and len(classes) - classes.count(CONSTANT) >= 2 \
        and all(c in (ELEMENTWISE, MOVEMENT, CONSTANT) for c in classes) \
        and run[0].parent is not None and run[0].parent.name in _LOOPS \
        and not _feeds_a_reduction(run)


def _feeds_a_reduction(run: list[ir.Operation]) -> bool:
    members = set(run)
    return any(use.owner.operation not in members and _kind(use.owner.operation) in _RECOMPUTING_KINDS
               for op in run for result in op.results for use in result.uses)


def _kind(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes[KIND_ATTR]).value if KIND_ATTR in op.attributes else ""


def _group(op: ir.Operation) -> int | None:
    if GROUP_ATTR not in op.attributes:
        return None
    return ir.IntegerAttr(op.attributes[GROUP_ATTR]).value


