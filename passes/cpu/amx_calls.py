"""xla-amx-calls: a bf16 matmul xla-amx-contractions marked becomes a
thread loop of calls to the AMX micro-kernel (xlac.targets.cpu.amx_kernels)."""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.cpu.amx_contractions import ALIGN, MARK, ZEROS
from xlac.passes.helper_calls import fresh_symbol, parse_at

SYMBOL = "xlac_ukernel_amx_bf16_32x32"    # xlac.targets.cpu.amx_kernels.SYMBOL
ROWS = 256                                # C's rows per call: a chunk's A (256 x k bf16) stays in L2


@dataclass(frozen=True)
class AmxCalls(ModulePass):
    """Replace each `linalg.matmul {xla.amx}` on memrefs (bf16 A[m x k],
    B[k x n], f32 C[m x n], all multiples of 32, unit inner strides) by a
    call of a function holding `scf.forall` over C's chunks of ROWS rows x 32
    columns, each a call of `xlac_ukernel_amx_bf16_32x32(c, ldc, a, lda, b,
    ldb, k, rows, accumulate)`. A `linalg.fill` of zero into C just before
    the matmul is dropped (the kernel starts from zeros: accumulate 0).
    A matmul that does not fit stays (scalar loops later: slow, still right)."""

    name = "xla-amx-calls"
    acts_on = frozenset({"linalg.matmul"})

    def run(self, module: ir.Operation) -> None:
        marked = [op for op in nested_ops(module) if op.name == "linalg.matmul" and MARK in op.attributes]
        declared = False
        for op in marked:
            zeros = ZEROS in op.attributes
            if not _fits(op):                  # scalar loops: slow, still right
                del op.attributes[MARK]
                if zeros:
                    del op.attributes[ZEROS]
                    _fill_zeros(op)
                continue
            name = fresh_symbol(module, "xla_amx_matmul_")
            _add_functions(module, op, _function_text(op, name, accumulate=not zeros), not declared)
            declared = True
            ir.Operation.create("func.call", operands=list(op.operands),
                                attributes={"callee": ir.FlatSymbolRefAttr.get(name)},
                                loc=op.location, ip=ir.InsertionPoint(op))
            op.erase()


def _fits(op: ir.Operation) -> bool:
    types = [ir.MemRefType(v.type) for v in op.operands]
    if [str(t.element_type) for t in types] != ["bf16", "bf16", "f32"]:
        return False
    if any(not t.has_static_shape or any(d % ALIGN for d in t.shape) for t in types):
        return False
    return all(t.get_strides_and_offset()[0][-1] == 1 for t in types)


def _fill_zeros(op: ir.Operation) -> None:
    """A `linalg.fill` of 0.0 into the matmul's C before it."""
    c = op.operands[2]
    parsed = parse_at(f"func.func private @f(%c: {c.type}) {{\n  %z = arith.constant 0.0 : f32\n"
                      f"  linalg.fill ins(%z : f32) outs(%c : {c.type})\n  return\n}}\n", op)
    block = list(parsed.body.operations)[0].operation.regions[0].blocks[0]
    for inner in [o.operation for o in block.operations][:-1]:
        inner.move_before(op)
        inner.replace_uses_of_with(block.arguments[0], c)


def _metadata(name: str, type_: str, element: str) -> list[str]:
    results = ", ".join([f"%{name}base", f"%{name}off", f"%{name}s0", f"%{name}s1",
                         f"%{name}st0", f"%{name}st1"])
    return [f"  {results} = memref.extract_strided_metadata %{name} : {type_} -> "
            f"memref<{element}>, index, index, index, index, index",
            f"  %{name}ptr = memref.extract_aligned_pointer_as_index %{name}base : memref<{element}> -> index"]


def _function_text(op: ir.Operation, name: str, accumulate: bool) -> str:
    types = [str(v.type) for v in op.operands]
    m, k = ir.MemRefType(op.operands[0].type).shape
    n = ir.MemRefType(op.operands[1].type).shape[1]
    rows = min(ROWS, m)
    chunks = -(-m // rows)
    i64 = "arith.index_cast {} : index to i64"
    lines = [f"func.func private @{name}(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}) {{",
             *_metadata("a", types[0], "bf16"), *_metadata("b", types[1], "bf16"),
             *_metadata("c", types[2], "f32"),
             "  %c2 = arith.constant 2 : index", "  %c4 = arith.constant 4 : index",
             "  %c32 = arith.constant 32 : index", f"  %rows = arith.constant {rows} : index",
             f"  %m = arith.constant {m} : index",
             f"  %k = arith.constant {k} : i64", f"  %acc = arith.constant {int(accumulate)} : i64",
             f"  scf.forall (%i, %j) in ({chunks}, {n // ALIGN}) {{",
             "    %row = arith.muli %i, %rows : index",
             "    %col = arith.muli %j, %c32 : index",
             "    %left = arith.subi %m, %row : index",
             "    %nrows = arith.minsi %left, %rows : index",
             "    %arow = arith.muli %row, %ast0 : index",
             "    %ael = arith.addi %aoff, %arow : index",
             "    %abytes = arith.muli %ael, %c2 : index",
             "    %aat = arith.addi %aptr, %abytes : index",
             "    %bel = arith.addi %boff, %col : index",
             "    %bbytes = arith.muli %bel, %c2 : index",
             "    %bat = arith.addi %bptr, %bbytes : index",
             "    %crow = arith.muli %row, %cst0 : index",
             "    %cel0 = arith.addi %coff, %crow : index",
             "    %cel = arith.addi %cel0, %col : index",
             "    %cbytes = arith.muli %cel, %c4 : index",
             "    %cat = arith.addi %cptr, %cbytes : index"]
    for value in ("aat", "ast0", "bat", "bst0", "cat", "cst0", "nrows"):
        lines.append(f"    %{value}_i = " + i64.format(f"%{value}"))
    lines += [f"    func.call @{SYMBOL}(%cat_i, %cst0_i, %aat_i, %ast0_i, %bat_i, %bst0_i, %k, %nrows_i, %acc)"
              " : (" + ", ".join(["i64"] * 9) + ") -> ()",
              "  }", "  return", "}"]
    return "\n".join(lines) + "\n"


def _add_functions(module: ir.Operation, at: ir.Operation, text: str, declare: bool) -> None:
    """The function in ``text`` into ``module``, with the kernel's declaration if ``declare``."""
    parsed = parse_at(_DECLARATION + text, at)
    declaration, function = [o.operation for o in parsed.body.operations]
    body = module.regions[0].blocks[0]
    body.append(function)
    if declare:
        body.append(declaration)


_DECLARATION = f"func.func private @{SYMBOL}(" + ", ".join(["i64"] * 9) + ")\n"
