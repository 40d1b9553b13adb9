"""xla-epilogue-rows: a called register tile's epilogue as a loop over its rows."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops
from xlac.passes.cpu.no_unroll_fill_loops import keep_rolled

MIN_OPS = 16                  # the epilogue's vector ops: below, a loop saves little code
_CALLED = "xlac_ukernel_"
_PURE = ("arith.", "math.")
# ops that may sit between an epilogue's reads and its write (none writes memory)
_BETWEEN = ("affine.apply", "memref.subview", "memref.expand_shape", "memref.collapse_shape",
            "vector.transfer_read", "vector.constant_mask", "ub.poison")


class EpilogueRows(ModulePass):
    """Compute the elementwise epilogue of a register tile that a micro-kernel
    call filled one row of tn lanes at a time, in a loop over the tile's rows
    (kept rolled), rather than on the tm x tn tile at once.

    Why: xla-micro-kernel-calls leaves the contraction to a prebuilt kernel,
    but a fused epilogue stays per program, vectorized at tm x tn: GELU's erf
    (20 FMAs a row) for the 8 rows of a whole tile and again for the 8 rows
    of the masked edge tile (its 3 masked rows dead only after LLVM's DCE).
    ViT's largest function (16% of its LLVM work) and BERT's and GPT-2's
    were such epilogues. A row loop compiles one row's code per tile; each
    element goes through the same operations (bit-identical results), and a
    masked edge tile's loop runs its kept rows only.

    Matched: a ``vector.transfer_write`` of a 2-D vector (its rows the vector's
    first dimension, its columns the memref's minor one), in a block that
    calls a micro-kernel, whose value is a tree of at least MIN_OPS arith and
    math ops on vectors of the tile's shape, with only splat constants and
    transfer reads (rows read, or broadcast to every row) as leaves; masks
    (if any) a constant mask of whole rows, the same on every read and the
    write; nothing between the tree's first op and the write writes memory.

    Example (tm = 8, tn = 32):
        %x = vector.transfer_read %buf[%c0, %c0], %pad : memref<8x32xf32>, vector<8x32xf32>
        ... (GELU on vector<8x32xf32>) ...
        vector.transfer_write %y, %C[%i, %j] : vector<8x32xf32>, memref<...>
    becomes
        scf.for %r = %c0 to %c8 step %c1 {
          %x = vector.transfer_read %buf[%c0 + %r, %c0], %pad : ..., vector<32xf32>
          ... (GELU on vector<32xf32>) ...
          vector.transfer_write %y, %C[%i + %r, %j] : vector<32xf32>, ...
        } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
    """

    name = "xla-epilogue-rows"

    def run(self, module: ir.Operation) -> None:
        for func in functions(module):
            inner = nested_ops(func)
            if not any(_calls_kernel(op) for op in inner):
                continue
            # the blocks first: a rewrite erases ops of ``inner`` (none that holds a block)
            blocks = [block for holder in (func, *inner) for region in holder.regions
                      for block in region.blocks]
            for block in blocks:
                _rows_in(block)


def _calls_kernel(op: ir.Operation) -> bool:
    return op.name == "func.call" and _CALLED in str(op.attributes["callee"])


def _rows_in(block: ir.Block) -> None:
    """Each epilogue written after a micro-kernel call in ``block`` as a row loop."""
    ops = [op.operation for op in block.operations]
    first = next((i for i, op in enumerate(ops) if _calls_kernel(op)), None)
    if first is None:
        return
    for write in [op for op in ops[first + 1:] if op.name == "vector.transfer_write"
                  and len(_shape(op.operands[0]) or ()) == 2]:
        found = _epilogue(write, [op.operation for op in block.operations])
        if found is not None:
            _as_row_loop(write, *found)


def _shape(value: ir.Value) -> list[int] | None:
    return ir.VectorType(value.type).shape if isinstance(value.type, ir.VectorType) else None


def _producer(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _mask_rows(mask: ir.Value, shape: list[int]) -> int | None:
    """The rows a constant mask of whole rows keeps, or None."""
    op = _producer(mask)
    if op is None or op.name != "vector.constant_mask" or _shape(mask) != shape:
        return None
    sizes = list(ir.DenseI64ArrayAttr(op.attributes["mask_dim_sizes"]))
    return sizes[0] if sizes[1] == shape[1] else None


def _row_dims(op: ir.Operation, rank: int) -> tuple[int | None, int] | None:
    """The memref dims of a transfer's vector rows (None: broadcast) and columns."""
    results = ir.AffineMapAttr(op.attributes["permutation_map"]).value.results
    if len(results) != 2:
        return None
    dims = []
    for expr in results:
        if isinstance(expr, ir.AffineDimExpr):
            dims.append(expr.position)
        elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0:
            dims.append(None)
        else:
            return None
    if dims[1] != rank - 1:
        return None
    return dims[0], dims[1]


def _epilogue(write: ir.Operation, block_ops: list[ir.Operation]):
    """(tree ops in block order, rows) of ``write``'s epilogue, or None."""
    shape = _shape(write.operands[0])
    if shape is None or len(shape) != 2 or shape[0] < 2:
        return None
    rows = shape[0]
    if len(write.operands) > 2 + _rank(write.operands[1]):
        rows = _mask_rows(write.operands[-1], shape)
        if rows is None:
            return None
    if _row_dims(write, _rank(write.operands[1])) is None \
            or _row_dims(write, _rank(write.operands[1]))[0] is None:
        return None
    tree, reads, stack = set(), [], [write.operands[0]]
    while stack:
        value = stack.pop()
        op = _producer(value)
        if op is None:
            return None
        if op in tree:
            continue
        if op.name != "arith.constant" and op.block != write.block:
            if not _broadcast_read(op, shape):            # a bias hoisted out of the tile loops
                return None
            continue
        if op.name == "vector.transfer_read":
            found = _read_rows(op, shape)
            if found is None or (found > 0 and found < rows):
                return None
            reads.append(op)
            tree.add(op)
            continue
        if op.name == "arith.constant":
            value_attr = op.attributes["value"]
            if not isinstance(value_attr, ir.DenseElementsAttr) or not value_attr.is_splat:
                return None
            continue
        if not op.name.startswith(_PURE) or op.regions or len(op.results) != 1 \
                or _shape(op.results[0]) != shape:
            return None
        tree.add(op)
        for operand in op.operands:
            if _shape(operand) != shape:
                return None
            stack.append(operand)
    if len(tree) - len(reads) < MIN_OPS:
        return None
    ordered, started = [], False
    for op in block_ops:
        if op == write:
            break
        if op in tree:
            started = True
            ordered.append(op)
            if any(use.owner.operation != write and use.owner.operation not in tree for result in op.results
                   for use in result.uses):
                return None
        elif started and not op.name.startswith(_PURE) and op.name not in _BETWEEN:
            return None
    return ordered, rows


def _broadcast_read(op: ir.Operation, shape: list[int]) -> bool:
    """Whether ``op`` reads one row for every row of the tile, unmasked."""
    if op.name != "vector.transfer_read" or _shape(op.results[0]) != shape:
        return False
    rank = _rank(op.operands[0])
    dims = _row_dims(op, rank)
    return dims is not None and dims[0] is None and len(op.operands) == 2 + rank


def _rank(value: ir.Value) -> int:
    return len(ir.MemRefType(value.type).shape)


def _read_rows(read: ir.Operation, shape: list[int]) -> int | None:
    """Rows ``read`` gives (0: broadcast to every row), or None if not a row read."""
    rank = _rank(read.operands[0])
    dims = _row_dims(read, rank)
    if dims is None or _shape(read.results[0]) != shape:
        return None
    if len(read.operands) > 2 + rank:
        return _mask_rows(read.operands[-1], shape) if dims[0] is not None else None
    return shape[0] if dims[0] is not None else 0


def _as_row_loop(write: ir.Operation, ordered: list[ir.Operation], rows: int) -> None:
    shape = _shape(write.operands[0])
    context = write.context
    index = ir.IndexType.get(context)
    with ir.Location.unknown(context), ir.InsertionPoint(write):
        bounds = [ir.Operation.create("arith.constant", results=[index],
                                      attributes={"value": ir.IntegerAttr.get(index, n)}).result
                  for n in (0, rows, 1)]
        constants = {}
        for op in ordered:
            for operand in op.operands if op.name != "vector.transfer_read" else ():
                made = _producer(operand)
                if made is not None and made.block != write.block and made.name == "vector.transfer_read" \
                        and operand not in constants:          # a broadcast row read outside: its row 0
                    constants[operand] = ir.Operation.create(
                        "vector.extract", results=[ir.VectorType.get(shape[1:], made.results[0].type.element_type)],
                        operands=[operand], attributes={"static_position": ir.DenseI64ArrayAttr.get([0])}).result
                if made is not None and made.name == "arith.constant" and operand not in constants:
                    splat = made.attributes["value"]
                    row_type = ir.VectorType.get(shape[1:], splat.type.element_type)
                    constants[operand] = ir.Operation.create(
                        "arith.constant", results=[row_type],
                        attributes={"value": ir.DenseElementsAttr.get_splat(row_type, splat.get_splat_value())}
                    ).result
        loop = ir.Operation.create("scf.for", operands=bounds, regions=1)
        block = loop.regions[0].blocks.append(index)
    keep_rolled(loop)
    row = block.arguments[0]
    mapped = dict(constants)
    with ir.Location.unknown(context), ir.InsertionPoint(block):
        for op in ordered:
            if op.name == "vector.transfer_read":
                mapped[op.results[0]] = _row_transfer(op, row, None)
            else:
                types = [ir.VectorType.get(shape[1:], ir.VectorType(r.type).element_type) for r in op.results]
                attributes = {name: op.attributes[name] for name in op.attributes}
                mapped[op.results[0]] = ir.Operation.create(
                    op.name, results=types, operands=[mapped[v] for v in op.operands],
                    attributes=attributes).result
        _row_transfer(write, row, mapped[write.operands[0]])
        ir.Operation.create("scf.yield")
    write.erase()
    for op in reversed(ordered):
        op.erase()


def _row_transfer(op: ir.Operation, row: ir.Value, value: ir.Value | None):
    """``op`` (a 2-D transfer) for row ``row`` as a 1-D one, unmasked."""
    source = op.operands[0 if value is None else 1]
    rank = _rank(source)
    row_dim, column_dim = _row_dims(op, rank)
    indices = list(op.operands[1 if value is None else 2:][:rank])
    index = ir.IndexType.get(op.context)
    if row_dim is not None:
        indices[row_dim] = ir.Operation.create("arith.addi", results=[index],
                                               operands=[indices[row_dim], row]).result
    shape = _shape(op.results[0] if value is None else op.operands[0])
    in_bounds = ir.ArrayAttr(op.attributes["in_bounds"])
    attributes = {
        "permutation_map": ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(column_dim)])),
        "in_bounds": ir.ArrayAttr.get([in_bounds[1]]),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, rank, 1, 0] if value is None else [1, 1, rank, 0]),
    }
    if value is None:
        element = ir.VectorType(op.results[0].type).element_type
        return ir.Operation.create("vector.transfer_read", results=[ir.VectorType.get(shape[1:], element)],
                                   operands=[source, *indices, op.operands[1 + rank]],
                                   attributes=attributes).result
    return ir.Operation.create("vector.transfer_write", results=[],
                               operands=[value, source, *indices], attributes=attributes)
