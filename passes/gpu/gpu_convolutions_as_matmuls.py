"""xla-gpu-convolutions-as-matmuls: convolutions -> a patch matrix times the filter (a matmul).

On the CUDA target a `linalg.conv_*` otherwise becomes a thread-per-output
reduction kernel: one thread per output pixel and channel, looping over the
window and the input channels in global memory with no reuse between threads
(a flax CNN train step took 36x XLA's time on an H200, ResNet-18 18x). Here
each one (1, 2 or 3 spatial dims, channels last: the form
xla-canonicalize-convolutions gives every layout) becomes, on tensors before
bufferization, a `linalg.matmul` of its patch matrix and its filter reshaped
(conv_gemm_text.py), which xla-gpu-library-matmuls hands to cuBLASLt and
xla-gpu-matmul-kernels otherwise tiles. The patch matrix is a view of the
input where it is a reshape (1x1 filters at unit stride), else an im2col loop
kernel's scratch; a convolution whose scratch would pass ``max-scratch-mib``
keeps the old kernel, and says so in a remark. A constant `tensor.pad` of the
input (a "SAME" 3x3 convolution's) is folded into the im2col: the pad's fill
and copy (two kernels, or a fill where the producer writes in place) go, and
the im2col reads the unpadded tensor with a bounds check (conv_gemm_text.py).

bf16/f16 convolutions reach this pass widened (xla-widen-contractions): both
operands converted from the narrow type. With ``narrow=true`` (the library
takes bf16/f16 x bf16/f16 -> f32) the im2col stores the patches narrow again
(exact: each value was narrow) and the matmul reads the unconverted filter,
so cuBLASLt's tensor cores see bf16/f16 and the scratch is half the size.
"""

from __future__ import annotations

from dataclasses import replace

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.gpu.conv_gemm_text import ConvGemm, Padding, helper_text
from xlac.passes.gpu.gpu_inline_helpers import inline_call
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.passes.remarks import emit_remarks
from xlac.record import record

CONVOLUTIONS = ("linalg.conv_1d_nwc_wcf", "linalg.conv_2d_nhwc_hwcf", "linalg.conv_3d_ndhwc_dhwcf")
_WIDE = ("f32", "f64")
_NARROW = ("bf16", "f16")


@record
class GpuConvolutionsAsMatmuls(ModulePass):
    """Channels-last convolutions on tensors -> a patch matrix (a view or an
    im2col) times the filter as a `linalg.matmul` (marked `xla.conv`)."""

    name = "xla-gpu-convolutions-as-matmuls"

    narrow: bool = False             # bf16/f16 patches for a matmul that takes them (cuBLASLt)
    max_scratch_mib: int = 1024      # a larger im2col scratch keeps the thread-per-output kernel
    remarks: bool = False

    def run(self, module: ir.Operation) -> None:
        said, rewrites = [], []
        for op in [op for op in nested_ops(module) if op.name in CONVOLUTIONS]:
            conv = describe(op, self.narrow)
            if conv is None:
                continue
            if conv.scratch_bytes() > self.max_scratch_mib << 20:
                said.append((op, f"convolution kept as a thread-per-output kernel: its im2col scratch "
                                 f"({conv.scratch_bytes()} bytes) is over max-scratch-mib={self.max_scratch_mib}"))
                continue
            said.append((op, f"convolution as a {conv.rows}x{conv.channels}x{conv.depth} matmul "
                             f"({conv.label()}, {conv.scratch_bytes()} bytes of scratch)"))
            rewrites.append((op, conv))
        if self.remarks:
            emit_remarks(module, said)      # while the convolutions are there to point at
        for op, conv in rewrites:
            _rewrite(module, op, conv)


def describe(op: ir.Operation, narrow: bool) -> ConvGemm | None:
    """``op`` as a ``ConvGemm``, or None where the rewrite does not apply
    (dynamic shapes, mixed or unsupported element types)."""
    values = [*op.operands[:3], op.results[0]]
    if not all(isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).has_static_shape
               for v in values):
        return None
    types = [ir.RankedTensorType(v.type) for v in values]
    element = str(types[0].element_type)
    if element not in _WIDE or any(str(t.element_type) != element for t in types):
        return None
    spatial = len(types[0].shape) - 2
    patch = _narrow_element(op.operands[1]) if narrow and element == "f32" else None
    if patch is not None and not _narrow_input(op.operands[0], patch):
        patch = None
    conv = ConvGemm(tuple(types[0].shape), tuple(types[1].shape), tuple(types[3].shape),
                    _window(op, "strides", spatial), _window(op, "dilations", spatial), element,
                    patch or element)
    padding = folded_padding(op.operands[0]) if conv.path() == "im2col" else None
    return conv if padding is None else replace(conv, padding=padding)


