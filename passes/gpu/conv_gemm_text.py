"""The helper text of a convolution computed as a matmul (xla-gpu-convolutions-as-matmuls).

A `linalg.conv_{1,2,3}d_n..c_..cf` (input N x S.. x C, filter K.. x C x F, output
N x O.. x F) is, row for output pixel and column for output channel, the
product of its patch matrix (N*O.. rows, K..*C columns) and the filter
reshaped to K..*C x F. The patch matrix is either a view of the input (1x1
filters at unit stride; a filter as large as its input with one output
pixel) or an im2col: a loop kernel that gathers each output pixel's window
into a scratch tensor, its innermost dimension the input's channels so that
reads and writes coalesce.

A zero (or other constant) padding of the input is folded into the im2col
(``Padding``): it reads the unpadded input, the window's coordinate wrapped
into range (``(i + S) mod S``: an in-bounds read whatever i is) and replaced by
the pad value where it falls outside (a select on a 3^d mask constant indexed
by ``(i + S) floordiv S``: 0 before the input, 1 inside, 2 after). Affine
maps cannot clamp, and ``linalg.index`` would send the kernel down the slower
loop route (xla-gpu-kernels); mod and floordiv by constants are affine, and the
kernel emitters take any affine index.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.dtypes import tensor_type

ELEMENT_BYTES = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2}   # the element types the rewrite takes


@dataclass(frozen=True)
class Padding:
    """A constant padding of the spatial dims folded into the im2col."""

    source: tuple[int, ...]          # the unpadded input: N, S.., C
    low: tuple[int, ...]             # per spatial dim
    value: str                       # the pad value's attribute text (``0.000000e+00 : f32``)

    def fits(self, high: tuple[int, ...]) -> bool:
        """Do the wrapped index and the 3-way mask cover the window: pads of at
        most the input's extent on each side (all real convolutions' are)."""
        return all(0 <= p <= s for p, s in zip((*self.low, *high), self.source[1:-1] * 2))


@dataclass(frozen=True)
class ConvGemm:
    """One convolution's shapes and window, as the rewrite needs them."""

    input: tuple[int, ...]           # N, S.., C
    filter: tuple[int, ...]          # K.., C, F
    output: tuple[int, ...]          # N, O.., F
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    element: str                     # of input, filter and output
    patch_element: str               # of the patch matrix and filter read by the matmul
    padding: Padding | None = None   # folded into the im2col: ``input`` is then the padded shape

    @property
    def spatial(self) -> int:
        return len(self.strides)

    @property
    def rows(self) -> int:           # M: output pixels
        return _product(self.output[:-1])

    @property
    def depth(self) -> int:          # K: window taps times input channels
        return _product(self.filter[:-1])

    @property
    def channels(self) -> int:       # N: output channels
        return self.filter[-1]

    @property
    def flops(self) -> int:
        return 2 * self.rows * self.depth * self.channels

    def path(self) -> str:
        """"view" where the patch matrix is a reshape of the input, else "im2col"."""
        return "view" if self._plain_reshape() or self._whole_window() else "im2col"

    def scratch_bytes(self) -> int:
        """The patch matrix's bytes (0 on the view path)."""
        return 0 if self.path() == "view" else self.rows * self.depth * ELEMENT_BYTES[self.patch_element]

    def label(self) -> str:
        """How profiles and remarks name it: ``conv3x3/s2 im2col``."""
        window = "x".join(str(k) for k in self.filter[:-2])
        stride = "" if set(self.strides) == {1} else "/s" + "x".join(str(s) for s in _squeeze(self.strides))
        dilation = "" if set(self.dilations) == {1} else "/d" + "x".join(str(d) for d in _squeeze(self.dilations))
        return f"conv{window}{stride}{dilation} {self.path()}"

    def _plain_reshape(self) -> bool:
        """A 1x1 window at unit stride: row (n, o..) of the patch matrix is input pixel (n, o..)."""
        return set(self.filter[:-2]) == {1} and set(self.strides) == {1} \
            and self.input[1:-1] == self.output[1:-1]

    def _whole_window(self) -> bool:
        """One output pixel whose window is the whole input: the patch row is the image."""
        return set(self.output[1:-1]) == {1} and self.filter[:-2] == self.input[1:-1] \
            and set(self.dilations) == {1}


