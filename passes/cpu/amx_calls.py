"""xla-amx-calls: a bf16 matmul xla-amx-contractions marked becomes a
thread loop of calls to the AMX micro-kernel (xlac.targets.cpu.amx_kernels)."""

from __future__ import annotations

import os

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, nested_ops
from xlac.passes.cpu import amx_handoff, amx_pack
from xlac.passes.cpu.amx_contractions import ALIGN, MARK, ZEROS
from xlac.passes.cpu.amx_epilogue import epilogue_text, find_epilogue, unmark_epilogues
from xlac.passes.cpu.amx_pack import ROWS
from xlac.passes.helper_calls import fresh_symbol, parse_at
from xlac.record import record

SYMBOL = "xlac_ukernel_amx_bf16_32x32"    # xlac.targets.cpu.amx_kernels.SYMBOL
# the kernels of option `kernel`, one ABI: AMX's, and AVX512-BF16's where there is no AMX
KERNELS = {"amx": SYMBOL, "dpbf16": "xlac_ukernel_dpbf16_32x32"}   # ... dpbf16_kernels.SYMBOL
# the integer kernels of option `integer-kernel` (xlac.targets.cpu.imad_kernels: its VARIANTS, symbol())
INTEGER_KERNELS = ("pmaddwd256", "vpdpwssd256", "pmaddwd512", "vpdpwssd512")
BF16_TYPES, INTEGER_TYPES = ("bf16", "bf16", "f32"), ("i16", "i16", "i32")   # A, B, C of each kind


def integer_symbol(variant: str) -> str:
    return f"xlac_ukernel_imad_{variant}_32x32"


@record
class AmxCalls(ModulePass):
    """Replace each `linalg.matmul {xla.amx}` on memrefs (bf16 A[m x k],
    B[k x n], f32 C[m x n], all multiples of 32, unit inner strides) by a
    call of a function holding `scf.forall` over C's blocks of ROWS rows and
    groups of 32-column chunks (and a `linalg.batch_matmul`'s batch), each
    chunk a call of `xlac_ukernel_amx_bf16_32x32(c, ldc, a, lda, b, ldb, k,
    rows, accumulate)`. A `linalg.fill` of zero into C just before
    the matmul is dropped (the kernel starts from zeros: accumulate 0).
    A matmul that does not fit stays (scalar loops later: slow, still right).
    Option `threads` (0: every core this process may use): the thread loop
    runs groups of chunks, as few as fill them (xlac.passes.cpu.amx_pack).
    Option `kernel`: amx, or dpbf16 (xlac.targets.cpu.dpbf16_kernels: the same
    ABI and layouts on AVX512-BF16's `vdpbf16ps`, for CPUs without AMX).
    Option `integer-kernel`: "" (none), or the variant of
    xlac.targets.cpu.imad_kernels that a matmul of i16 A and B into i32 C
    (xla-amx-contractions' 8-bit integers) calls: the same ABI and layouts,
    2-byte operands and 4-byte C as bf16 and f32."""

    name = "xla-amx-calls"
    acts_on = frozenset({"linalg.matmul", "linalg.batch_matmul"})
    threads: int = 0
    kernel: str = "amx"
    integer_kernel: str = ""

    def run(self, module: ir.Operation) -> None:
        marked = [op for op in module_ops(module) if op.name in self.acts_on and MARK in op.attributes]
        if self.kernel not in KERNELS:
            raise ValueError(f"xla-amx-calls: kernel={self.kernel}: one of {', '.join(KERNELS)}")
        if self.integer_kernel and self.integer_kernel not in INTEGER_KERNELS:
            raise ValueError(f"xla-amx-calls: integer-kernel={self.integer_kernel}: one of "
                             f"{', '.join(INTEGER_KERNELS)}")
        symbols = {BF16_TYPES: KERNELS[self.kernel]}
        if self.integer_kernel:
            symbols[INTEGER_TYPES] = integer_symbol(self.integer_kernel)
        declared, threads = set(), self.threads or len(os.sched_getaffinity(0))
        fitting = [op for op in marked if _fits(op, symbols)]
        epilogues = [(op, e if fused else None) for op in fitting for e, fused in [find_epilogue(op)]]
        handoffs = amx_handoff.handoffs(epilogues, fitting, threads)
        # before any op is erased (the handoffs' ops are invalid once they are)
        roles = [_Packed(any(op == first for first, _ in handoffs), any(op == second for _, second in handoffs))
                 for op in marked]
        for op, packed in zip(marked, roles):
            zeros = ZEROS in op.attributes
            if not _fits(op, symbols):         # scalar loops: slow, still right
                del op.attributes[MARK]
                if zeros:
                    del op.attributes[ZEROS]
                    _fill_zeros(op)
                continue
            name = fresh_symbol(module, "xla_amx_matmul_")
            epilogue, fused = find_epilogue(op)
            symbol = symbols[_elements(op)]
            _add_functions(module, op, _function_text(op, name, not zeros, epilogue, fused, threads, packed,
                                                      symbol), symbol, symbol not in declared)
            declared.add(symbol)
            outputs = [epilogue.operands[1]] if epilogue is not None else []
            # at the consumer: its output may be allocated after the matmul
            at = epilogue if epilogue is not None else op
            ir.Operation.create("func.call", operands=[*op.operands, *outputs],
                                attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
                                loc=op.location, ip=ir.InsertionPoint(at))
            for done in {op, at}:
                done.erase()
        unmark_epilogues(nested_ops(module))    # any left: the schedules are past, scalar loops


