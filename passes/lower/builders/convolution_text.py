"""StableHLO text for one 2-D convolution in the form the CPU schedules take:
NHWC input, HWIO kernel, NHWC output, no input (lhs) dilation. Read by
xla-canonicalize-convolutions.

Four shapes of work reach that form:
- any layout (NCHW from PyTorch, the transposed layouts of JAX's gradients):
  transposes around a canonical convolution;
- input dilation (the input gradient of a strided convolution): as a sum
  over the stride's phases of unit-stride convolutions with sub-kernels, each
  output phase computed alone and interleaved (no multiplications by the
  zeros dilation inserts), else an explicitly padded input;
- few output positions and a large kernel (a weight gradient): one
  dot_general per output position, its window contracted with the kernel,
  both in their own layouts;
- few input channels and a wide kernel (a one-image weight gradient with many
  output positions, a 1-D convolution of one signal): the kernel's columns
  folded into the channels (convolution_fold.py).
"""

from __future__ import annotations

import itertools

from xlac.dtypes import tensor_type
from xlac.passes.lower.builders.convolution_chunks import chunked, chunks, min_taps
from xlac.passes.lower.builders.convolution_fold import folded_conv, folds, stacked
from xlac.passes.lower.builders.convolution_groups import grouped, grouped_body, rewrites
from xlac.passes.lower.builders.ssa_text import SsaText
from xlac.record import record

CANONICAL = ("b01f", "01io", "b01f")
# Fewer matmul columns than this fill too few vector registers per row of the
# register tile; a weight gradient then puts its wider dim there.
NARROW_COLUMNS = 64


@record
class Conv:
    """One convolution: layouts as letters (``b01f``), shapes, window."""

    layouts: tuple[str, str, str]          # input, kernel, output
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    element: str
    stride: tuple[int, int]
    padding: tuple[tuple[int, int], tuple[int, int]]
    lhs_dilation: tuple[int, int]
    rhs_dilation: tuple[int, int]
    groups: int = 1                        # feature_group_count
    batch_groups: int = 1                  # batch_group_count


class _Text(SsaText):
    """The convolution helper's lines, with its element type's shorthands."""

    def __init__(self, element: str):
        super().__init__()
        self.element = element

    def op(self, text: str) -> str:
        return self.add(text)

    def t(self, shape) -> str:
        return tensor_type(shape, self.element)

    def zero(self) -> str:
        return self.op(f"stablehlo.constant dense<0.000000e+00> : tensor<{self.element}>")

    def transpose(self, value: str, shape, perm) -> tuple[str, list[int]]:
        if list(perm) == sorted(perm):
            return value, list(shape)
        new = [shape[p] for p in perm]
        return self.op(f"stablehlo.transpose {value}, dims = {list(perm)} : "
                       f"({self.t(shape)}) -> {self.t(new)}"), new

    def conv(self, x, xs, w, ws, out, stride, pad, rhs_dilation, lhs_dilation=(1, 1), groups=1) -> str:
        window = (f"stride = {list(stride)}, pad = [[{pad[0][0]}, {pad[0][1]}], "
                  f"[{pad[1][0]}, {pad[1][1]}]], rhs_dilate = {list(rhs_dilation)}")
        if tuple(lhs_dilation) != (1, 1):
            window += f", lhs_dilate = {list(lhs_dilation)}"
        return self.op(f"stablehlo.convolution({x}, {w}) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]"
                       f"->[b, 0, 1, f], window = {{{window}}} {{batch_group_count = 1 : i64, "
                       f"feature_group_count = {groups} : i64}} : ({self.t(xs)}, {self.t(ws)}) -> {self.t(out)}")

    def pad(self, x, xs, low, high, interior) -> tuple[str, list[int]]:
        new = [d + lo + hi + max(d - 1, 0) * inner
               for d, lo, hi, inner in zip(xs, low, high, interior)]
        value = self.op(f"stablehlo.pad {x}, {self.zero()}, low = {list(low)}, high = {list(high)}, "
                        f"interior = {list(interior)} : ({self.t(xs)}, tensor<{self.element}>) "
                        f"-> {self.t(new)}")
        return value, new

    def pad_or_crop(self, x, xs, low, high, interior) -> tuple[str, list[int]]:
        """``x`` padded as a convolution's window padding pads it: a negative
        amount crops (StableHLO allows it; JAX's weight gradient of a strided
        1x1 convolution has ``pad = [[0, -1], ...]``). Interior padding first,
        then the edges, which is the order StableHLO applies them in."""
        grow_low, grow_high = [max(v, 0) for v in low], [max(v, 0) for v in high]
        if any(grow_low) or any(grow_high) or any(interior):
            x, xs = self.pad(x, xs, grow_low, grow_high, interior)
        if min(*low, *high) >= 0:
            return x, list(xs)
        starts = [max(-v, 0) for v in low]
        limits = [d - max(-v, 0) for d, v in zip(xs, high)]
        if any(hi < lo for lo, hi in zip(starts, limits)):
            raise ValueError("convolution padding crops away the whole input")
        new = [hi - lo for lo, hi in zip(starts, limits)]
        ranges = ", ".join(f"{lo}:{hi}" for lo, hi in zip(starts, limits))
        return self.op(f"stablehlo.slice {x} [{ranges}] : ({self.t(xs)}) -> {self.t(new)}"), new