def _product(values) -> int:
    result = 1
    for value in values:
        result *= value
    return result


def _squeeze(values: tuple[int, ...]) -> tuple[int, ...]:
    return values[:1] if len(set(values)) == 1 else values


def helper_text(name: str, conv: ConvGemm, fill: str | None, precision: bool, truncate: bool = False) -> str:
    """``@name(input, filter, init[, fill value]) -> output``: the patch matrix
    (a view or an im2col), the filter as a matrix, the matmul into the init
    collapsed (filled with the value, of type ``fill``, if one is given) and the
    result expanded back to the convolution's shape. ``truncate``: the filter comes
    wide and is narrowed to the patches' type first (exact: it was widened)."""
    d = conv.spatial
    read = conv.padding.source if conv.padding is not None else conv.input
    t_in, t_out = _tensor(read, conv.element), _tensor(conv.output, conv.element)
    t_weights = _tensor(conv.filter, conv.element if truncate else conv.patch_element)
    a_type = _tensor((conv.rows, conv.depth), conv.patch_element)
    b_type = _tensor((conv.depth, conv.channels), conv.patch_element)
    c_type = _tensor((conv.rows, conv.channels), conv.element)
    pixels = _groups([d + 1, 1])                     # (N, O..) then F: rows and columns
    lines = _patch_lines(conv, t_in, a_type)
    weights = "%w"
    if truncate:
        lines += _truncate_lines(conv)
        weights = "%wn"
    t_narrow = _tensor(conv.filter, conv.patch_element)
    lines.append(f"%b = tensor.collapse_shape {weights} {_groups([d + 1, 1])} : {t_narrow} into {b_type}")
    into = "%c" if fill is None else "%e"
    lines.append(f"{into} = tensor.collapse_shape %init {pixels} : {t_out} into {c_type}")
    if fill is not None:
        lines.append(f"%c = linalg.fill ins(%v : {fill}) outs(%e : {c_type}) -> {c_type}")
    marks = f'xla.conv = "{conv.label()}"' + (', xla.precision = "highest"' if precision else "")
    lines += [f"%m = linalg.matmul {{{marks}}} ins(%a, %b : {a_type}, {b_type}) "
              f"outs(%c : {c_type}) -> {c_type}",
              f"%r = tensor.expand_shape %m {pixels} output_shape [{_list(conv.output)}] "
              f": {c_type} into {t_out}"]
    value = f", %v: {fill}" if fill is not None else ""
    body = "\n  ".join(lines)
    return (f"func.func private @{name}(%x: {t_in}, %w: {t_weights}, %init: {t_out}{value}) -> {t_out} {{\n"
            f"  {body}\n  return %r : {t_out}\n}}\n")


def patch_matrix_lines(conv: ConvGemm) -> tuple[str, str, list[str]]:
    """The input's type, the patch matrix's, and the lines making it (``%a``) from ``%x``."""
    read = conv.padding.source if conv.padding is not None else conv.input
    t_in, a_type = _tensor(read, conv.element), _tensor((conv.rows, conv.depth), conv.patch_element)
    return t_in, a_type, _patch_lines(conv, t_in, a_type)


