"""A copy out of rows that step over elements (``x[:, 1::2]``): vector loads
of the contiguous span of source row and a shuffle to the elements taken.

Used by xla-strided-copy-to-linalg. As linalg.copy such a copy was a scalar
loop nest: LLVM's loop vectorizer made an interleaved load of it for bytes
and wider elements, but not for i1 (a bool slice ran 3x the time of an i8
one on Zen 4, at AVX-512 and AVX2 alike). Here every element type gets the
same code: a load of ``step * lanes`` contiguous elements (what lies between
two elements of one row is inside the same allocation, so it may be read),
one `vector.shuffle` keeping every ``step``-th lane, one store of ``lanes``.
The loads never pass a row's last element: the row's last block is placed
to end at it (it overlaps the block before; a copy may write an element
twice), its load starting ``step - 1`` elements early.
"""

from __future__ import annotations

from xlac.mlir import ir

MAX_STEP = 4          # a load of up to 4 vectors per vector stored; longer steps stay linalg.copy
MIN_LANES = 4         # rows shorter than 5 elements: not worth a shuffle


def strided_row_copy_text(copy: ir.Operation, name: str, row_bytes: int) -> str:
    """``@name(%src, %dst)``: ``copy`` as row loops of span loads and
    shuffles, ``row_bytes`` stored per vector; "" where its source rows do
    not step by 2..MAX_STEP elements, its target rows are not contiguous, or
    the rows are not static and longer than MIN_LANES elements."""
    source, target = (ir.MemRefType(v.type) for v in copy.operands)
    element = source.element_type
    step = source.get_strides_and_offset()[0][-1]
    length = source.shape[-1]
    if source.rank < 2 or not 2 <= step <= MAX_STEP or target.get_strides_and_offset()[0][-1] != 1 \
            or length < 0 or length <= MIN_LANES:
        return ""
    lanes = _lanes(length, max(1, row_bytes // max(1, element.width // 8)))
    rank = source.rank
    lines = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
             f"%step = arith.constant {step} : index",
             f"%pad = arith.constant {'0.0' if isinstance(element, ir.FloatType) else '0'} : {element}",
             *_rows_view(source, (length - 1) * step + 1)]
    span = _span_type(source, (length - 1) * step + 1)
    indices = [f"%i{d}" for d in range(rank - 1)]
    lines += [f"scf.for %i{d} = %c0 to %sz#{d} step %c1 {{" for d in range(rank - 1)]
    ahead = (length - 1) // lanes          # blocks whose load, from their first element, ends in the row
    if ahead:
        lines += [f"%ahead = arith.constant {ahead * lanes} : index",
                  f"%lanes = arith.constant {lanes} : index",
                  "scf.for %j = %c0 to %ahead step %lanes {",
                  "%s = arith.muli %j, %step : index",
                  *_block(indices, "%s", "%j", lanes, step, 0, element, span, target), "}"]
    last = length - lanes                  # the last block, its load ending at the row's last element
    lines += [f"%last = arith.constant {last} : index", f"%back = arith.constant {last * step - step + 1} : index",
              *_block(indices, "%back", "%last", lanes, step, step - 1, element, span, target, "%t")]
    lines += ["}"] * (rank - 1)
    body = "\n  ".join(lines)
    return f"func.func private @{name}(%src: {source}, %dst: {target}) {{\n  {body}\n  return\n}}\n"


def _span_type(source: ir.MemRefType, extent: int) -> str:
    """``source`` with its rows as the ``extent`` contiguous elements they span."""
    outer = ["?"] * (source.rank - 1)
    return f"memref<{'x'.join(outer)}x{extent}x{source.element_type}, strided<[{', '.join(outer)}, 1], offset: ?>>"


def _rows_view(source: ir.MemRefType, extent: int) -> list[str]:
    """``%rows``: the view of ``%src``'s buffer whose rows are the spans of ``%src``'s."""
    rank, element = source.rank, source.element_type
    indices = ", ".join(["index"] * rank)
    return [f"%base, %off, %sz:{rank}, %st:{rank} = memref.extract_strided_metadata %src : {source} "
            f"-> memref<{element}>, index, {indices}, {indices}",
            f"%rows = memref.reinterpret_cast %base to offset: [%off], sizes: "
            f"[{', '.join(f'%sz#{d}' for d in range(rank - 1))}, {extent}], "
            f"strides: [{', '.join(f'%st#{d}' for d in range(rank - 1))}, 1] "
            f": memref<{element}> to {_span_type(source, extent)}"]


def _lanes(length: int, widest: int) -> int:
    """Lanes per vector stored: ``widest`` (a power of two), halved until the
    row holds more than one vector's elements (the last block then starts
    past the first element, so its load's early start stays in the row)."""
    lanes = widest
    while lanes >= length and lanes > MIN_LANES:
        lanes //= 2
    return lanes


def _block(indices: list[str], read_at: str, write_at: str, lanes: int, step: int, skip: int,
           element: ir.Type, span: str, target: ir.MemRefType, value: str = "%v") -> list[str]:
    """Load ``lanes * step`` elements at ``read_at``, keep lanes ``skip``,
    ``skip + step``, ...; store them at ``write_at``."""
    wide, narrow = f"vector<{lanes * step}x{element}>", f"vector<{lanes}x{element}>"
    keep = ", ".join(str(skip + lane * step) for lane in range(lanes))
    at = ", ".join(indices)
    return [f"{value}w = vector.transfer_read %rows[{at}, {read_at}], %pad {{in_bounds = [true]}} : {span}, {wide}",
            f"{value} = vector.shuffle {value}w, {value}w [{keep}] : {wide}, {wide}",
            f"vector.transfer_write {value}, %dst[{at}, {write_at}] {{in_bounds = [true]}} : {narrow}, {target}"]