def _negative_padding(conv: Conv) -> bool:
    return min(min(p) for p in conv.padding) < 0


def needs_rewrite(conv: Conv, groups: bool = True) -> bool:
    """``groups``: grouped convolutions become ungrouped ones (convolution_groups.py),
    and many taps of one filter per channel chunked ones (convolution_chunks.py)."""
    if grouped(conv):
        return _chunks(conv, groups) or _depthwise_channels_first(conv, groups) or (groups and rewrites(conv))
    return conv.layouts != CANONICAL or conv.lhs_dilation != (1, 1) or _weight_gradient(conv) \
        or _negative_padding(conv) or _folds(conv) or _chunks(conv, groups)


def helper_text(name: str, conv: Conv, rows: bool = True, groups: bool = True) -> str:
    """``func.func private @name(%x, %w) -> result`` computing ``conv`` canonically;
    ``rows``: a weight gradient's windows as the matmul's A, one dot per row of positions."""
    text = _Text(conv.element)
    xs, ws, os_ = conv.shapes
    if _chunks(conv, groups):        # needs_rewrite's groups as well
        return _function(name, conv, text, chunked(text, conv))
    if _depthwise_channels_first(conv, groups):
        return _function(name, conv, text, _depthwise_as_taps(text, conv))
    if grouped(conv):                # needs_rewrite said so: its groups option on
        return _function(name, conv, text, grouped_body(text, conv))
    if _pointwise_channels_first(conv):
        return _function(name, conv, text, _pointwise_as_dot(text, conv))
    if _weight_gradient(conv):
        return _function(name, conv, text, _positions_as_dots(text, conv, rows))
    x, xs = text.transpose("%x", xs, [conv.layouts[0].index(c) for c in "b01f"])
    w, ws = text.transpose("%w", ws, [conv.layouts[1].index(c) for c in "01io"])
    out = [os_[conv.layouts[2].index(c)] for c in "b01f"]
    if conv.lhs_dilation != (1, 1):
        y = _dilated(text, conv, x, xs, w, ws, out)
    elif _negative_padding(conv):    # upstream's lowering pads by the amounts as given
        (lo0, hi0), (lo1, hi1) = conv.padding
        x, xs = text.pad_or_crop(x, xs, (0, lo0, lo1, 0), (0, hi0, hi1, 0), (0, 0, 0, 0))
        y = text.conv(x, xs, w, ws, out, conv.stride, ((0, 0), (0, 0)), conv.rhs_dilation)
    elif folds(xs, ws, out, conv.stride):
        y = folded_conv(text, x, xs, w, ws, out, conv.stride, conv.padding, conv.rhs_dilation)
    else:
        y = text.conv(x, xs, w, ws, out, conv.stride, conv.padding, conv.rhs_dilation)
    y, _ = text.transpose(y, out, ["b01f".index(c) for c in conv.layouts[2]])
    return _function(name, conv, text, y)