def _patch_lines(conv: ConvGemm, t_in: str, a_type: str) -> list[str]:
    """``%a``: the patch matrix (rows: output pixels; columns: taps, then channels)."""
    d = conv.spatial
    if conv.path() == "view":
        split = [d + 1, 1] if conv._plain_reshape() else [1, d + 1]
        return [f"%a = tensor.collapse_shape %x {_groups(split)} : {t_in} into {a_type}"]
    dims = [f"d{i}" for i in range(2 * d + 2)]   # n, o.., k.., c
    window = [f"d{1 + i} * {conv.strides[i]} + d{1 + d + i} * {conv.dilations[i]}" for i in range(d)]
    domain = f"({', '.join(dims)})"
    identity = f"affine_map<{domain} -> {domain}>"
    patch_shape = (*conv.output[:-1], *conv.filter[:-1])
    t_patch = _tensor(patch_shape, conv.patch_element)
    narrow = conv.patch_element != conv.element
    value = "%n" if narrow else "%in"
    lines, ins, args, body = [f"%p = tensor.empty() : {t_patch}"], ["%x"], [f"%in: {conv.element}"], []
    if conv.padding is None:
        maps = [f"affine_map<{domain} -> (d0, {', '.join(window)}, d{2 * d + 1})>"]
        types = [t_in]
    else:
        lines.append(_mask_constant(d))
        maps, types = _padded_maps(conv, window, domain, t_in)
        ins.append("%mask")
        args.append("%inside: i8")
        body = ["  %zero = arith.constant 0 : i8",
                "  %keep = arith.cmpi ne, %inside, %zero : i8",
                f"  %pad = arith.constant {conv.padding.value}",
                f"  %in = arith.select %keep, %read, %pad : {conv.element}"]
        args[0] = f"%read: {conv.element}"
    if narrow:
        body.append(f"  %n = arith.truncf %in : {conv.element} to {conv.patch_element}")
    parallel = ", ".join(['"parallel"'] * len(dims))
    return lines + [
        f"%q = linalg.generic {{indexing_maps = [{', '.join(maps)}, {identity}], iterator_types = [{parallel}]}} "
        f"ins({', '.join(ins)} : {', '.join(types)}) outs(%p : {t_patch}) {{",
        f"^bb0({', '.join(args)}, %out: {conv.patch_element}):",
        *body,
        f"  linalg.yield {value} : {conv.patch_element}",
        f"}} -> {t_patch}",
        f"%a = tensor.collapse_shape %q {_groups([d + 1, d + 1])} : {t_patch} into {a_type}"]


def _padded_maps(conv: ConvGemm, window: list[str], domain: str, t_in: str) -> tuple[list[str], list[str]]:
    """The unpadded input's map (each window coordinate i - low wrapped into
    range) and the mask's (which side of the input each coordinate is on)."""
    padding = conv.padding
    extents = padding.source[1:-1]
    shifted = [f"{w} + {extent - low}" for w, low, extent in zip(window, padding.low, extents)]
    wrapped = [f"({s}) mod {extent}" for s, extent in zip(shifted, extents)]
    sides = [f"({s}) floordiv {extent}" for s, extent in zip(shifted, extents)]
    d = conv.spatial
    return ([f"affine_map<{domain} -> (d0, {', '.join(wrapped)}, d{2 * d + 1})>",
             f"affine_map<{domain} -> ({', '.join(sides)})>"],
            [t_in, _tensor((3,) * d, "i8")])


def _mask_constant(spatial: int) -> str:
    """``%mask``: 1 where every coordinate is inside the input (side 1 of 0, 1, 2)."""
    def nested(depth: int, inside: bool) -> str:
        if depth == spatial:
            return "1" if inside else "0"
        return "[" + ", ".join(nested(depth + 1, inside and side == 1) for side in range(3)) + "]"
    return f"%mask = arith.constant dense<{nested(0, True)}> : {_tensor((3,) * spatial, 'i8')}"


def _truncate_lines(conv: ConvGemm) -> list[str]:
    """``%wn``: the filter ``%w`` in the patches' narrow type."""
    wide, narrow = _tensor(conv.filter, conv.element), _tensor(conv.filter, conv.patch_element)
    dims = ", ".join(f"d{i}" for i in range(len(conv.filter)))
    identity = f"affine_map<({dims}) -> ({dims})>"
    parallel = ", ".join(['"parallel"'] * len(conv.filter))
    return [f"%we = tensor.empty() : {narrow}",
            f"%wn = linalg.generic {{indexing_maps = [{identity}, {identity}], iterator_types = [{parallel}]}} "
            f"ins(%w : {wide}) outs(%we : {narrow}) {{",
            f"^bb0(%in: {conv.element}, %out: {conv.patch_element}):",
            f"  %t = arith.truncf %in : {conv.element} to {conv.patch_element}",
            f"  linalg.yield %t : {conv.patch_element}",
            f"}} -> {narrow}"]


def _groups(sizes: list[int]) -> str:
    """Reassociation groups of consecutive dims: [2, 1] -> [[0, 1], [2]]."""
    groups, start = [], 0
    for size in sizes:
        groups.append("[" + ", ".join(str(i) for i in range(start, start + size)) + "]")
        start += size
    return "[" + ", ".join(groups) + "]"


def _tensor(shape, element: str) -> str:
    return tensor_type(shape, element)


def _list(values) -> str:
    return ", ".join(str(v) for v in values)
