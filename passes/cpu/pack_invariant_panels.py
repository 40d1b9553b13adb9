"""xla-pack-invariant-panels: a matmul kernel called in a loop that never
writes its B reads B from panels packed once, before the loop."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, is_within, nested_ops, symbol_name
from xlac.passes.cpu.index_divisors import divisor
from xlac.passes.cpu.plans.schedule_functions import is_schedule_call
from xlac.passes.cpu.register_tile_loops import inside, minor_identity

_LOOPS = ("scf.while", "scf.for")
_BLOCK_BYTES = 512          # of each of B's rows, packed a run at a time
# ops that make another view of a buffer: a write through one is a write to it
_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast",
          "memref.reinterpret_cast", "memref.extract_strided_metadata", "memref.view")
# ops that only read the buffer operands they take
_READS = ("memref.load", "vector.transfer_read", "vector.load", "memref.dim")


class PackInvariantPanels(ModulePass):
    """Where a kernel function (`@xla_scheduled_<n>`) called in an `scf.while`
    or `scf.for` reads a K x N f32 buffer only as a matmul's B, one vector of
    w columns at a time at column offsets that are multiples of w, and the
    loop writes that buffer nowhere: the buffer is copied once before the loop
    into panels of w columns, (N / w) * K rows of w, and the call goes to a
    copy of the kernel reading B[k, c:c+w] at panel row (c / w) * K + k.

    Why: an LSTM step's gate product (8 x 256 . 256 x 1024, B the four gates'
    weights, the same every step) reads B in place in one register tile of
    rows (matmul_epilogue_unpacked.mlir): each k step of a tile loads w
    floats from a row 4 KiB past the last one, past the stride prefetcher's
    reach and a new page each, and the step waited on those loads. In panels
    a tile reads one contiguous run of K * w floats. The same loads of the
    same values in the same order: results are bit for bit the same.

        scf.while ... do {
          func.call @xla_scheduled_6(%a, %B, %bias, %c)
      becomes
        %panels = memref.alloc() : memref<8192x32xf32>     (1024 / 32 * 256 rows)
        func.call @xla_scheduled_panels_256x1024x32(%B, %panels)
        scf.while ... do {
          func.call @xla_scheduled_6_panels(%a, %panels, %bias, %c)
        ...
        memref.dealloc %panels

    Straight-line code too: where two kernels or more in a row of one block
    (kernels put back in place, an `scf.forall` each) read the same K x N
    buffer that way, and nothing between the first and the last writes it,
    the buffer is packed once before the first and each kernel's reads of it
    read the panels. torch_lstm's unrolled steps: each of a layer's 15 gate
    products (8 x 256 . 256 x 1024, its one-tile in-place plan) read the same
    B, 4 KiB between its rows.
    """

    name = "xla-pack-invariant-panels"
    acts_on = frozenset((*_LOOPS, "scf.forall"))

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        functions = {symbol_name(op): op for op in (o.operation for o in body.operations)
                     if op.name == "func.func"}
        rewritten: dict[tuple[str, int], str] = {}
        packers: set[str] = set()
        packed: list = []
        for function in list(functions.values()):
            for call in [op for op in nested_ops(function) if is_schedule_call(op)]:
                callee = functions.get(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
                if callee is not None:
                    with call.location:
                        _pack_one(module, functions, call, callee, rewritten, packers, packed)
        for function in [f for f in functions.values() if f is not None and len(f.regions[0].blocks)]:
            _pack_straight_line(module, function.regions[0].blocks[0], packers)


def _pack_one(module: ir.Operation, functions: dict, call: ir.Operation, callee: ir.Operation,
              rewritten: dict, packers: set, packed: list) -> None:
    """Give ``call``'s first operand that qualifies its panels, if any."""
    for index, operand in enumerate(call.operands):
        width = panel_width(callee, index)
        if width is None:
            continue
        loop = _outermost_unwritten_loop(call, operand)
        if loop is None:
            continue
        k, n = ir.MemRefType(operand.type).shape
        packer = f"xla_scheduled_panels_{k}x{n}x{width}"
        if packer not in packers:
            _append(module, _packer_text(packer, k, n, width))
            packers.add(packer)
        key = (symbol_name(callee), index)
        if key not in rewritten:
            rewritten[key] = _panel_callee(module, callee, index, width)
            functions[rewritten[key]] = None
        done = [p for (at, b, w), p in packed if at == loop and b == operand and w == width]
        panels = done[0] if done else _pack_before(loop, operand, packer, k, n, width)
        packed.append(((loop, operand, width), panels))     # another call on it: the same panels
        call.operands[index] = panels
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(rewritten[key])
        return


def panel_width(callee: ir.Operation, index: int) -> int | None:
    """w where argument ``index`` of ``callee`` is a static K x N f32 buffer,
    N a multiple of w, read only by in-bounds 1-D reads of w floats along a
    row at a column offset that is a multiple of w, each a vector.contract's
    right operand (a matmul tile's row of B); else None."""
    blocks = callee.regions[0].blocks
    if not len(blocks):
        return None
    argument = blocks[0].arguments[index]
    if not _plain_matrix(argument.type):
        return None
    n = ir.MemRefType(argument.type).shape[1]
    widths = set()
    for use in argument.uses:
        read = use.owner
        width = _b_row_read(read, use.operand_number)
        if width is None or n % width or divisor(read.operands[2]) % width:
            return None
        widths.add(width)
    return widths.pop() if len(widths) == 1 and n > min(widths) else None


def _plain_matrix(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType) or ir.MemRefType(t).rank != 2:
        return False
    memref = ir.MemRefType(t)
    strides, offset = memref.get_strides_and_offset()
    return memref.has_static_shape and str(memref.element_type) == "f32" \
        and offset == 0 and strides == [memref.shape[1], 1]


def _b_row_read(read, operand_number: int) -> int | None:
    """The width of a read of B's row feeding a contraction's right side."""
    if read.name != "vector.transfer_read" or operand_number != 0 or len(read.operands) != 4:
        return None                                          # another op, or masked
    vector = ir.VectorType(read.results[0].type)
    if vector.rank != 1 or not minor_identity(read.attributes["permutation_map"], 1) \
            or not all(ir.BoolAttr(b).value for b in ir.ArrayAttr(read.attributes["in_bounds"])):
        return None
    users = [use.owner for use in read.results[0].uses]
    if len(users) != 1 or users[0].name != "vector.shape_cast":
        return None
    contracts = list(users[0].results[0].uses)
    if not contracts or any(u.owner.name != "vector.contract" or u.operand_number != 1 for u in contracts):
        return None
    return vector.shape[0]


def _outermost_unwritten_loop(call: ir.Operation, buffer: ir.Value) -> ir.Operation | None:
    """The outermost loop around ``call`` (in its function, no parallel loop
    between) that ``buffer`` comes from outside of and that never writes it."""
    found = None
    op = call.parent
    while op is not None and op.name != "func.func":
        if op.name in ("scf.forall", "scf.parallel", "omp.parallel"):
            return None
        if op.name in _LOOPS:
            if inside(buffer, op) or _written_in(buffer, op) or _runs_once(op):
                break
            found = op
        op = op.parent
    return found


def _runs_once(loop: ir.Operation) -> bool:
    """Whether an scf.for's constant bounds give it fewer than two iterations."""
    if loop.name != "scf.for":
        return False
    bounds = []
    for value in list(loop.operands)[:3]:
        owner = value.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
            return False
        bounds.append(ir.IntegerAttr(owner.operation.attributes["value"]).value)
    lower, upper, step = bounds
    return step <= 0 or upper - lower <= step


def _written_in(buffer: ir.Value, loop: ir.Operation) -> bool:
    """Whether an op in ``loop`` may write ``buffer`` or a view of it: any use
    there but a read, or a call of a kernel that reads that argument alone."""
    for value in _aliases(_root(buffer)):
        for use in value.uses:
            owner = use.owner
            if not is_within(owner, loop) or owner.name in _VIEWS:
                continue
            if owner.name in _READS or owner.name == "vector.transfer_read" and use.operand_number == 0:
                continue
            if owner.name == "func.call" and _callee_reads_only(owner, use.operand_number):
                continue
            return True
    return False


def _aliases(buffer: ir.Value) -> list[ir.Value]:
    """``buffer`` and every view made of it, transitively."""
    found, work = [], [buffer]
    while work:
        value = work.pop()
        found.append(value)
        work.extend(r for use in value.uses if use.owner.name in _VIEWS for r in use.owner.results
                    if isinstance(r.type, ir.MemRefType) and r not in found)
    return found


def _callee_reads_only(call: ir.Operation, index: int) -> bool:
    table = call.parent
    while table is not None and table.name != "builtin.module":
        table = table.parent
    if table is None:
        return False
    name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    for op in table.regions[0].blocks[0].operations:
        if op.operation.name == "func.func" and symbol_name(op.operation) == name:
            blocks = op.operation.regions[0].blocks
            return bool(len(blocks)) and all(
                u.owner.name == "vector.transfer_read" and u.operand_number == 0
                for u in blocks[0].arguments[index].uses)
    return False


def _root(buffer: ir.Value) -> ir.Value:
    """The buffer ``buffer`` is a view of (itself if none)."""
    while not isinstance(buffer.owner, ir.Block) and buffer.owner.operation.name in _VIEWS:
        buffer = buffer.owner.operation.operands[0]
    return buffer


def _panels_type(k: int, n: int, width: int) -> ir.Type:
    return ir.MemRefType.get([n // width * k, width], ir.F32Type.get())


def _packer_text(name: str, k: int, n: int, width: int) -> str:
    """B's w-column panels one after another: column panel t, row r at panel
    row t K + r. A block of panels at a time (512 bytes of each of B's rows):
    B is read a run of whole cache lines at a time and each panel written in
    order. Column by column, each read a line 4 KiB past the last, an LSTM's
    1 MB took 1.8 ms (x86-64-v3, 8-column panels, loaded machine)."""
    source, panels = f"memref<{k}x{n}xf32>", f"memref<{n // width * k}x{width}xf32>"
    block = math.gcd(n // width, max(1, _BLOCK_BYTES // 4 // width))
    return f"""
func.func private @{name}(%src: {source}, %dst: {panels}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = arith.constant {k} : index
  %w = arith.constant {width} : index
  %block = arith.constant {block} : index
  %t_end = arith.constant {n // width} : index
  %pad = arith.constant 0.0 : f32
  scf.for %first = %c0 to %t_end step %block {{
    %last = arith.addi %first, %block : index
    scf.for %r = %c0 to %k step %c1 {{
      scf.for %t = %first to %last step %c1 {{
        %column = arith.muli %t, %w : index
        %row = vector.transfer_read %src[%r, %column], %pad {{in_bounds = [true]}} : {source}, vector<{width}xf32>
        %start = arith.muli %t, %k : index
        %at = arith.addi %start, %r : index
        vector.transfer_write %row, %dst[%at, %c0] {{in_bounds = [true]}} : vector<{width}xf32>, {panels}
      }}
    }}
  }}
  return
}}"""


def _append(module: ir.Operation, text: str) -> None:
    parsed = ir.Module.parse(text, context=module.context)
    body = module.regions[0].blocks[0]
    for op in list(parsed.body.operations):
        body.append(op.operation)


def _panel_callee(module: ir.Operation, callee: ir.Operation, index: int, width: int) -> str:
    """A copy of ``callee`` whose argument ``index`` is B's panels; its name."""
    name = f"{symbol_name(callee)}_panels"
    copy = callee.clone(ir.InsertionPoint.after(callee))
    copy.attributes["sym_name"] = ir.StringAttr.get(name)
    argument = copy.regions[0].blocks[0].arguments[index]
    k, n = ir.MemRefType(argument.type).shape
    argument.set_type(_panels_type(k, n, width))
    function_type = ir.FunctionType(ir.TypeAttr(copy.attributes["function_type"]).value)
    inputs = list(function_type.inputs)
    inputs[index] = argument.type
    copy.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(function_type.results)))
    for use in list(argument.uses):
        _read_panel_row(use.owner, k, width)
    return name


def _read_panel_row(read: ir.Operation, k: int, width: int) -> None:
    """Make ``read`` of B[r, c:c+w] read panel row (c / w) * K + r, column 0."""
    panel = ir.AffineExpr.get_floor_div(ir.AffineDimExpr.get(0), width)
    at_panel = ir.AffineMap.get(1, 0, [ir.AffineExpr.get_mul(panel, k)])
    with read.location, ir.InsertionPoint(read):
        first = ir.Operation.create("affine.apply", results=[ir.IndexType.get()], operands=[read.operands[2]],
                                    attributes={"map": ir.AffineMapAttr.get(at_panel)}).result
        row = ir.Operation.create("arith.addi", results=[ir.IndexType.get()],
                                  operands=[read.operands[1], first]).result
        zero = ir.Operation.create("arith.constant", results=[ir.IndexType.get()],
                                   attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), 0)}).result
    read.operands[1] = row
    read.operands[2] = zero


