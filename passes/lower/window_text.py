"""StableHLO text for the reduce_windows xla-rewrite-reduce-windows rewrites."""

from __future__ import annotations

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
