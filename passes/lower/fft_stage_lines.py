"""One radix-r butterfly stage of fft_stages as a multi-result `linalg.generic`'s text.

The layout, the decimation and the digit-reversing last stage are described in
fft_stages; here are the stage's slices, its codelet body and its inserts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlac.dtypes import tensor_type
from xlac.passes.lower.fft_codelet import Codelet, stage_body
from xlac.passes.lower.fft_stage_calls import kernel_stage_lines


def stage_lines(x: str, out: str, dims: tuple[int, int, int, int], sign: int,
                twiddles: Callable[[int, int], tuple[np.ndarray, np.ndarray]],
                real: str, compute: str, done: list[int] | None = None,
                first: bool = False, scale: float = 1.0, reals: bool = False,
                declare=None) -> list[str]:
    """One radix-r stage: ``x`` (P, r, R, 2, B) of ``real`` -> ``out``, the same shape.
    With ``done`` (the last stage, R = 1: P's radices r1..r_(m-1)), ``x`` is
    (r1, .., r_(m-1), r, 2, B) and ``out`` (r, r_(m-1), .., r1, 2, B): the
    digits reversed by the writes' maps, the B planes still minor. With
    ``first`` (P = 1), ``x`` is (2N, B), read through row-strided slices.
    ``scale`` multiplies every output (IFFT's 1/N: in the twiddle tables,
    a product where there is none), rounded once with the rest. With
    ``reals`` (the first stage, P = 1), ``x`` is (N, B) real: the imaginary
    parts are zeros, not read. With ``declare`` (micro-kernels on, a plan with a
    Rader prime), the stage calls its FFT micro-kernel (fft_stage_calls; ``declare(name)``)."""
    p, r, rest, b = dims
    if declare is not None:
        return kernel_stage_lines(x, out, dims, sign, twiddles, real, compute, first, scale, reals,
                                  declare, done)
    shape = [p, r, rest, 2, b]
    full = tensor_type(shape, real)
    lane = tensor_type([p, rest, b], real)
    if done is not None:
        return _reversing_lines(x, out, done, r, b, sign, twiddles, real, compute, scale)
    lines: list[str] = []
    twiddled = rest > 1
    if twiddled:
        cos, sin = twiddles(r * rest, sign)
        m = np.outer(np.arange(r), np.arange(rest)) % (r * rest)
        dtype = "<f8" if compute == "f64" else "<f4"
        for k in range(1, r):
            for c, table in enumerate((cos, sin)):
                data = np.ascontiguousarray(table[m[k]] * scale).astype(dtype).tobytes().hex().upper()
                lines.append(f'{out}_w{k}_{c} = arith.constant dense<"0x{data}"> : '
                             f"{tensor_type([rest], compute)}")
    lines.append(f"{out}_e = bufferization.alloc_tensor() : {full}")
    outs, ins = [], []
    flat = tensor_type([2 * r * rest, b], real)
    for k in range(r):
        for c in range(2):
            lines.append(f"{out}_o{k}_{c} = tensor.extract_slice {out}_e[0, {k}, 0, {c}, 0] "
                         f"[{p}, 1, {rest}, 1, {b}] [1, 1, 1, 1, 1] : {full} to {lane}")
            outs.append(f"{out}_o{k}_{c}")
            if reals:       # x is (N, B) reals: rows R k + q, no imaginary rows
                if c == 0:
                    lines.append(f"{out}_x{k}_0 = tensor.extract_slice {x}[{rest * k}, 0] "
                                 f"[{rest}, {b}] [1, 1] : {tensor_type([r * rest, b], real)} to "
                                 f"{tensor_type([rest, b], real)}")
                    ins.append(f"{out}_x{k}_0")
                continue
            if first:       # x is (2N, B): rows 2(R k + q) + c
                lines.append(f"{out}_x{k}_{c} = tensor.extract_slice {x}[{2 * rest * k + c}, 0] "
                             f"[{rest}, {b}] [2, 1] : {flat} to {tensor_type([rest, b], real)}")
            else:
                lines.append(f"{out}_x{k}_{c} = tensor.extract_slice {x}[0, {k}, 0, {c}, 0] "
                             f"[{p}, 1, {rest}, 1, {b}] [1, 1, 1, 1, 1] : {full} to {lane}")
            ins.append(f"{out}_x{k}_{c}")
    maps = [("affine_map<(p, q, b) -> (q, b)>" if first or reals else
             "affine_map<(p, q, b) -> (p, q, b)>")] * len(ins)
    types = [tensor_type([rest, b], real) if first or reals else lane] * len(ins)
    if twiddled:
        ins += [f"{out}_w{k}_{c}" for k in range(1, r) for c in range(2)]
        maps += ["affine_map<(p, q, b) -> (q)>"] * (2 * (r - 1))
        types += [tensor_type([rest], compute)] * (2 * (r - 1))
    maps += ["affine_map<(p, q, b) -> (p, q, b)>"] * (2 * r)
    lines += _generic(out, r, twiddled, twiddles, sign, real, compute, ins, outs, maps, types,
                      lane, 3, scale, reals)
    return lines + _inserts(out, r, lambda k, c: f"[0, {k}, 0, {c}, 0] [{p}, 1, {rest}, 1, {b}] "
                            "[1, 1, 1, 1, 1]", f"{lane} into {full}")


def _inserts(out: str, r: int, box, types: str) -> list[str]:
    """The generic's 2r results into ``out``'s slices ``box(k, c)``."""
    lines, dest = [], f"{out}_e"
    for i in range(2 * r):
        k, c = divmod(i, 2)
        nxt = f"{out}_i{i}" if i < 2 * r - 1 else out
        lines.append(f"{nxt} = tensor.insert_slice {out}_g#{i} into {dest}{box(k, c)} : {types}")
        dest = nxt
    return lines


def _reversing_lines(x: str, out: str, done: list[int], r: int, b: int, sign: int,
                     twiddles, real: str, compute: str, scale: float) -> list[str]:
    """The last stage (no twiddles) writing its outputs digit-reversed (stage_lines)."""
    rank = len(done) + 1
    source = tensor_type(done + [r, 2, b], real)
    full = tensor_type([r] + done[::-1] + [2, b], real)
    lane_in = tensor_type(done + [b], real)
    lane_out = tensor_type(done[::-1] + [b], real)
    lines = [f"{out}_e = bufferization.alloc_tensor() : {full}"]
    zeros, ones = ", ".join(["0"] * len(done)), ", ".join(["1"] * len(done))
    sizes = ", ".join(map(str, done))
    rsizes = ", ".join(map(str, done[::-1]))
    ins, outs = [], []
    for k in range(r):
        for c in range(2):
            lines.append(f"{out}_x{k}_{c} = tensor.extract_slice {x}[{zeros}, {k}, {c}, 0] "
                         f"[{sizes}, 1, 1, {b}] [{ones}, 1, 1, 1] : {source} to {lane_in}")
            lines.append(f"{out}_o{k}_{c} = tensor.extract_slice {out}_e[{k}, {zeros}, {c}, 0] "
                         f"[1, {rsizes}, 1, {b}] [1, {ones}, 1, 1] : {full} to {lane_out}")
            ins.append(f"{out}_x{k}_{c}")
            outs.append(f"{out}_o{k}_{c}")
    loops = ", ".join(f"d{i}" for i in range(rank))
    back = ", ".join([f"d{i}" for i in range(rank - 2, -1, -1)] + [f"d{rank - 1}"])
    maps = [f"affine_map<({loops}) -> ({loops})>"] * (2 * r)
    maps += [f"affine_map<({loops}) -> ({back})>"] * (2 * r)
    lines += _generic(out, r, False, twiddles, sign, real, compute, ins, outs, maps,
                      [lane_in] * (2 * r), lane_out, rank, scale)
    return lines + _inserts(out, r, lambda k, c: f"[{k}, {zeros}, {c}, 0] [1, {rsizes}, 1, {b}] "
                            f"[1, {ones}, 1, 1]", f"{lane_out} into {full}")


def _generic(out: str, r: int, twiddled: bool, twiddles, sign: int, real: str, compute: str,
             ins: list[str], outs: list[str], maps: list[str], types: list[str], lane: str,
             rank: int, scale: float = 1.0, reals: bool = False) -> list[str]:
    """The stage's multi-result generic: r inputs, the codelet, the twiddles, r
    outputs (``reals``: the inputs' real parts only, zero imaginary parts)."""
    lines = []
    args = [f"%a{i}: {real}" for i in range(2 * r) if not reals or i % 2 == 0]
    args += [f"%w{i}: {compute}" for i in range(2 * (r - 1) if twiddled else 0)]
    args += [f"%o{i}: {real}" for i in range(2 * r)]
    body = Codelet(twiddles, compute, "%v")
    results = stage_body(body, r, sign, real, compute, twiddled, reals, lambda i: f"%a{i}",
                         lambda i: f"%w{i}", (lambda y: body.scale(y, scale)) if scale != 1.0 else None)
    iterators = ", ".join(['"parallel"'] * rank)
    lines.append(
        f"{out}_g:{2 * r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{iterators}]}} ins({', '.join(ins)} : {', '.join(types)}) "
        f"outs({', '.join(outs)} : {', '.join([lane] * (2 * r))}) {{")
    lines.append(f"^bb0({', '.join(args)}):")
    lines.extend("  " + line for line in body.lines)
    lines.append(f"  linalg.yield {', '.join(results)} : {', '.join([real] * (2 * r))}")
    lines.append(f"}} -> ({', '.join([lane] * (2 * r))})")
    return lines