def _pack_before(loop: ir.Operation, buffer: ir.Value, packer: str, k: int, n: int, width: int,
                 last: ir.Operation | None = None) -> ir.Value:
    """The panels of ``buffer``, allocated and packed just before ``loop``,
    freed just after it (or after ``last``)."""
    panels_type = _panels_type(k, n, width)
    with loop.location, ir.InsertionPoint(loop):
        panels = ir.Operation.create("memref.alloc", results=[panels_type], attributes={
            "alignment": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 64),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).result
        ir.Operation.create("func.call", operands=[buffer, panels],
                            attributes={"callee": ir.FlatSymbolRefAttr.get(packer)})
    with loop.location, ir.InsertionPoint.after(last or loop):
        ir.Operation.create("memref.dealloc", operands=[panels])
    return panels


def _pack_straight_line(module: ir.Operation, block: ir.Block, packers: set) -> None:
    """Runs of kernels in ``block`` reading one unwritten buffer as B: packed
    once before each run (see PackInvariantPanels)."""
    ops = [op.operation for op in block.operations]
    readers: dict[tuple, list] = {}          # (buffer, w) -> [(position, kernel, its reads)]
    for position, kernel in enumerate(ops):
        if kernel.name != "scf.forall":
            continue
        for (buffer, width), reads in _b_reads(kernel).items():
            readers.setdefault((buffer, width), []).append((position, kernel, reads))
    for (buffer, width), kernels in readers.items():
        for run in _unwritten_runs(ops, buffer, kernels):
            _pack_run(module, buffer, width, run, packers)


