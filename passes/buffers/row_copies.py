"""Row loops of vector copies for xla-strided-copy-to-linalg: the helper's
text for one copy or for a group of copies that fill one buffer's rows side
by side (an inner concatenate's operands after bufferization), and how such
groups are found."""

from __future__ import annotations

from xlac.mlir import ir

ROW_BYTES = 64                  # one AVX-512 vector, two AVX2 ones: the copy's step along a row
_WIDTHS = (1, 8, 16, 32, 64)    # element widths copied by vectors (not index, complex); an
#                                 i1 is a byte in memory (xla-i1-memory-as-i8 moves its vectors)
# ops that only make views (no memory effect): a group's copies may have them between
_VIEW_OPS = frozenset({"memref.subview", "memref.collapse_shape", "memref.expand_shape",
                       "memref.cast", "arith.constant"})
_VIEWS = _VIEW_OPS - {"arith.constant"}     # of a buffer: its first operand


def vector_element(element: ir.Type) -> bool:
    return isinstance(element, ir.FloatType | ir.IntegerType) and element.width in _WIDTHS


def copies_rows(copy: ir.Operation) -> bool:
    """Whether ``row_copy_text`` takes ``copy``: rank 2 or more, rows of a static
    length, contiguous on both sides, of an element vectors copy."""
    source, target = (ir.MemRefType(v.type) for v in copy.operands)
    return source.rank >= 2 and vector_element(source.element_type) and source.shape[-1] >= 0 \
        and all(t.get_strides_and_offset()[0][-1] == 1 for t in (source, target))