def _folds(conv: Conv) -> bool:
    return conv.layouts == CANONICAL and conv.lhs_dilation == (1, 1) and folds(*conv.shapes, conv.stride)


def _chunks(conv: Conv, on: bool) -> bool:
    return on and chunks(conv) and not _weight_gradient(conv)


def _function(name: str, conv: Conv, text: _Text, y: str) -> str:
    types = f"%x: {tensor_type(conv.shapes[0], conv.element)}, %w: {tensor_type(conv.shapes[1], conv.element)}"
    result = tensor_type(conv.shapes[2], conv.element)
    return (f"func.func private @{name}({types}) -> {result} {{\n" + "\n".join(text.lines)
            + f"\n  return {y} : {result}\n}}\n")


def _pointwise_channels_first(conv: Conv) -> bool:
    """A 1x1, unit-stride, unpadded convolution in PyTorch's NCHW x OIHW -> NCHW."""
    return (conv.layouts == ("bf01", "oi01", "bf01") and conv.shapes[1][2:] == (1, 1)
            and conv.stride == (1, 1) and conv.padding == ((0, 0), (0, 0))
            and conv.rhs_dilation == (1, 1) and conv.lhs_dilation == (1, 1))


def _pointwise_as_dot(text: _Text, conv: Conv) -> str:
    """Per image, the O x C weight times the C x (H*W) pixels: a batched dot on
    the NCHW data as it lies. Transposed to NHWC and back, MobileNetV2's 1x1
    convolutions (with the batch norm and ReLU6 before them fused into the
    transposing read) took 13-20 ms each; as dots, 1-3 ms."""
    (b, c, h, w), (o, _, _, _), _ = conv.shapes
    pixels = text.op(f"stablehlo.reshape %x : ({text.t([b, c, h, w])}) -> {text.t([b, c, h * w])}")
    weight = text.op(f"stablehlo.reshape %w : ({text.t([o, c, 1, 1])}) -> {text.t([o, c])}")
    weights = text.op(f"stablehlo.broadcast_in_dim {weight}, dims = [1, 2] : "
                      f"({text.t([o, c])}) -> {text.t([b, o, c])}")
    y = text.op(f"stablehlo.dot_general {weights}, {pixels}, batching_dims = [0] x [0], "
                f"contracting_dims = [2] x [1] : ({text.t([b, o, c])}, {text.t([b, c, h * w])}) "
                f"-> {text.t([b, o, h * w])}")
    return text.op(f"stablehlo.reshape {y} : ({text.t([b, o, h * w])}) -> {text.t([b, o, h, w])}")


def _depthwise_channels_first(conv: Conv, chunking: bool) -> bool:
    """A unit-stride depthwise convolution (a group per channel, one filter
    each) in PyTorch's NCHW x OIHW -> NCHW, without input dilation. (Strided,
    the windows' rows are strided: read lane by lane, MobileNetV2's stride-2
    2x96x112x112 took 7.7 ms this way, 1.3 ms as the generic loop.) ``chunking``: from min_taps, chunks."""
    (_, c, _, _), (o, i, kh, kw), _ = conv.shapes
    return (conv.layouts == ("bf01", "oi01", "bf01") and conv.groups == c == o and i == 1
            and conv.lhs_dilation == (1, 1) and conv.stride == (1, 1)
            and min(min(p) for p in conv.padding) >= 0 and (not chunking or kh * kw < min_taps(conv.element)))


