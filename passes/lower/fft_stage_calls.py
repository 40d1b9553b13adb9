"""A butterfly stage as calls of an FFT micro-kernel (xlac.targets.cpu.fft_kernels),
one per row (p, q) of the stage's (P, r, R, 2, B) view, on the threads.

Why: the Rader codelets (primes above fft_codelet.RADER_FROM) are ~1,900 ops
a stage; as the stage's `linalg.generic` (fft_stage_lines) LLVM compiled
them in every program. The kernel, built once per machine, runs the same
ops on the same values (bit-identical); the program keeps a loop of calls.
The stage reads ``x``'s buffer and writes a fresh one
(`bufferization.to_buffer` / `to_tensor`, as the collectives' calls do); the
twiddles are one (R, r-1, 2) table, the kernel's row q at 2 (r-1) q.
"""

from __future__ import annotations

import struct

import numpy as np

from xlac.dtypes import tensor_type
from xlac.targets.cpu.fft_kernels import symbol


def kernel_stage_lines(x: str, out: str, dims: tuple[int, int, int, int], sign: int,
                       twiddles, real: str, compute: str, first: bool, scale: float,
                       reals: bool, declare) -> list[str]:
    """stage_lines' stage (no digit reversal) as kernel calls; ``declare(name)``
    notes the kernel the helper must declare."""
    p, r, rest, b = dims
    twiddled, size = rest > 1, 8 if real == "f64" else 4
    name = symbol(real, compute, r, sign, twiddled, reals, scale != 1.0)
    declare(name)
    if reals:           # (N, B) reals: row R k + q
        source, x_row, xk, xc = [r * rest, b], b, rest * b, 0
    elif first:         # (2N, B): row 2 (R k + q) + c
        source, x_row, xk, xc = [2 * r * rest, b], 2 * b, 2 * rest * b, b
    else:               # (P, r, R, 2, B)
        source, x_row, xk, xc = [p, r, rest, 2, b], 2 * b, 2 * rest * b, b
    full = [p, r, rest, 2, b]
    lines = [f"{out}_xm = bufferization.to_buffer {x} read_only : {tensor_type(source, real)} to "
             f"{_memref(source, real)}",
             f"{out}_ym = memref.alloc() {{alignment = 64 : i64}} : {_memref(full, real)}"]
    pointers = [(f"{out}_xm", source, real), (f"{out}_ym", full, real)]
    if twiddled:
        cos, sin = twiddles(r * rest, sign)
        m = np.outer(np.arange(1, r), np.arange(rest)) % (r * rest)          # (r-1, R)
        table = np.stack([cos[m.T], sin[m.T]], axis=-1) * scale               # (R, r-1, 2)
        data = np.ascontiguousarray(table).astype("<f8" if compute == "f64" else "<f4")
        shape = [rest, r - 1, 2]
        lines += [f'{out}_wt = arith.constant dense<"0x{data.tobytes().hex().upper()}"> : '
                  f"{tensor_type(shape, compute)}",
                  f"{out}_wm = bufferization.to_buffer {out}_wt read_only : {tensor_type(shape, compute)} "
                  f"to {_memref(shape, compute)}"]
        pointers.append((f"{out}_wm", shape, compute))
    for memref, shape, element in pointers:
        lines += [f"{memref}_i = memref.extract_aligned_pointer_as_index {memref} : "
                  f"{_memref(shape, element)} -> index",
                  f"{memref}_a = arith.index_cast {memref}_i : index to i64"]
    bits = struct.unpack("<q", struct.pack("<d", scale))[0]
    constants = {"xk": xk, "xc": xc, "yk": 2 * rest * b, "yc": b, "lanes": b, "scale": bits,
                 "xp": (x_row * r * rest if p > 1 else 0) * size, "xq": x_row * size,
                 "yp": 2 * b * r * rest * size, "yq": 2 * b * size, "wq": 2 * (r - 1) * _bytes(compute),
                 "rest": rest}
    lines += [f"{out}_{key} = arith.constant {value} : i64" for key, value in constants.items()]
    t = f"{out}_t"
    lines += [f"scf.forall ({t}) in ({p * rest}) {{",
              f"  {t}i = arith.index_cast {t} : index to i64",
              f"  {t}p = arith.divui {t}i, {out}_rest : i64",
              f"  {t}q = arith.remui {t}i, {out}_rest : i64"]
    args = []
    for side, base in (("x", f"{out}_xm_a"), ("y", f"{out}_ym_a"), ("w", f"{out}_wm_a")):
        if side == "w" and not twiddled:
            args.append(f"{out}_xm_a")              # not read
            continue
        terms = [f"{t}{side}q"]
        lines.append(f"  {t}{side}q = arith.muli {t}q, {out}_{side}q : i64")
        if side != "w":
            lines.append(f"  {t}{side}p = arith.muli {t}p, {out}_{side}p : i64")
            terms.append(f"{t}{side}p")
        lines.append(f"  {t}{side}0 = arith.addi {base}, {terms[0]} : i64")
        last = f"{t}{side}0"
        if len(terms) > 1:
            lines.append(f"  {t}{side}1 = arith.addi {last}, {terms[1]} : i64")
            last = f"{t}{side}1"
        args.append(last)
    x_at, y_at, w_at = args
    call = [x_at, f"{out}_xk", f"{out}_xc", y_at, f"{out}_yk", f"{out}_yc", w_at, f"{out}_lanes",
            f"{out}_scale"]
    lines += [f"  func.call @{name}({', '.join(call)}) : ({', '.join(['i64'] * 9)}) -> ()", "}",
              f"{out} = bufferization.to_tensor {out}_ym restrict writable : {_memref(full, real)} to "
              f"{tensor_type(full, real)}"]
    return lines


def declaration(name: str) -> str:
    return f"func.func private @{name}({', '.join(['i64'] * 9)})"


def _memref(shape: list[int], element: str) -> str:
    return f"memref<{'x'.join(map(str, shape))}x{element}>"


def _bytes(element: str) -> int:
    return 8 if element == "f64" else 4