def _b_reads(kernel: ir.Operation) -> dict[tuple, list]:
    """The reads in ``kernel`` of a K x N buffer from outside it, as a
    matmul tile's row of B (w columns at offsets a multiple of w), by buffer
    and w; none for a buffer ``kernel`` writes."""
    found: dict[tuple, list] = {}
    for read in nested_ops(kernel):
        if read.name != "vector.transfer_read" or inside(read.operands[0], kernel):
            continue
        buffer = read.operands[0]
        width = _b_row_read(read, 0)
        if width is None or not _plain_matrix(buffer.type):
            continue
        n = ir.MemRefType(buffer.type).shape[1]
        if n % width or n <= width or divisor(read.operands[2]) % width:
            continue
        found.setdefault((buffer, width), []).append(read)
    return {key: reads for key, reads in found.items() if not _written_in(key[0], kernel)}


def _unwritten_runs(ops: list, buffer: ir.Value, kernels: list) -> list[list]:
    """``kernels`` (in block order) cut where an op between two of them may
    write ``buffer``; the runs of two kernels or more."""
    runs, current = [], []
    for position, kernel, reads in kernels:
        if current and any(_written_in(buffer, op) for op in ops[current[-1][0] + 1:position]):
            runs.append(current)
            current = []
        current.append((position, kernel, reads))
    runs.append(current)
    return [run for run in runs if len(run) >= 2]


def _pack_run(module: ir.Operation, buffer: ir.Value, width: int, run: list, packers: set) -> None:
    k, n = ir.MemRefType(buffer.type).shape
    packer = f"xla_scheduled_panels_{k}x{n}x{width}"
    if packer not in packers:
        _append(module, _packer_text(packer, k, n, width))
        packers.add(packer)
    first, last = run[0][1], run[-1][1]
    with first.location:
        panels = _pack_before(first, buffer, packer, k, n, width, last=last)
    for _, _, reads in run:
        for read in reads:
            read.operands[0] = panels
            _read_panel_row(read, k, width)
