"""A butterfly stage as calls of an FFT micro-kernel (fft_kernel_text.py),
one per row (p, q) of the stage's (P, r, R, 2, B) view (the digit-reversing
last stage: per row of the digits done), on the threads.

Why: the Rader codelets (primes above fft_codelet.RADER_FROM) are ~1,900 ops
a stage, a plan's other stages hundreds; as the stages' `linalg.generic`s
(fft_stage_lines) LLVM compiled them in every program. The kernel, built
once per machine, runs the same ops on the same values (bit-identical); the
program keeps a loop of calls. The stage reads ``x``'s buffer and writes a
fresh one (`bufferization.to_buffer` / `to_tensor`, as the collectives'
calls do); the twiddles are one (R, r-1, 2) table, the kernel's row q at 2 (r-1) q.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from xlac.dtypes import tensor_type
from xlac.passes.lower.fft_kernel_text import symbol


def kernel_stage_lines(x: str, out: str, dims: tuple[int, int, int, int], sign: int,
                       twiddles, real: str, compute: str, first: bool, scale: float,
                       reals: bool, declare, done: list[int] | None = None) -> list[str]:
    """stage_lines' stage as kernel calls; ``declare(name)`` notes the kernel the
    helper must declare. With ``done`` (the last stage), ``x`` is (done..., r, 2, B)
    and the result (r, done reversed..., 2, B): row t's digits reversed in y."""
    p, r, rest, b = dims
    twiddled, size = rest > 1, _bytes(real)
    name = symbol(real, compute, r, sign, twiddled, reals, scale != 1.0)
    declare(name)
    if done is not None:    # rows: done's digits; x's row-major, y's reversed
        source, full = done + [r, 2, b], [r] + done[::-1] + [2, b]
        xk, xc, yk = 2 * b, b, math.prod(done) * 2 * b
        digits = [(n, math.prod(done[j + 1:]) * r * 2 * b * size, math.prod(done[:j]) * 2 * b * size, 0)
                  for j, n in enumerate(done)]
    else:                   # rows (p, q)
        full, yk = [p, r, rest, 2, b], 2 * rest * b
        if reals:           # (N, B) reals: row R k + q
            source, x_row, xk, xc = [r * rest, b], b, rest * b, 0
        elif first:         # (2N, B): row 2 (R k + q) + c
            source, x_row, xk, xc = [2 * r * rest, b], 2 * b, 2 * rest * b, b
        else:               # (P, r, R, 2, B)
            source, x_row, xk, xc = [p, r, rest, 2, b], 2 * b, 2 * rest * b, b
        digits = [(p, x_row * r * rest * size, 2 * b * r * rest * size, 0),
                  (rest, x_row * size, 2 * b * size, 2 * (r - 1) * _bytes(compute))]
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
    constants = {"xk": xk, "xc": xc, "yk": yk, "yc": b, "lanes": b, "scale": bits}
    lines += [f"{out}_{key} = arith.constant {value} : i64" for key, value in constants.items()]
    t = f"{out}_t"
    lines += [f"scf.forall ({t}) in ({math.prod(d[0] for d in digits)}) {{",
              f"  {t}i = arith.index_cast {t} : index to i64"]
    lines += _row_addresses(t, out, digits, twiddled)
    w_at = f"{t}_w" if twiddled else f"{out}_xm_a"           # not read without twiddles
    call = [f"{t}_x", f"{out}_xk", f"{out}_xc", f"{t}_y", f"{out}_yk", f"{out}_yc", w_at, f"{out}_lanes",
            f"{out}_scale"]
    lines += [f"  func.call @{name}({', '.join(call)}) : ({', '.join(['i64'] * 9)}) -> ()", "}",
              f"{out} = bufferization.to_tensor {out}_ym restrict writable : {_memref(full, real)} to "
              f"{tensor_type(full, real)}"]
    return lines


def _row_addresses(t: str, out: str, digits: list[tuple[int, int, int, int]], twiddled: bool) -> list[str]:
    """Row ``t``'s addresses of x, y (and w) as ``{t}_x``, ``{t}_y``, ``{t}_w``:
    ``digits`` (size, x's, y's, w's byte stride) from the most significant."""
    lines, sums = [], {"x": f"{out}_xm_a", "y": f"{out}_ym_a", "w": f"{out}_wm_a"}
    rest = f"{t}i"
    for j in range(len(digits) - 1, -1, -1):
        n, *strides = digits[j]
        if n == 1:
            continue
        digit = rest
        if j:               # not the most significant: t's digit and the rest of t
            lines += [f"  {t}n{j} = arith.constant {n} : i64",
                      f"  {t}d{j} = arith.remui {rest}, {t}n{j} : i64",
                      f"  {t}r{j} = arith.divui {rest}, {t}n{j} : i64"]
            digit, rest = f"{t}d{j}", f"{t}r{j}"
        for side, stride in zip("xyw", strides):
            if stride and (side != "w" or twiddled):
                lines += [f"  {t}{side}s{j} = arith.constant {stride} : i64",
                          f"  {t}{side}o{j} = arith.muli {digit}, {t}{side}s{j} : i64",
                          f"  {t}{side}a{j} = arith.addi {sums[side]}, {t}{side}o{j} : i64"]
                sums[side] = f"{t}{side}a{j}"
    for side in "xyw" if twiddled else "xy":
        lines.append(f"  {t}_{side} = arith.addi {sums[side]}, {t}_zero : i64")
    return [f"  {t}_zero = arith.constant 0 : i64", *lines]


def declaration(name: str) -> str:
    return f"func.func private @{name}({', '.join(['i64'] * 9)})"


def _memref(shape: list[int], element: str) -> str:
    return f"memref<{'x'.join(map(str, shape))}x{element}>"


def _bytes(element: str) -> int:
    return 8 if element == "f64" else 4