@record
class _Packed:
    """A matmul's part in a handoff (xlac.passes.cpu.amx_handoff): its
    epilogue writes the next matmul's A packed (``out``), or its A is packed
    already (``a``)."""
    out: bool = False
    a: bool = False


def _elements(op: ir.Operation) -> tuple[str, ...]:
    """The element types of the matmul's A, B and C."""
    return tuple(str(ir.MemRefType(v.type).element_type) for v in op.operands)


def _fits(op: ir.Operation, symbols: dict) -> bool:
    """Whether a kernel of ``symbols`` (by element types) takes the matmul as it lies."""
    types = [ir.MemRefType(v.type) for v in op.operands]
    if _elements(op) not in symbols:
        return False
    if any(not t.has_static_shape or any(d % ALIGN for d in t.shape[-2:]) for t in types):
        return False
    return all(t.get_strides_and_offset()[0][-1] == 1 for t in types)


def _fill_zeros(op: ir.Operation) -> None:
    """A `linalg.fill` of 0.0 into the matmul's C before it."""
    c = op.operands[2]
    element = ir.MemRefType(c.type).element_type
    zero = "0.0" if isinstance(element, ir.FloatType) else "0"
    parsed = parse_at(f"func.func private @f(%c: {c.type}) {{\n  %z = arith.constant {zero} : {element}\n"
                      f"  linalg.fill ins(%z : {element}) outs(%c : {c.type})\n  return\n}}\n", op)
    block = list(parsed.body.operations)[0].operation.regions[0].blocks[0]
    for inner in [o.operation for o in block.operations][:-1]:
        inner.move_before(op)
        inner.replace_uses_of_with(block.arguments[0], c)


def _metadata(name: str, type_: str, element: str, rank: int) -> list[str]:
    results = ", ".join([f"%{name}base", f"%{name}off", *[f"%{name}s{d}" for d in range(rank)],
                         *[f"%{name}st{d}" for d in range(rank)]])
    return [f"  {results} = memref.extract_strided_metadata %{name} : {type_} -> "
            f"memref<{element}>, index, {', '.join(['index'] * 2 * rank)}",
            f"  %{name}ptr = memref.extract_aligned_pointer_as_index %{name}base : memref<{element}> -> index"]


def _address(name: str, rank: int, row: str | None, col: str | None, bytes_: str) -> list[str]:
    """``%{name}at``: the address of ``name``[batch][row][col] (None: 0), and
    ``%{name}ld``: its row stride."""
    terms = ([(f"%{name}bat", "%bi", f"%{name}st0")] if rank == 3 else []) \
        + ([(f"%{name}row", row, f"%{name}st{rank - 2}")] if row else [])
    lines, at = [], f"%{name}off"
    for value, index, stride in terms:
        lines += [f"    {value} = arith.muli {index}, {stride} : index",
                  f"    {value}_el = arith.addi {at}, {value} : index"]
        at = f"{value}_el"
    if col:
        lines.append(f"    %{name}col_el = arith.addi {at}, {col} : index")
        at = f"%{name}col_el"
    return lines + [f"    %{name}bytes = arith.muli {at}, {bytes_} : index",
                    f"    %{name}at = arith.addi %{name}ptr, %{name}bytes : index",
                    f"    %{name}at_i = arith.index_cast %{name}at : index to i64",
                    f"    %{name}ld_i = arith.index_cast %{name}st{rank - 2} : index to i64"]


