"""Which of cuBLASLt's epilogues a matmul's epilogue generic is, exactly.

The library applies, in f32 after the sum, a bias (one value per column of
our row-major C, the same for every row and batch: a row of its column-major
D), then relu (`max(x, 0)`) or GELU in its tanh form,
`x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` (what
`jax.nn.gelu(approximate=True)` and PyTorch's `gelu(approximate="tanh")`
compute, and what XLA's GEMM rewriter fuses into the same epilogue). An
epilogue region is taken only when every op in it is one of these, in this
order; the operands of each add and multiply in either order.
"""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.gpu.launch_ops import constant_text
from xlac.passes.gpu.matmul_epilogue import Epilogue

# GELU's tanh form as jax exports it (x ** 3 as x * x * x), "x" its input
_GELU = ("arith.mulf", "x",
         ("arith.mulf", 0.5,
          ("arith.addf", 1.0,
           ("math.tanh",
            ("arith.mulf", math.sqrt(2 / math.pi),
             ("arith.addf", "x",
              ("arith.mulf", 0.044715, ("arith.mulf", ("arith.mulf", "x", "x"), "x"))))))))


def library_epilogue(epilogue: Epilogue, matmul: ir.Operation) -> str:
    """"bias", "relu", "gelu", "bias_relu", "bias_gelu" where the epilogue's region
    is exactly that on an f32 C, else ""."""
    c_type = ir.MemRefType(matmul.operands[2].type)
    if str(c_type.element_type) != "f32" or len(epilogue.extra) > 1:
        return ""
    block = epilogue.op.regions[0].blocks[0]
    work = [o.operation for o in block.operations][:-1]
    work = [o for o in work if o.name != "arith.constant"]
    result = list(block.operations)[-1].operation.operands[0]
    x, kinds, used = block.arguments[epilogue.c_input], [], []
    if epilogue.extra:
        if not _row_bias(epilogue, c_type) or not work or work[0].name != "arith.addf" \
                or set(work[0].operands) != {x, block.arguments[1 - epilogue.c_input]}:
            return ""
        x, kinds, used = work[0].results[0], ["bias"], [work[0]]
    if result != x:
        activation = _activation(result, x)
        if activation is None:
            return ""
        kind, ops = activation
        kinds, used = kinds + [kind], used + ops
    if not kinds or len(used) != len(work) or not all(any(u == w for u in used) for w in work):
        return ""                     # an op of the region none of these accounts for
    return "_".join(kinds)


def _activation(result: ir.Value, x: ir.Value) -> tuple[str, list] | None:
    owner = result.owner
    if not isinstance(owner, ir.Block) and owner.name == "arith.maximumf":
        operands = list(owner.operands)
        if x in operands and is_zero(operands[1 - operands.index(x)]):
            return "relu", [owner]
    matched = []
    if _matches(result, _GELU, x, matched):
        return "gelu", matched
    return None


def _matches(value: ir.Value, pattern, x: ir.Value, matched: list) -> bool:
    """Does ``value`` compute ``pattern`` of ``x`` (each binary op either way round)?
    The ops it took are appended to ``matched``."""
    if pattern == "x":
        return value == x
    if isinstance(pattern, float):
        return _constant(value, pattern)
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != pattern[0] or len(owner.operands) != len(pattern) - 1:
        return False
    operands, parts = list(owner.operands), list(pattern[1:])
    orders = [operands] if len(parts) == 1 else [operands, operands[::-1]]
    for order in orders:
        taken = []
        if all(_matches(v, p, x, taken) for v, p in zip(order, parts)):
            matched.extend([owner, *taken])
            return True
    return False


def _constant(value: ir.Value, expected: float) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return False
    try:
        found = float(constant_text(value).split(":")[0])
    except ValueError:                                # not a scalar float
        return False
    return math.isclose(found, expected, rel_tol=1e-6)


def is_zero(value: ir.Value) -> bool:
    return _constant(value, 0.0)


def _row_bias(epilogue: Epilogue, c_type: ir.MemRefType) -> bool:
    """The bias is one f32 per column of C, the same for every row and batch."""
    bias = epilogue.extra[0]
    memref = ir.MemRefType(bias.type)
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(epilogue.op.attributes["indexing_maps"])]
    rank = c_type.rank
    inputs = [m for i, m in enumerate(maps[:-1]) if i != epilogue.c_input]
    return str(memref.element_type) == "f32" and memref.shape == [c_type.shape[-1]] \
        and inputs == [f"({', '.join(f'd{i}' for i in range(rank))}) -> (d{rank - 1})"]
