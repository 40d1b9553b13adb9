"""xla-unmask-contractions: a masked register-tile contraction computed whole."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.plans.loop_trips import constant_index


class UnmaskContractions(ModulePass):
    """Drop the mask of a `vector.mask` around a `vector.contract` whose mask
    leaves every reduced lane on and that has no passthru value.

    Why: the matmul schedules peel the rows a register tile does not fill
    (ViT's 788 = 98 x 8 + 4 rows) and vectorize that last tile masked.
    Lowered to outer products, the mask of the contraction is transposed to
    put k first, and an i1 vector transposes lane by lane: a 192-deep tail
    tile of ViT became 800 inserts and extracts of mask bits per k step,
    about a quarter of the LLVM code of each such kernel and of its compile
    time. The mask is not needed: its off lanes are undefined without a
    passthru (so any value may stand there), the operands are read masked
    (zero-padded), and the tile is written back masked. Over reduced lanes
    the mask does matter (a sum must skip them): only contractions whose
    mask is a `vector.create_mask` or `vector.constant_mask` with constant,
    full bounds on every reduced dim are unmasked.

    Example:
        %m = vector.create_mask %rows, %c32, %c1 : vector<8x32x1xi1>
        %r = vector.mask %m { vector.contract ... %a, %b, %c } : ... -> vector<8x32xf32>
    becomes
        %r = vector.contract ... %a, %b, %c
    """

    name = "xla-unmask-contractions"

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "vector.mask":
                inner = _masked_contraction(op)
                if inner is not None:
                    _unmask(op, inner)


def _masked_contraction(mask_op: ir.Operation) -> ir.Operation | None:
    """The contraction ``mask_op`` masks, if dropping the mask keeps its meaning."""
    if len(mask_op.operands) != 1:                    # a passthru (not allowed on contractions today)
        return None
    body = [op.operation for op in mask_op.regions[0].blocks[0].operations]
    if len(body) != 2 or body[0].name != "vector.contract":
        return None
    contract = body[0]
    reduced = [i for i, kind in enumerate(ir.ArrayAttr(contract.attributes["iterator_types"]))
               if "reduction" in str(kind)]
    bounds = _mask_bounds(mask_op.operands[0])
    shape = ir.VectorType(mask_op.operands[0].type).shape
    if bounds is None or any(bounds[i] is None or bounds[i] < shape[i] for i in reduced):
        return None
    return contract


def _mask_bounds(mask: ir.Value) -> list[int | None] | None:
    """Per dim, the constant count of lanes a mask leaves on (None: not constant)."""
    owner = mask.owner
    if not isinstance(owner, ir.OpView):
        return None
    if owner.name == "vector.constant_mask":
        return list(ir.DenseI64ArrayAttr(owner.attributes["mask_dim_sizes"]))
    if owner.name == "vector.create_mask":
        return [constant_index(value) for value in owner.operands]
    return None


def _unmask(mask_op: ir.Operation, contract: ir.Operation) -> None:
    with ir.InsertionPoint(mask_op):
        whole = contract.clone()
    for old, new in zip(mask_op.results, whole.results):
        old.replace_all_uses_with(new)
    mask_op.erase()
