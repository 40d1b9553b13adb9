"""xla-canonicalize-convolutions: every 1-D and 2-D convolution as NHWC x HWIO -> NHWC."""

from __future__ import annotations

import re

import numpy as np

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops, nested_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.passes.lower.builders.convolution_text import Conv, helper_text, needs_rewrite
from xlac.record import record

_ROUNDS = 3
_LAYOUTS = re.compile(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]")


@record
class CanonicalizeConvolutions(ModulePass):
    """Rewrite each 2-D `stablehlo.convolution` the CPU schedules cannot take as
    it stands into StableHLO they can (see convolution_text.py): other layouts
    (NCHW, the transposed layouts of gradients) get transposes around a
    canonical NHWC x HWIO -> NHWC convolution; input (lhs) dilation, the input
    gradient of a strided convolution, becomes one unit-stride convolution per
    phase of the stride; a weight gradient (more kernel taps than output
    positions) becomes one dot_general per output position; one with fewer
    than 8 input channels and 8 to 64 kernel columns (a one-image weight
    gradient over many positions) a KH x 1 convolution over KW*C channels, the
    kernel's columns folded into them; PyTorch's
    unit-stride NCHW depthwise convolution becomes the sum over the taps of
    the input's shifted windows times the tap's per-channel weights.

    Why: upstream lowers only the canonical form to `linalg.conv_2d_nhwc_hwcf`,
    which xla-apply-schedules vectorizes; everything else became a generic
    window loop run as scalar code (the input gradient of a CNN ran 60-200x
    slower than XLA). Grouped convolutions (feature or batch groups) become
    ungrouped ones (convolution_groups.py), window reversal is left alone.

    A 1-D convolution first becomes a 2-D one with a unit spatial dim in front
    of its own (reshapes around it, free): upstream has no schedule for the
    1-D form either (jax's default NCW layout ran 50-290x slower than XLA).

    Example: `dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]` (NCHW)
    becomes transposes to NHWC/HWIO, the canonical convolution, and a transpose back;
    `[b, f, 0]x[o, i, 0]->[b, f, 0]` (NCW) first becomes that NCHW one with H = 1.

    `groups=false` (the CUDA pipeline, whose grouped convolutions keep
    their own kernel) leaves grouped convolutions as they are and makes no
    chunked depthwise ones (convolution_chunks.py: one filter per channel,
    or a bank of up to 16 channel-filter pairs, 64 taps or more, on the CPU). `rows=false`
    (the CUDA pipeline, whose xla-gpu-weight-gradients-as-one-matmul takes
    the per-position dots) keeps one dot per position where the CPU makes
    one per row of positions.
    """

    name = "xla-canonicalize-convolutions"
    acts_on = frozenset({"stablehlo.convolution"})
    groups: bool = True
    rows: bool = True

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name == "stablehlo.convolution" and _is_1d(op):
                _lift_to_2d(op)
        # fresh walks: the lifts replaced ops; a grouped convolution's helper
        # holds an ungrouped one, canonicalized in the next round
        for _ in range(_ROUNDS):
            rewritten = False
            for op in nested_ops(module):
                if op.name == "stablehlo.convolution":
                    conv = _describe(op)
                    if conv is not None and needs_rewrite(conv, self.groups):
                        name = fresh_symbol(module, "xla_conv")
                        replace_with_call(module, op, helper_text(name, conv, self.rows, self.groups), name)
                        rewritten = True
            if not rewritten:
                break


