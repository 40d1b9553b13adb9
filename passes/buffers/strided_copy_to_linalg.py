"""xla-strided-copy-to-linalg: copies between strided memrefs as row loops of
vector copies, or as linalg.copy."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlac.mlir import dialect, ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.buffers.strided_row_copy import strided_row_copy_text
from xlac.passes.helper_calls import fresh_name, replace_with_call, symbols

ROW_BYTES = 64                  # one AVX-512 vector, two AVX2 ones: the copy's step along a row
_WIDTHS = (1, 8, 16, 32, 64)    # element widths copied by vectors (not index, complex); an
#                                 i1 is a byte in memory (xla-i1-memory-as-i8 moves its vectors)


@dataclass(frozen=True)
class StridedCopyToLinalg(ModulePass):
    """Rewrite `memref.copy` with a non-identity layout into loops.

    Why: finalize-memref-to-llvm turns such copies into calls to `memrefCopy`
    from MLIR's C runner library, which the JIT does not have (and an AOT
    library should not need). Contiguous copies are left alone: they become
    one memcpy. A copy whose rows (the last dim) are contiguous on both sides
    and of static length (a padded input's interior, a slice) becomes loops
    over the outer dims around 64-byte vector loads and stores along the row
    (`@xla_copy_rows_<n>`, inlined later). As linalg.copy (what other copies
    become) it was a scalar loop nest that LLVM's -O3 vectorized and unrolled
    itself: 60-140 ms of machine code per copy. A copy whose source rows
    step over elements (`x[:, 1::2]`) loads each row's contiguous span and
    shuffles (strided_row_copy.py): as linalg.copy a bool one stayed a
    scalar byte loop. `rows=false` (the CUDA
    pipeline: its kernels map linalg ops to threads) makes every copy a
    linalg.copy.
    """

    name = "xla-strided-copy-to-linalg"
    rows: bool = True

    def run(self, module: ir.Operation) -> None:
        taken = symbols(module)
        for op in module_ops(module):
            if op.name != "memref.copy" or not _is_strided(op):
                continue
            if self.rows:
                _merge_short_rows(op)
            text = _row_copy_text(op, name := fresh_name(taken, "xla_copy_rows")) if self.rows else ""
            if self.rows and not text and _vector_element(ir.MemRefType(op.operands[0].type).element_type):
                text = strided_row_copy_text(op, name, ROW_BYTES)
            if text:
                replace_with_call(module, op, text, name)
                continue
            with ir.InsertionPoint(op), op.location:     # the OpDSL: imported only here
                dialect("linalg").copy(op.operands[0], outs=[op.operands[1]])
            op.erase()


def _row_copy_text(copy: ir.Operation, name: str) -> str:
    """``@name(%src, %dst)``: the copy as row loops of vector copies; "" where
    its rows are not contiguous, not static or not of a vector element."""
    source, target = (ir.MemRefType(v.type) for v in copy.operands)
    element = source.element_type
    rank = source.rank
    if rank < 2 or not _vector_element(element) or source.shape[-1] < 0 \
            or any(ir.MemRefType(t).get_strides_and_offset()[0][-1] != 1 for t in (source, target)):
        return ""
    length = source.shape[-1]
    lanes = min(length, max(1, ROW_BYTES // max(1, element.width // 8)))
    full = length // lanes * lanes
    zero = "0.0" if isinstance(element, ir.FloatType) else "0"
    constants = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
                 f"%pad = arith.constant {zero} : {element}", f"%lanes = arith.constant {lanes} : index",
                 f"%full = arith.constant {full} : index"]
    loops, indices = [], []
    for dim in range(rank - 1):
        size = source.shape[dim]
        constants += [f"%d{dim} = arith.constant {dim} : index",
                      f"%n{dim} = memref.dim %src, %d{dim} : {source}"] if size < 0 \
            else [f"%n{dim} = arith.constant {size} : index"]
        loops.append(f"scf.for %i{dim} = %c0 to %n{dim} step %c1 {{")
        indices.append(f"%i{dim}")
    lines = constants + loops
    if full == lanes:
        lines += _vector_copy(indices + ["%c0"], lanes, element, source, target)
    elif full:
        lines += ["scf.for %j = %c0 to %full step %lanes {",
                  *_vector_copy(indices + ["%j"], lanes, element, source, target), "}"]
    if full < length:
        lines += _vector_copy(indices + ["%full"], length - full, element, source, target, "%tail")
    lines += ["}"] * (rank - 1)
    body = "\n  ".join(lines)
    return f"func.func private @{name}(%src: {source}, %dst: {target}) {{\n  {body}\n  return\n}}\n"


def _merge_short_rows(copy: ir.Operation) -> None:
    """Give ``copy`` operands whose rows are shorter than a vector (a complex
    tensor's 2 parts, xla-complex-as-pairs) their trailing dims merged, where
    both sides hold them contiguously: rows of 2 lanes became one vector copy
    each (a concatenate of c64 pairs along their rows 1.6x XLA, as complex
    0.96x); merged, the rows are whole again."""
    types = [ir.MemRefType(v.type) for v in copy.operands]
    shape = list(types[0].shape)
    if len(shape) < 2 or any(n < 0 for n in shape) or not _vector_element(types[0].element_type) \
            or shape[-1] * types[0].element_type.width // 8 >= ROW_BYTES:
        return
    layouts = [t.get_strides_and_offset() for t in types]
    first = len(shape) - 1                 # the first dim of the contiguous tail on both sides
    while first > 0 and all(strides[first - 1] == strides[first] * shape[first] and
                            strides[-1] == 1 for strides, _ in layouts):
        first -= 1
    if first == len(shape) - 1:
        return
    groups = [[d] for d in range(first)] + [list(range(first, len(shape)))]
    merged = [*shape[:first], math.prod(shape[first:])]
    with ir.InsertionPoint(copy), copy.location:
        for index, (memref, (strides, offset)) in enumerate(zip(types, layouts)):
            layout = None if _is_contiguous(memref) and offset == 0 else \
                ir.StridedLayoutAttr.get(offset, [*strides[:first], 1])   # identity stays identity
            collapsed = ir.MemRefType.get(merged, memref.element_type, layout, memref.memory_space)
            reassociation = ir.ArrayAttr.get([ir.ArrayAttr.get(
                [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in group])
                for group in groups])
            view = ir.Operation.create("memref.collapse_shape", results=[collapsed],
                                       operands=[copy.operands[index]],
                                       attributes={"reassociation": reassociation})
            copy.operands[index] = view.results[0]


def _vector_copy(indices: list[str], lanes: int, element: ir.Type, source, target,
                 value: str = "%v") -> list[str]:
    at = ", ".join(indices)
    vector = f"vector<{lanes}x{element}>"
    return [f"{value} = vector.transfer_read %src[{at}], %pad {{in_bounds = [true]}} : {source}, {vector}",
            f"vector.transfer_write {value}, %dst[{at}] {{in_bounds = [true]}} : {vector}, {target}"]


def _vector_element(element: ir.Type) -> bool:
    return isinstance(element, ir.FloatType | ir.IntegerType) and element.width in _WIDTHS


def _is_strided(copy: ir.Operation) -> bool:
    return not all(_is_contiguous(ir.MemRefType(v.type)) for v in copy.operands)


def _is_contiguous(memref: ir.MemRefType) -> bool:
    """What finalize-memref-to-llvm copies with one memcpy: an identity layout,
    or a static shape in row-major strides; anything else (a dynamic number
    of rows of a strided subview: a chunk of a matmul's C) it makes a call
    to `memrefCopy`."""
    if isinstance(memref.layout, ir.AffineMapAttr) \
            and memref.layout.value == ir.AffineMap.get_identity(memref.rank):
        return True
    if not memref.has_static_shape:
        return False
    strides, _ = memref.get_strides_and_offset()
    expected, running = [], 1
    for size in reversed(memref.shape):
        expected.append(running)
        running *= size
    return list(strides) == expected[::-1]
