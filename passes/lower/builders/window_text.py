"""StableHLO text for the reduce_windows xla-rewrite-reduce-windows rewrites."""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type


def scan_text(name: str, shape: list[int], element: str, dim: int, combine: str,
              reverse: bool) -> str:
    """``@name(%x, %init)``: the inclusive prefix (``reverse``: suffix) scan of
    ``%x`` along ``dim`` with ``combine``, by doubling steps (Hillis-Steele):
    after step s each element has combined the 2^s elements before it. Each
    step is one elementwise pass (a shifted copy combined in), log2(n) steps."""
    wide = "f32" if element in ("f16", "bf16") else element   # sums of halves rounded once
    t = tensor_type(shape, wide)
    scalar = f"tensor<{wide}>"
    n = shape[dim]
    lines, value, step, count = [], "%x", 1, 0
    pad_value = "%iw" if wide != element else "%init"
    if wide != element:
        lines = [f"  %xw = stablehlo.convert %x : ({tensor_type(shape, element)}) -> {t}",
                 f"  %iw = stablehlo.convert %init0 : (tensor<{element}>) -> {scalar}"]
        value = "%xw"
    while step < n:
        kept = list(shape)
        kept[dim] = n - step
        start = [0] * len(shape)
        limit = list(shape)
        if reverse:
            start[dim] = step
        else:
            limit[dim] = n - step
        low = [0] * len(shape)
        high = [0] * len(shape)
        (high if reverse else low)[dim] = step
        count += 1
        lines += [
            f"  %s{count} = stablehlo.slice {value} [{', '.join(f'{a}:{b}' for a, b in zip(start, limit))}] "
            f": ({t}) -> {tensor_type(kept, wide)}",
            f"  %p{count} = stablehlo.pad %s{count}, {pad_value}, low = {low}, high = {high}, "
            f"interior = {[0] * len(shape)} : ({tensor_type(kept, wide)}, {scalar}) -> {t}",
            f"  %v{count} = {combine} {value}, %p{count} : {t}",
        ]
        value = f"%v{count}"
        step *= 2
    narrow_t, narrow_s = tensor_type(shape, element), f"tensor<{element}>"
    if wide != element:
        lines.append(f"  %out = stablehlo.convert {value} : ({t}) -> {narrow_t}")
        value = "%out"
    init = "%init0" if wide != element else "%init"
    return (f"func.func private @{name}(%x: {narrow_t}, {init}: {narrow_s}) -> {narrow_t} {{\n"
            + "\n".join(lines) + f"\n  return {value} : {narrow_t}\n}}\n")


SCAN_BLOCK = 16              # the in-block scan is a dot with a 16 x 16 triangle of ones
MAX_SCAN_BLOCKS = 256        # the scan of block totals: a dot with a blocks x blocks triangle


def dot_scan_blocks(n: int) -> int | None:
    """The block length of a scan of ``n`` by dots (``dot_scan_text``), or None
    where n does not split into at most MAX_SCAN_BLOCKS blocks of 16 or more."""
    for block in (SCAN_BLOCK, 32, 64, 128, 256):
        if n % block == 0 and n // block <= MAX_SCAN_BLOCKS and n // block >= 2:
            return block
    return None


def dot_scan_text(name: str, shape: list[int], element: str, block: int, reverse: bool) -> str:
    """``@name(%x, %init)``: the inclusive prefix (``reverse``: suffix) sum of
    ``%x`` along its last dim, ``%init`` zero, in O(n): the last dim cut into
    blocks, each block's scan one dot with a triangle of ones (its products
    exact, its sums in order, as a sequential scan's), then the block totals'
    exclusive scan (a second, small dot) added to every block. XLA rewrites
    long scans into such blocks too; the log-step scan read and wrote the whole
    array 10 times for n = 1024 in 30 kernels."""
    rows, n = math.prod(shape[:-1]), shape[-1]
    blocks = n // block
    t = tensor_type(shape, element)
    t3, t2 = tensor_type([rows, blocks, block], element), tensor_type([rows, blocks], element)
    within = _triangle(block, element, strict=False, reverse=reverse)
    before = _triangle(blocks, element, strict=True, reverse=reverse)
    edge = "0:1" if reverse else f"{block - 1}:{block}"    # a block's total: its scan's last (first) element
    return (f"func.func private @{name}(%x: {t}, %init: tensor<{element}>) -> {t} {{\n"
            f"  %x3 = stablehlo.reshape %x : ({t}) -> {t3}\n"
            f"  %u = stablehlo.constant {within} : {tensor_type([block, block], element)}\n"
            f"  %scan = stablehlo.dot_general %x3, %u, contracting_dims = [2] x [0] : "
            f"({t3}, {tensor_type([block, block], element)}) -> {t3}\n"
            f"  %last = stablehlo.slice %scan [0:{rows}, 0:{blocks}, {edge}] : "
            f"({t3}) -> {tensor_type([rows, blocks, 1], element)}\n"
            f"  %totals = stablehlo.reshape %last : ({tensor_type([rows, blocks, 1], element)}) -> {t2}\n"
            f"  %s = stablehlo.constant {before} : {tensor_type([blocks, blocks], element)}\n"
            f"  %offsets = stablehlo.dot_general %totals, %s, contracting_dims = [1] x [0] : "
            f"({t2}, {tensor_type([blocks, blocks], element)}) -> {t2}\n"
            f"  %wide = stablehlo.broadcast_in_dim %offsets, dims = [0, 1] : ({t2}) -> {t3}\n"
            f"  %sum = stablehlo.add %scan, %wide : {t3}\n"
            f"  %out = stablehlo.reshape %sum : ({t3}) -> {t}\n"
            f"  return %out : {t}\n}}\n")


def _triangle(n: int, element: str, strict: bool, reverse: bool) -> str:
    """dense<...> of M[i][j] = 1 where row i adds into column j: i <= j (i < j
    when ``strict``) for a prefix scan, i >= j (i > j) for a suffix scan."""
    def one(i: int, j: int) -> bool:
        low, high = (j, i) if reverse else (i, j)
        return low < high or (low == high and not strict)
    rows = ("[" + ", ".join("1.0" if one(i, j) else "0.0" for j in range(n)) + "]" for i in range(n))
    return "dense<[" + ", ".join(rows) + "]>"


def padded_text(name: str, shape: list[int], padded: list[int], result: list[int], element: str,
                padding: list[tuple[int, int]], window_attrs: str, body: str) -> str:
    """``@name(%x, %init)``: the reduce_window with its padding made an explicit
    ``stablehlo.pad`` by the init value (what padding means for reduce_window)."""
    t, tp, tr = (tensor_type(s, element) for s in (shape, padded, result))
    scalar = f"tensor<{element}>"
    low = [lo for lo, _ in padding]
    high = [hi for _, hi in padding]
    return (f"func.func private @{name}(%x: {t}, %init: {scalar}) -> {tr} {{\n"
            f"  %p = stablehlo.pad %x, %init, low = {low}, high = {high}, interior = {[0] * len(shape)}"
            f" : ({t}, {scalar}) -> {tp}\n"
            f"  %r = \"stablehlo.reduce_window\"(%p, %init) <{{{window_attrs}}}> ({{\n"
            f"  ^bb0(%a: {scalar}, %b: {scalar}):\n"
            f"    %c = {body} %a, %b : {scalar}\n"
            f"    stablehlo.return %c : {scalar}\n"
            f"  }}) : ({tp}, {scalar}) -> {tr}\n"
            f"  return %r : {tr}\n}}\n")