def _describe(op: ir.Operation) -> Conv | None:
    """The convolution as a ``Conv``, or None when it is not one this pass rewrites."""
    attrs = op.attributes
    batch_groups = ir.IntegerAttr(attrs["batch_group_count"]).value if "batch_group_count" in attrs else 1
    groups = ir.IntegerAttr(attrs["feature_group_count"]).value if "feature_group_count" in attrs else 1
    if "window_reversal" in attrs and any(_array(attrs["window_reversal"])):
        return None
    match = _LAYOUTS.search(str(attrs["dimension_numbers"]))
    types = [ir.RankedTensorType(v.type) for v in (*op.operands, *op.results)]
    if not match or any(len(t.shape) != 4 or not t.has_static_shape for t in types):
        return None
    layouts = tuple("".join(p.strip() for p in group.split(",")) for group in match.groups())
    if sorted(layouts[0]) != sorted("b01f") or sorted(layouts[1]) != sorted("01io"):
        return None
    element = str(types[0].element_type)
    if element not in ("f32", "f64") or any(str(t.element_type) != element for t in types):
        return None
    padding = _array(attrs["padding"]) if "padding" in attrs else [0, 0, 0, 0]
    return Conv(layouts, tuple(tuple(t.shape) for t in types), element,
                _pair(attrs, "window_strides"), ((padding[0], padding[1]), (padding[2], padding[3])),
                _pair(attrs, "lhs_dilation"), _pair(attrs, "rhs_dilation"), groups, batch_groups)


def _pair(attrs, name: str) -> tuple[int, int]:
    return tuple(_array(attrs[name])) if name in attrs else (1, 1)


def _array(attr) -> list:
    """The values of a DenseI64ArrayAttr, DenseBoolArrayAttr or DenseIntElementsAttr."""
    for kind in (ir.DenseI64ArrayAttr, ir.DenseBoolArrayAttr, ir.DenseIntElementsAttr):
        try:
            return [int(v) for v in kind(attr)]
        except (TypeError, ValueError):
            continue
    return [int(v) for v in re.findall(r"-?\d+", str(attr).split(":")[0])]


def _is_1d(op: ir.Operation) -> bool:
    types = [ir.RankedTensorType(v.type) for v in (*op.operands, *op.results)]
    return all(len(t.shape) == 3 and t.has_static_shape for t in types) and \
        _LAYOUTS.search(str(op.attributes["dimension_numbers"])) is not None


def _lift_to_2d(op: ir.Operation) -> None:
    """Replace the 1-D convolution ``op`` by reshapes to rank 4, a 2-D convolution
    whose spatial dim 0 is a unit dim just before the old one (now dim 1: window
    1, stride 1, no padding or dilation there), and a reshape back."""
    attrs = op.attributes
    layouts = [[p.strip() for p in group.split(",")]
               for group in _LAYOUTS.search(str(attrs["dimension_numbers"])).groups()]
    with op.context, op.location:
        ip = ir.InsertionPoint(op)
        lifted = [_with_unit_dim(value.type, layout.index("0"))
                  for value, layout in zip((*op.operands, op.results[0]), layouts)]
        operands = [_reshape(v, t, ip) for v, t in zip(op.operands, lifted)]
        spelled = ["[" + ", ".join("0, 1" if p == "0" else p for p in layout) + "]" for layout in layouts]
        new = {attrs[i].name: attrs[i].attr for i in range(len(attrs))}
        new["dimension_numbers"] = ir.Attribute.parse(f"#stablehlo.conv<{spelled[0]}x{spelled[1]}->{spelled[2]}>")
        for name in ("window_strides", "lhs_dilation", "rhs_dilation"):
            if name in new:
                new[name] = ir.DenseI64ArrayAttr.get([1, *_array(new[name])])
        if "window_reversal" in new:
            new["window_reversal"] = ir.DenseBoolArrayAttr.get([False, *map(bool, _array(new["window_reversal"]))])
        if "padding" in new:
            new["padding"] = ir.DenseIntElementsAttr.get(
                np.array([[0, 0], _array(new["padding"])], dtype=np.int64))
        conv = ir.Operation.create("stablehlo.convolution", results=[lifted[2]], operands=operands,
                                   attributes=new, ip=ip)
        back = _reshape(conv.results[0], op.results[0].type, ip)
    op.results[0].replace_all_uses_with(back)
    op.erase()


def _with_unit_dim(type_: ir.Type, at: int) -> ir.RankedTensorType:
    tensor = ir.RankedTensorType(type_)
    shape = list(tensor.shape)
    return ir.RankedTensorType.get(shape[:at] + [1] + shape[at:], tensor.element_type)


def _reshape(value: ir.Value, type_: ir.Type, ip: ir.InsertionPoint) -> ir.Value:
    return ir.Operation.create("stablehlo.reshape", results=[type_], operands=[value], ip=ip).results[0]
