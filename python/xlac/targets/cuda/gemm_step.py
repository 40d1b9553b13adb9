"""The ``Gemm`` step: a matmul the host hands to cuBLASLt (``gemm_calls.py``).

``xla-gpu-library-matmuls`` replaced the matmul by a call of a declaration
marked ``xla.gemm`` (its compute type), with ``xla.epilogue``, ``xla.beta`` and
``xla.transposed`` (which of A and B is passed as its transpose's source); the
operands are A, B, C (written in place) and the bias, if any. Shapes, strides
and view offsets are read here from the operands' memref types.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False          # a cached program's Gemm steps load without MLIR
if TYPE_CHECKING:
    from xlac.mlir import ir

GEMM_ATTRIBUTE = "xla.gemm"
ORIGIN = "xla.conv"            # a convolution's matmul (xla-gpu-convolutions-as-matmuls) names it


@dataclass(frozen=True)
class Gemm:
    """C[batch] = epilogue(A[batch] . B[batch] + beta * C[batch]), row-major indices;
    strides (batch, row, col) in elements, 0 for a batch stride of a shared matrix."""

    a: str
    b: str
    c: str
    bias: str
    offsets: tuple[int, int, int, int]          # elements into each buffer (views)
    elements: tuple[str, str, str]              # A, B, C
    batch: int
    m: int
    n: int
    k: int
    a_strides: tuple[int, int, int]
    b_strides: tuple[int, int, int]
    c_strides: tuple[int, int, int]
    compute: str                                # tf32, f32 or f64
    epilogue: str = ""                          # cublaslt.EPILOGUES' names
    beta: float = 0.0
    origin: str = ""                            # what the matmul computes, if not a dot: "conv3x3 im2col"


def is_gemm(declaration: ir.Operation) -> bool:
    return GEMM_ATTRIBUTE in declaration.attributes


def gemm_step(op: ir.Operation, names: dict, declaration: ir.Operation) -> Gemm:
    """The step of a call of an ``xla.gemm`` declaration."""
    from xlac.mlir import ir
    attrs = declaration.attributes
    transposed = list(ir.DenseI64ArrayAttr(attrs["xla.transposed"]))
    operands = list(op.operands)
    layouts = [_layout(v, flip) for v, flip in zip(operands[:3], [*transposed, 0])]
    (batch, m, k), (_, _, n) = layouts[0][0], layouts[1][0]
    bias = ir.MemRefType(operands[3].type).get_strides_and_offset()[1] if len(operands) > 3 else 0
    return Gemm(*(names[v] for v in operands[:3]), names[operands[3]] if len(operands) > 3 else "",
                (*(layout[2] for layout in layouts), bias),
                tuple(str(ir.MemRefType(v.type).element_type) for v in operands[:3]),
                batch, m, n, k, *(layout[1] for layout in layouts),
                ir.StringAttr(attrs[GEMM_ATTRIBUTE]).value,
                ir.StringAttr(attrs["xla.epilogue"]).value, ir.FloatAttr(attrs["xla.beta"]).value,
                ir.StringAttr(attrs[ORIGIN]).value if ORIGIN in attrs else "")


def _layout(value: ir.Value, flip: int) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
    """(batch, rows, cols), strides (batch, row, col) and offset of a matrix or batch of
    them; ``flip``: the value is the matrix's transpose (its last two dims swapped)."""
    from xlac.mlir import ir
    memref = ir.MemRefType(value.type)
    strides, offset = memref.get_strides_and_offset()
    shape = list(memref.shape)
    if len(shape) == 2:
        shape, strides = [1, *shape], [0, *strides]
    if shape[0] == 1:
        strides = [0, *strides[1:]]
    if flip:
        shape, strides = [shape[0], shape[2], shape[1]], [strides[0], strides[2], strides[1]]
    return tuple(shape), tuple(strides), offset