def _depthwise_as_taps(text: _Text, conv: Conv) -> str:
    """The sum over the window's taps of the (padded) input's shifted, strided
    window times that tap's per-channel weight: one elementwise kernel over
    the NCHW data as it lies, vectorized along its rows. Upstream lowers the
    grouped convolution to a generic window loop run as scalar code
    (MobileNetV2's 2x32x112x112 3x3: 4.1 ms of its 40)."""
    (b, c, h, w), (_, _, kh, kw), (_, _, oh, ow) = conv.shapes
    (top, bottom), (left, right) = conv.padding
    x, padded = "%x", [b, c, h, w]
    if (top, bottom, left, right) != (0, 0, 0, 0):
        x, padded = text.pad(x, padded, (0, 0, top, left), (0, 0, bottom, right), (0, 0, 0, 0))
    (sh, sw), (dh, dw) = conv.stride, conv.rhs_dilation
    total = None
    for i, j in itertools.product(range(kh), range(kw)):
        rows, cols = i * dh, j * dw
        window = text.op(f"stablehlo.slice {x} [0:{b}, 0:{c}, {rows}:{rows + (oh - 1) * sh + 1}:{sh}, "
                         f"{cols}:{cols + (ow - 1) * sw + 1}:{sw}] : ({text.t(padded)}) -> "
                         f"{text.t([b, c, oh, ow])}")
        tap = text.op(f"stablehlo.slice %w [0:{c}, 0:1, {i}:{i + 1}, {j}:{j + 1}] : "
                      f"({text.t([c, 1, kh, kw])}) -> {text.t([c, 1, 1, 1])}")
        # no reshape to [c]: linalg's fusion would expand the kernel to 7-D for it
        tap = text.op(f"stablehlo.broadcast_in_dim {tap}, dims = [1, 0, 2, 3] : "
                      f"({text.t([c, 1, 1, 1])}) -> {text.t([b, c, oh, ow])}")
        term = text.op(f"stablehlo.multiply {window}, {tap} : {text.t([b, c, oh, ow])}")
        total = term if total is None else \
            text.op(f"stablehlo.add {total}, {term} : {text.t([b, c, oh, ow])}")
    return total


def _weight_gradient(conv: Conv) -> bool:
    """Fewer output positions than kernel taps: the kernel is an activation
    (a weight gradient), and per-position dots beat sliding it."""
    _, ws, os_ = conv.shapes
    out = [os_[conv.layouts[2].index(c)] for c in "01"]
    taps = [ws[conv.layouts[1].index(c)] for c in "01"]
    return conv.lhs_dilation == (1, 1) and out[0] * out[1] < taps[0] * taps[1] \
        and out[0] * out[1] <= 64


def _dilated(text: _Text, conv: Conv, x, xs, w, ws, out) -> str:
    # the phases' sub-convolutions assume the padding only adds rows
    phased = conv.stride == (1, 1) and conv.rhs_dilation == (1, 1) and not _negative_padding(conv) \
        and out[1] % conv.lhs_dilation[0] == 0 and out[2] % conv.lhs_dilation[1] == 0
    if phased:
        return _phases(text, conv, x, xs, w, ws, out)
    (lo0, hi0), (lo1, hi1) = conv.padding
    d0, d1 = conv.lhs_dilation
    x, xs = text.pad_or_crop(x, xs, (0, lo0, lo1, 0), (0, hi0, hi1, 0), (0, d0 - 1, d1 - 1, 0))
    return text.conv(x, xs, w, ws, out, conv.stride, ((0, 0), (0, 0)), conv.rhs_dilation)