def row_copy_text(copies: list[ir.Operation], name: str, chunks: int = 1) -> str:
    """``@name(%src0, %dst0, %src1, %dst1, ...)``: ``copies`` (``copies_rows``
    each, all of one outer shape) as one nest of loops over the outer dims,
    each row of every copy in turn copied in vectors of ``ROW_BYTES``.
    ``chunks`` > 1: the outermost loop in that many chunks of an scf.forall."""
    types = [[ir.MemRefType(v.type) for v in copy.operands] for copy in copies]
    first = types[0][0]
    rank = first.rank
    constants = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index"]
    loops, indices = [], []
    for dim in range(rank - 1):
        size = first.shape[dim]
        constants += [f"%d{dim} = arith.constant {dim} : index",
                      f"%n{dim} = memref.dim %src0, %d{dim} : {first}"] if size < 0 \
            else [f"%n{dim} = arith.constant {size} : index"]
        loops.append(f"scf.for %i{dim} = %c0 to %n{dim} step %c1 {{")
        indices.append(f"%i{dim}")
    split = chunks > 1 and first.shape[0] > 1
    if split:
        chunk = -(-first.shape[0] // chunks)
        constants.append(f"%chunk = arith.constant {chunk} : index")
        loops[0:1] = [f"scf.forall (%part) in ({-(-first.shape[0] // chunk)}) {{",
                      "%lo = arith.muli %part, %chunk : index",
                      "%end = arith.addi %lo, %chunk : index",
                      "%hi = arith.minsi %end, %n0 : index",
                      "scf.for %i0 = %lo to %hi step %c1 {"]
    rows = []
    for index, (source, target) in enumerate(types):
        more, row = _one_row(index, source, target, indices)
        constants += more
        rows += row
    lines = constants + loops + rows + ["}"] * (rank - 1 + split)
    arguments = ", ".join(f"%src{k}: {source}, %dst{k}: {target}" for k, (source, target) in enumerate(types))
    body = "\n  ".join(lines)
    return f"func.func private @{name}({arguments}) {{\n  {body}\n  return\n}}\n"


def _one_row(index: int, source: ir.MemRefType, target: ir.MemRefType,
             indices: list[str]) -> tuple[list[str], list[str]]:
    """(constants, body) copying row ``indices`` of ``%src<index>`` to ``%dst<index>``."""
    element = source.element_type
    length = source.shape[-1]
    lanes = min(length, max(1, ROW_BYTES // max(1, element.width // 8)))
    full = length // lanes * lanes
    zero = "0.0" if isinstance(element, ir.FloatType) else "0"
    k = index
    constants = [f"%pad{k} = arith.constant {zero} : {element}",
                 f"%lanes{k} = arith.constant {lanes} : index", f"%full{k} = arith.constant {full} : index"]
    copy = lambda at, width, value: _vector_copy(k, at, width, element, source, target, value)  # noqa: E731
    if full == lanes:
        body = copy(indices + ["%c0"], lanes, f"%v{k}")
    elif full:
        body = [f"scf.for %j{k} = %c0 to %full{k} step %lanes{k} {{",
                *copy(indices + [f"%j{k}"], lanes, f"%v{k}"), "}"]
    else:
        body = []
    if full < length:
        body += copy(indices + [f"%full{k}"], length - full, f"%tail{k}")
    return constants, body


def _vector_copy(k: int, indices: list[str], lanes: int, element: ir.Type, source, target,
                 value: str) -> list[str]:
    at = ", ".join(indices)
    vector = f"vector<{lanes}x{element}>"
    return [f"{value} = vector.transfer_read %src{k}[{at}], %pad{k} {{in_bounds = [true]}} : {source}, {vector}",
            f"vector.transfer_write {value}, %dst{k}[{at}] {{in_bounds = [true]}} : {vector}, {target}"]


def side_by_side_groups(copies: list[ir.Operation]) -> list[list[ir.Operation]]:
    """``copies`` (in program order) as groups to copy in one row loop: runs of
    copies in one block, only view ops between, each ``copies_rows``, of one
    outer shape and element, whose targets are disjoint column ranges of one
    row-major buffer that no source is a view of. A copy fitting no group is
    a group of its own. Why: written row by row, the buffer fills in order
    (each row's pieces one after the other), as XLA's concatenate does, where
    copying one operand after the other wrote every row twice, in halves."""
    place = _places(copies)
    groups: list[list[ir.Operation]] = []
    for copy in copies:
        last = groups[-1][-1] if groups else None
        if last is not None and place[copy][0] == place[last][0] \
                and place[copy][2] == place[last][2] + 1 and _joins(groups[-1], copy):
            groups[-1].append(copy)
        else:
            groups.append([copy])
    return groups


def _places(copies: list[ir.Operation]) -> dict:
    """{copy: (its block's index, its index there, the ops before it that are
    not views)}: two copies with only views between have consecutive counts
    (each block's ops walked once)."""
    place, blocks = {}, []
    wanted = set(copies)
    for copy in copies:
        if copy in place:
            continue
        block = copy.block
        blocks.append(block)
        others = 0
        for index, op in enumerate(block.operations):
            op = op.operation
            if op in wanted:
                place[op] = (len(blocks) - 1, index, others)
            if op.name not in _VIEW_OPS:
                others += 1
    return place


def _joins(group: list[ir.Operation], copy: ir.Operation) -> bool:
    head = group[0]
    if not (copies_rows(head) and copies_rows(copy)):
        return False
    source, target = (ir.MemRefType(v.type) for v in copy.operands)
    first_source, first_target = (ir.MemRefType(v.type) for v in head.operands)
    if source.shape[:-1] != first_source.shape[:-1] or source.element_type != first_source.element_type \
            or not source.has_static_shape or not first_source.has_static_shape:
        return False
    root = _root(head.operands[1])
    if _root(copy.operands[1]) != root or not is_identity(ir.MemRefType(root.type)):
        return False
    if any(_root(member.operands[0]) == root for member in [*group, copy]):
        return False
    strides = first_target.get_strides_and_offset()[0]
    if target.get_strides_and_offset()[0] != strides or len(strides) < 2 or strides[-2] <= 0 \
            or any(stride <= 0 or stride % strides[-2] for stride in strides[:-1]):
        return False
    return _disjoint_spans([*group, copy], strides[-2])


def _disjoint_spans(group: list[ir.Operation], row_stride: int) -> bool:
    """Whether the group's targets take disjoint column ranges within one row
    (of the common ``row_stride``), each at a static offset. With every outer
    stride a multiple of ``row_stride``, two elements of different targets
    then never meet: their offsets differ by less than a row, their rows'
    starts by a multiple of one (or by nothing, and then the ranges part them)."""
    spans = []
    for member in group:
        target = ir.MemRefType(member.operands[1].type)
        offset = target.get_strides_and_offset()[1]
        if offset < 0 or offset >= 1 << 62:            # dynamic offset
            return False
        spans.append((offset, offset + target.shape[-1]))
    spans.sort()
    return all(end <= start for (_, end), (start, _) in zip(spans, spans[1:])) \
        and spans[-1][1] - spans[0][0] <= row_stride


def _root(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is a view of (through subviews, collapses, casts)."""
    while not isinstance(value.owner, ir.Block) and value.owner.operation.name in _VIEWS:
        value = value.owner.operation.operands[0]
    return value


def is_identity(memref: ir.MemRefType) -> bool:
    """Whether ``memref`` has the identity layout (row-major, offset 0)."""
    return isinstance(memref.layout, ir.AffineMapAttr) \
        and memref.layout.value == ir.AffineMap.get_identity(memref.rank)