def folded_padding(value: ir.Value) -> Padding | None:
    """The padding of ``value`` the im2col can take: a `tensor.pad` of a constant,
    static, of the spatial dims only, at most the input's extent a side."""
    op = producer(value)
    if op is None or op.name != "tensor.pad":
        return None
    source = ir.RankedTensorType(op.operands[0].type)
    low, high = (list(ir.DenseI64ArrayAttr(op.attributes[f"static_{side}"])) for side in ("low", "high"))
    yielded = producer(list(op.regions[0].blocks[0].operations)[-1].operands[0])
    if len(list(op.operands)) != 1 or not source.has_static_shape or yielded is None \
            or yielded.name != "arith.constant" or any(low[i] or high[i] for i in (0, -1)):
        return None
    padding = Padding(tuple(source.shape), tuple(low[1:-1]), str(yielded.attributes["value"]))
    return padding if padding.fits(tuple(high[1:-1])) else None


def _window(op: ir.Operation, name: str, spatial: int) -> tuple[int, ...]:
    if name not in op.attributes:
        return (1,) * spatial
    values = [int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])]
    return tuple(values) if len(values) == spatial else (values[0],) * spatial


def _rewrite(module: ir.Operation, op: ir.Operation, conv: ConvGemm) -> None:
    input_, filter_, init = op.operands[:3]
    widened = _widening(filter_) if conv.patch_element != conv.element else None
    # the narrow filter where it lies, or (transposed on its way) the wide one narrowed again
    truncate = widened is not None and not widened[2]
    if widened is not None and not truncate:
        filter_ = widened[1]
    fill = _constant_fill(init)
    # a fill's destination, collapsed, filled again: the matmul writes the buffer the
    # convolution did (no copy into the result), and its kernel or call folds the fill
    operands = [input_, filter_, init] if fill is None else [input_, filter_, fill.operands[1], fill.operands[0]]
    name = fresh_symbol(module, "xla_conv_gemm")
    text = helper_text(name, conv, str(fill.operands[0].type) if fill is not None else None,
                       "xla.precision" in op.attributes, truncate)
    pad = producer(input_) if conv.padding is not None else None
    if pad is not None:
        operands[0] = pad.operands[0]
    call, added = replace_with_call(module, op, text, name, operands=operands)
    inline_call(added[name], call)
    for dead in (fill, widened and widened[0], pad):   # old init, filter widening, pad: if unread
        _erase_if_unused(dead)


def _constant_fill(init: ir.Value) -> ir.Operation | None:
    """The `linalg.fill` of a scalar that made ``init``, if it did."""
    owner = producer(init)
    return owner if owner is not None and owner.name == "linalg.fill" else None


def producer(value: ir.Value) -> ir.Operation | None:
    return None if isinstance(value.owner, ir.Block) else value.owner.operation


def _erase_if_unused(op: ir.Operation | None) -> None:
    if op is not None and op.name in ("linalg.fill", "linalg.generic", "tensor.pad") \
            and all(not list(r.uses) for r in op.results):
        op.erase()


def _widening(value: ir.Value) -> tuple[ir.Operation, ir.Value, bool] | None:
    """The `arith.extf` generic that made ``value`` from bf16/f16 values (maybe
    transposing them: the layouts of NCHW programs), its source, and whether
    the source has ``value``'s layout; None if ``value`` is no exact widening."""
    op = producer(value)
    if op is None or op.name != "linalg.generic" or len(op.operands) != 2:
        return None
    body = [inner.operation for inner in op.regions[0].blocks[0].operations]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    source = op.operands[0]
    if len(body) != 2 or body[0].name != "arith.extf" or not all(m.is_permutation for m in maps) \
            or str(ir.RankedTensorType(source.type).element_type) not in _NARROW:
        return None
    return op, source, str(maps[0]) == str(maps[1])


def _narrow_element(value: ir.Value) -> str | None:
    found = _widening(value)
    return None if found is None else str(ir.RankedTensorType(found[1].type).element_type)


def _narrow_input(value: ir.Value, element: str) -> bool:
    """Is the convolution's input the widening of ``element`` values, maybe
    padded with zeros (so that storing its patches as ``element`` is exact)?"""
    op = producer(value)
    if op is not None and op.name == "tensor.pad":
        body = [inner.operation for inner in op.regions[0].blocks[0].operations]
        owner = producer(body[-1].operands[0])
        if owner is None or owner.name != "arith.constant" or str(owner.attributes["value"]).split(":")[0].strip() \
                not in ("0.000000e+00", "-0.000000e+00"):
            return False
        value = op.operands[0]
    return _narrow_element(value) == element