def _function_text(op: ir.Operation, name: str, accumulate: bool, epilogue: ir.Operation | None,
                   fused: bool = True, threads: int = 1, packed: _Packed | None = None,
                   symbol: str = SYMBOL) -> str:
    """The thread loop, over C's row blocks and groups of column chunks
    (``amx_pack.per_group`` chunks each, for ``threads``), each a call of the
    group's function (``_group_text``); ``epilogue``: the elementwise consumer
    of C applied to each chunk after its call (into the function's fourth
    argument, %o), or (not ``fused``) in a second thread loop over blocks of
    32 whole rows; ``packed``: A read packed in place, or the epilogue
    writing the next matmul's A packed (xlac.passes.cpu.amx_handoff); ``symbol``:
    the kernel each chunk calls."""
    types = [str(v.type) for v in op.operands]
    a_shape = ir.MemRefType(op.operands[0].type).shape
    rank, (m, k) = len(a_shape), a_shape[-2:]
    n = ir.MemRefType(op.operands[1].type).shape[-1]
    rows, batch = min(ROWS, m), (a_shape[0] if rank == 3 else 0)
    blocks = -(-m // rows)
    packed = packed or _Packed()
    # A packed already: groups cost no copies, so smaller ones balance the threads
    spread = amx_handoff.PER_THREAD if packed.a else 1
    group = amx_pack.per_group(n // ALIGN, max(batch, 1) * blocks, threads * spread)
    loops = ([f"{batch}"] if rank == 3 else []) + [str(blocks), str(-(-n // (ALIGN * group)))]
    ivs = (["%bi"] if rank == 3 else []) + ["%i", "%g"]
    out = f", %o: {epilogue.operands[1].type}" if epilogue is not None else ""
    call = _epilogue_call(epilogue, f"{name}_epilogue", rank, types[2]) if epilogue is not None else ""
    operands = ", ".join(["%a", "%b", "%c", *(["%o"] if out else []), *ivs[:-2], "%row", "%nrows", "%first"])
    operand_types = ", ".join([*types, *([str(epilogue.operands[1].type)] if out else []),
                               *["index"] * (len(ivs) + 1)])
    after = [] if fused or not call else [
        f"  scf.forall ({', '.join(ivs[:-1])}) in ({', '.join(loops[:-2] + [str(-(-m // ALIGN))])}) {{",
        "    %row = arith.muli %i, %c32 : index", "    %left = arith.subi %m, %row : index",
        "    %nrows = arith.minsi %left, %c32 : index", call.format(col="%c0", ncols="%n"), "  }"]
    lines = [f"func.func private @{name}(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}{out}) {{",
             "  %c32 = arith.constant 32 : index", f"  %rows = arith.constant {rows} : index",
             f"  %m = arith.constant {m} : index", "  %c0 = arith.constant 0 : index",
             f"  %n = arith.constant {n} : index", f"  %group = arith.constant {group * ALIGN} : index",
             f"  scf.forall ({', '.join(ivs)}) in ({', '.join(loops)}) {{",
             "    %row = arith.muli %i, %rows : index", "    %left = arith.subi %m, %row : index",
             "    %nrows = arith.minsi %left, %rows : index", "    %first = arith.muli %g, %group : index",
             f"    func.call @{name}_group({operands}) {{no_inline}} : ({operand_types}) -> ()",
             "  }", *after, "  return", "}"]
    pack = amx_pack.packs(group) and not packed.a
    helper = _epilogue_function(epilogue, f"{name}_epilogue", rank, types[2], packed.out) \
        if epilogue is not None else ""
    packer = amx_pack.function_text(f"{name}_pack_a", batch, rows, k, types[0], _elements(op)[0]) if pack else ""
    group_text = _group_text(op, name, accumulate, call if fused else "", out, group * ALIGN,
                             "pack" if pack else "in place" if packed.a else "", symbol)
    return "\n".join(lines) + "\n" + group_text + helper + packer


def _group_text(op: ir.Operation, name: str, accumulate: bool, call: str, out: str, group: int,
                packed_a: str, symbol: str = SYMBOL) -> str:
    """``@{name}_group``: one thread loop iteration, the kernel calls of the
    column chunks from %first (``group`` columns, fewer at the end) for C's
    %nrows rows from %row, after each ``call`` (the epilogue's, or none);
    ``packed_a`` "pack": A's rows packed first into a buffer of the
    iteration's own; "in place": A is packed already (amx_handoff); "": A as
    it is. A function of its own, called `no_inline`: its loop inside the
    thread chunk would be blocks in the OpenMP lowering's `memref.alloca_scope`."""
    types = [str(v.type) for v in op.operands]
    a_shape = ir.MemRefType(op.operands[0].type).shape
    rank, (m, k) = len(a_shape), a_shape[-2:]
    n = ir.MemRefType(op.operands[1].type).shape[-1]
    rows, batch = min(ROWS, m), (a_shape[0] if rank == 3 else 0)
    lead = ", %bi: index" if rank == 3 else ""
    pack = packed_a == "pack"
    a_at = amx_pack.chunk_address() if pack else amx_handoff.chunk_address(k) if packed_a \
        else _address("a", rank, "%row", None, "%c2")
    return "\n".join([
        f"func.func private @{name}_group(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}{out}{lead}, "
        "%row: index, %nrows: index, %first: index) {",
        *[line for name, type_, element in zip("abc", types, _elements(op))
          for line in _metadata(name, type_, element, rank)],
        "  %c2 = arith.constant 2 : index", "  %c4 = arith.constant 4 : index",
        "  %c32 = arith.constant 32 : index", f"  %n = arith.constant {n} : index",
        f"  %group = arith.constant {group} : index", f"  %k = arith.constant {k} : i64",
        f"  %acc = arith.constant {int(accumulate)} : i64",
        "  %nrows_i = arith.index_cast %nrows : index to i64",
        *(amx_pack.in_iteration(f"{name}_pack_a", batch, rows, k, types[0], _elements(op)[0]) if pack else []),
        "  %end = arith.addi %first, %group : index", "  %last = arith.minsi %end, %n : index",
        "  scf.for %col = %first to %last step %c32 {",
        *a_at,
        *_address("b", rank, None, "%col", "%c2"),
        *_address("c", rank, "%row", "%col", "%c4"),
        f"    func.call @{symbol}(%cat_i, %cld_i, %aat_i, %ald_i, %bat_i, %bld_i, %k, %nrows_i, %acc)"
        " : (" + ", ".join(["i64"] * 9) + ") -> ()",
        *([call.format(col="%col", ncols="%c32")] if call else []), "  }",
        *([f"  memref.dealloc %ap : {amx_pack.buffer_type(rows, k, _elements(op)[0])}"] if pack else []),
        "  return", "}"]) + "\n"


def _epilogue_function(epilogue: ir.Operation, name: str, rank: int, c_type: str,
                       packed: bool = False) -> str:
    """``@name``: a chunk's rows x ncols columns of C through ``epilogue``
    into %o, 32 columns (two vectors) at a time (``packed``: %o written in the
    AMX kernel's packed A order, amx_handoff). A function of its own, called with `no_inline`:
    its loops inside the thread chunk, beside the kernel call, would be blocks
    in the `memref.alloca_scope` the OpenMP lowering wraps the chunk in."""
    out_type = str(epilogue.operands[1].type)
    lead = ["%bi"] if rank == 3 else []
    hoisted, body, at = [], [], ([], [], [])
    if packed:
        at = amx_handoff.packed_indices(out_type)
    for half in range(2):                   # both 16-column halves, unrolled
        indices = ", ".join([*lead, "%er", f"%ec{half}"])
        store = ("%of", f"%p{half}", amx_handoff.flat_type(out_type)) if packed else None
        constants, ops = epilogue_text(epilogue, indices, c_type, out_type, tag=f"h{half}", store=store)
        hoisted, body = hoisted + constants, body + ops
    batch = ", %bi: index" if rank == 3 else ""
    return "\n".join([
        f"func.func private @{name}(%c: {c_type}, %o: {out_type}, %row: index, %col: index, "
        f"%nrows: index, %ncols: index{batch}) {{",
        "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index",
        "  %c16 = arith.constant 16 : index", "  %c32 = arith.constant 32 : index", *hoisted, *at[0], *at[2],
        "  scf.for %r = %c0 to %nrows step %c1 {", "    %er = arith.addi %row, %r : index",
        "    scf.for %cc = %c0 to %ncols step %c32 {", "      %ec0 = arith.addi %col, %cc : index",
        "      %ec1 = arith.addi %ec0, %c16 : index", *at[1],
        *[line[2:] for line in body], "    }", "  }", "  return", "}"]) + "\n"


def _epilogue_call(epilogue: ir.Operation, name: str, rank: int, c_type: str) -> str:
    """The call of ``@name``, its {col} and {ncols} to fill in."""
    batch = (", %bi", ", index") if rank == 3 else ("", "")
    return (f"    func.call @{name}(%c, %o, %row, {{col}}, %nrows, {{ncols}}{batch[0]}) {{{{no_inline}}}} : "
            f"({c_type}, {epilogue.operands[1].type}, index, index, index, index{batch[1]}) -> ()")


def _add_functions(module: ir.Operation, at: ir.Operation, text: str, symbol: str, declare: bool) -> None:
    """The function in ``text`` into ``module``, with kernel ``symbol``'s declaration if ``declare``."""
    parsed = parse_at(_declaration(symbol) + text, at)
    declaration, *defined = [o.operation for o in parsed.body.operations]
    body = module.regions[0].blocks[0]
    for function in defined:
        body.append(function)
    if declare:
        body.append(declaration)


def _declaration(symbol: str) -> str:
    return f"func.func private @{symbol}(" + ", ".join(["i64"] * 9) + ")\n"