def _phases(text: _Text, conv: Conv, x, xs, w, ws, out) -> str:
    """Output row r = p + s*q of the dilated convolution reads the dilated rows
    r - low + a (taps a); only those divisible by s are input rows. Per phase p
    the taps a with (p - low + a) % s == 0 form a sub-kernel w[a0::s], applied
    with unit stride to the undilated input; the phases are then interleaved."""
    n, h, wd, c = xs
    kh, kw, _, f = ws
    s = conv.lhs_dilation
    q = (out[1] // s[0], out[2] // s[1])
    results = {}
    for phase in itertools.product(range(s[0]), range(s[1])):
        taps, offsets = [], []
        for dim in range(2):
            first = [a for a in range((kh, kw)[dim])
                     if (phase[dim] - conv.padding[dim][0] + a) % s[dim] == 0]
            taps.append(first)
            offsets.append((phase[dim] - conv.padding[dim][0] + first[0]) // s[dim] if first else 0)
        results[phase] = _phase(text, x, xs, w, ws, taps, offsets, s, q, (n, c, f), (h, wd))
    rows = []
    shape = [n, q[0], 1, q[1], 1, f]
    for p0 in range(s[0]):
        parts = [text.op(f"stablehlo.reshape {results[(p0, p1)]} : "
                         f"({text.t([n, q[0], q[1], f])}) -> {text.t(shape)}") for p1 in range(s[1])]
        wide = [n, q[0], 1, q[1], s[1], f]
        rows.append(text.op(f"stablehlo.concatenate {', '.join(parts)}, dim = 4 : "
                            f"({', '.join([text.t(shape)] * s[1])}) -> {text.t(wide)}"))
    full = [n, q[0], s[0], q[1], s[1], f]
    stacked = text.op(f"stablehlo.concatenate {', '.join(rows)}, dim = 2 : "
                      f"({', '.join([text.t([n, q[0], 1, q[1], s[1], f])] * s[0])}) -> {text.t(full)}")
    return text.op(f"stablehlo.reshape {stacked} : ({text.t(full)}) -> {text.t(out)}")


def _phase(text: _Text, x, xs, w, ws, taps, offsets, s, q, ncf, hw) -> str:
    n, c, f = ncf
    if not taps[0] or not taps[1]:
        return text.op(f"stablehlo.broadcast_in_dim {text.zero()}, dims = [] : "
                       f"(tensor<{text.element}>) -> {text.t([n, q[0], q[1], f])}")
    sizes = [len(taps[0]), len(taps[1])]
    sub = text.op(f"stablehlo.slice {w} [{taps[0][0]}:{taps[0][-1] + 1}:{s[0]}, "
                  f"{taps[1][0]}:{taps[1][-1] + 1}:{s[1]}, 0:{c}, 0:{f}] : "
                  f"({text.t(ws)}) -> {text.t([*sizes, c, f])}")
    low = [-offsets[0], -offsets[1]]
    high = [q[d] + sizes[d] - 1 - (hw[d] + low[d]) for d in range(2)]
    return text.conv(x, xs, sub, [*sizes, c, f], [n, q[0], q[1], f], (1, 1),
                     ((low[0], high[0]), (low[1], high[1])), (1, 1))


def _positions_as_dots(text: _Text, conv: Conv, rows: bool = True) -> str:
    """One dot_general per output position: its window of the input contracted
    with the whole kernel, both in the layout they came in.

    JAX's weight gradient of an NHWC convolution has the images as the input's
    feature dim and the channels as its batch dim: a window is then a strided
    view with the channels contiguous, read as the matmul's packed B under dY
    transposed once to [o, n*h*w]; only the small [o, c] results move. Where
    c is narrower than NARROW_COLUMNS and o wider, the columns are o instead
    (dY is B as it lies, each window is transposed into A): with 32 columns
    and 64 rows a 12544-deep gradient ran 1.4x slower than the other way
    round, while with 64 columns and 128 rows the window as B was faster.
    Transposed to [c, h, w, n] first (an inner dim of the batch size) with
    the window copies made from that, the 3x3 stride-2 gradient of a 56x56x64
    layer ran at 1.27x XLA's time. With the window as A, the windows of one
    row of positions are concatenated for one dot (_rows_of_windows); all the
    windows in one dot was slower than one dot per row.
    """
    xl, wl, ol = conv.layouts
    xs, ws, os_ = conv.shapes
    (lo0, hi0), (lo1, hi1) = conv.padding
    low, high = [0] * 4, [0] * 4
    low[xl.index("0")], high[xl.index("0")] = lo0, hi0
    low[xl.index("1")], high[xl.index("1")] = lo1, hi1
    x, xs = text.pad_or_crop("%x", list(xs), low, high, (0, 0, 0, 0))
    positions = list(itertools.product(range(os_[ol.index("0")]), range(os_[ol.index("1")])))
    taps = (ws[wl.index("0")], ws[wl.index("1")])
    window = list(xs)
    window[xl.index("0")], window[xl.index("1")] = taps
    channels, features = xs[xl.index("b")], ws[wl.index("o")]
    window_first = channels < NARROW_COLUMNS and features > channels
    if window_first:    # [c, o] = window^T dY: the matmul's columns are the wider o
        w, w_shape = "%w", ws
        contract = f"contracting_dims = {[xl.index(c) for c in 'f01']} x {[wl.index(c) for c in 'i01']}"
        each, letters = [channels, features], "01bf"
    else:               # [o, c] = dY^T window: the window is the packed B, dY^T made once
        w, w_shape = text.transpose("%w", ws, [wl.index(c) for c in "oi01"])
        contract = f"contracting_dims = [1, 2, 3] x {[xl.index(c) for c in 'f01']}"
        each, letters = [features, channels], "01fb"
    grid = [os_[ol.index("0")], os_[ol.index("1")], *each]
    if window_first and rows:
        joined = _rows_of_windows(text, conv, x, xs, taps, window, (w, w_shape), contract, grid)
    else:
        parts = []
        for i, j in positions:
            piece = _window(text, conv, x, xs, i, j, taps)
            lhs, rhs = (piece, w) if window_first else (w, piece)
            types = (window, w_shape) if window_first else (w_shape, window)
            dot = text.op(f"stablehlo.dot_general {lhs}, {rhs}, {contract} : "
                          f"({text.t(types[0])}, {text.t(types[1])}) -> {text.t(each)}")
            parts.append(text.op(f"stablehlo.reshape {dot} : ({text.t(each)}) -> {text.t([1, *each])}"))
        joined = stacked(text, parts, [1, *each], [len(positions), *each])
    y = text.op(f"stablehlo.reshape {joined} : ({text.t([grid[0] * grid[1], *each])}) -> {text.t(grid)}")
    y, _ = text.transpose(y, grid, [letters.index(c) for c in ol])
    return y


def _rows_of_windows(text: _Text, conv: Conv, x, xs, taps, window, dy, contract, grid) -> str:
    """The windows of one row of output positions side by side along the
    channels (the input's batch dim, its contiguous one in JAX's gradient) and
    one dot per row: [positions * c, o] = windows^T dY. The nine transposes of
    a window each into A become one concatenate per row, and with as many
    channels as columns xla-normalize-contractions takes the row as B as it
    lies, under dY transposed once: the 3x3 gradient of a 64x14x14x32 layer
    (o = 64) ran its nine 32-row dots in 9.1-9.8 ms, the three 96-wide ones in
    6.2-7.0 ms (one 288-wide dot of all nine windows: 8.3 ms)."""
    rows, columns, channels, features = *grid[:2], *grid[2:]
    batch_dim = conv.layouts[0].index("b")
    wide = list(window)
    wide[batch_dim] *= columns
    result = [columns * channels, features]
    parts = []
    for i in range(rows):
        pieces = [_window(text, conv, x, xs, i, j, taps) for j in range(columns)]
        row = pieces[0] if columns == 1 else text.op(
            f"stablehlo.concatenate {', '.join(pieces)}, dim = {batch_dim} : "
            f"({', '.join([text.t(window)] * columns)}) -> {text.t(wide)}")
        dot = text.op(f"stablehlo.dot_general {row}, {dy[0]}, {contract} : "
                      f"({text.t(wide)}, {text.t(dy[1])}) -> {text.t(result)}")
        parts.append(text.op(f"stablehlo.reshape {dot} : ({text.t(result)}) -> "
                             f"{text.t([columns, channels, features])}"))
    return stacked(text, parts, [columns, channels, features], [rows * columns, channels, features],
                   step=columns)


def _window(text: _Text, conv: Conv, x: str, xs: list[int], i: int, j: int, taps) -> str:
    """The input's window under output position (i, j): the kernel's taps apart by its dilation."""
    xl = conv.layouts[0]
    starts, limits, strides = [0] * 4, list(xs), [1] * 4
    for dim, position, tap_count in (("0", i, taps[0]), ("1", j, taps[1])):
        axis = xl.index(dim)
        step = conv.rhs_dilation["01".index(dim)]
        starts[axis] = position * conv.stride["01".index(dim)]
        limits[axis] = starts[axis] + (tap_count - 1) * step + 1
        strides[axis] = step
    shape = [(hi - lo + st - 1) // st for lo, hi, st in zip(starts, limits, strides)]
    ranges = ", ".join(f"{lo}:{hi}:{st}" for lo, hi, st in zip(starts, limits, strides))
    return text.op(f"stablehlo.slice {x} [{ranges}] : ({text.t(xs)}) -> {text.t(shape)}")
