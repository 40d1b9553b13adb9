"""FFT micro-kernels: the butterfly stages of a plan with a Rader prime (a
radix above fft_codelet.RADER_FROM), compiled once per machine like the
matmul tiles (xlac.targets.cpu.micro_kernels keeps, links and binds them,
their text through xlac.pipeline.fft_kernels).

Why: a 37-point stage's codelet is ~1,900 ops; inline in the stage's
`linalg.generic`, LLVM compiled it again in every program (seconds each, 5-7x
the whole cold compile of fft2 296 x 444). xla-lower-fft (``kernels=true``)
instead calls ``xlac_ukernel_fft_<real>_<compute>_r<p>_<f|b>[_w][_re][_s]``
once per row of each stage (fft_stage_calls.py); the kernel runs the codelet
the generic would, op for op (fft_codelet.stage_body), over the row's
lanes: bit-identical results.

Name: ``real`` the stored type, ``compute`` the arithmetic's, ``p`` the
radix, ``f``/``b`` the sign (-1 forward, +1 backward), ``_w`` the outputs
k > 0 times twiddles, ``_re`` real inputs (no imaginary parts read), ``_s``
output 0 (all, without ``_w``) times the scale.

ABI (every argument an i64, pointers as addresses, strides in elements):
``(x, xk, xc, y, yk, yc, w, lanes, scale)``: part c of point n, lane l is
``x[n xk + c xc + l]``, of output k ``y[k yk + c yc + l]``; the twiddle of
output k, part c is ``w[2 (k - 1) + c]`` (``compute``); ``scale`` the f64's bits.
"""

from __future__ import annotations

import re

from xlac.passes.lower.fft_codelet import Codelet, stage_body, twiddle_table

PREFIX = "xlac_ukernel_fft_"
_NAME = re.compile(rf"^{PREFIX}(f32|f64)_(f32|f64)_r(\d+)_([fb])(_w)?(_re)?(_s)?$")


def symbol(real: str, compute: str, r: int, sign: int, twiddled: bool, reals: bool,
           scaled: bool) -> str:
    return (f"{PREFIX}{real}_{compute}_r{r}_{'f' if sign < 0 else 'b'}"
            f"{'_w' if twiddled else ''}{'_re' if reals else ''}{'_s' if scaled else ''}")


def is_kernel(name: str) -> bool:
    return _NAME.match(name) is not None


ARGUMENTS = ("x", "xk", "xc", "y", "yk", "yc", "w", "lanes", "scale")


def mlir_text(name: str, level: str) -> str:
    """Kernel ``name`` as MLIR (func, scf, arith, vector, llvm pointer ops) for CPU
    level ``level``: a vector loop over the lanes, the rest as one overlapping
    vector (444 lanes of f32 at AVX-512: 27 vectors and 12 lanes one at a time)."""
    from xlac.cpu_model import cpu_model
    found = _NAME.match(name)
    real, compute, r = found[1], found[2], int(found[3])
    kind = (r, -1 if found[4] == "f" else 1, real, compute, bool(found[5]), bool(found[6]), bool(found[7]))
    width = max(1, cpu_model(level).vector_bytes // _bytes(compute))
    lines = [f"func.func @{name}({', '.join(f'%{a}: i64' for a in ARGUMENTS)}) {{",
             "  %c0 = arith.constant 0 : i64",
             "  %c1 = arith.constant 1 : i64",
             f"  %cv = arith.constant {width} : i64",
             "  %xb = llvm.inttoptr %x : i64 to !llvm.ptr",
             "  %yb = llvm.inttoptr %y : i64 to !llvm.ptr",
             "  %wb = llvm.inttoptr %w : i64 to !llvm.ptr",
             "  %sc = arith.bitcast %scale : i64 to f64"]
    if compute == "f32":                    # rounded as the generic's f32 literal of the f64
        lines.append("  %sc32 = arith.truncf %sc : f64 to f32")
    for side in "xy":
        for n in range(r):
            for c in range(2):
                if side == "x" and kind[5] and c:
                    continue
                at = f"%{side}o{n}_{c}"
                lines += [f"  %{side}n{n}_{c} = arith.constant {n} : i64",
                          f"  {at}{'a' if c else ''} = arith.muli %{side}n{n}_{c}, %{side}k : i64",
                          *([f"  {at} = arith.addi {at}a, %{side}c : i64"] if c else []),
                          f"  %{side}p{n}_{c} = llvm.getelementptr %{side}b[{at}] : "
                          f"(!llvm.ptr, i64) -> !llvm.ptr, {real}"]
    for i in range(2 * (r - 1) if kind[4] else 0):
        lines += [f"  %wp{i} = llvm.getelementptr %wb[{i}] : (!llvm.ptr) -> !llvm.ptr, {compute}",
                  f"  %ws{i} = llvm.load %wp{i} : !llvm.ptr -> {compute}"]
    # whole vectors; the rest as one more vector ending at the last lane (lanes
    # again: the same ops on the same inputs), scalars only below a vector
    lines += ["  %rows = arith.divui %lanes, %cv : i64",
              "  %full = arith.muli %rows, %cv : i64",
              "  scf.for %l = %c0 to %full step %cv : i64 {",
              *_body(*kind, width),
              "  }",
              "  %ragged = arith.cmpi ult, %full, %lanes : i64",
              "  %wide = arith.cmpi uge, %lanes, %cv : i64",
              "  %overlap = arith.andi %ragged, %wide : i1",
              "  scf.if %overlap {",
              "    %l = arith.subi %lanes, %cv : i64",
              *_body(*kind, width),
              "  }",
              "  %scalars = arith.select %wide, %lanes, %full : i64",
              "  scf.for %l = %scalars to %lanes step %c1 : i64 {",
              *_body(*kind, 0),
              "  }",
              "  return", "}"]
    return "\n".join(lines) + "\n"


def _body(r: int, sign: int, real: str, compute: str, twiddled: bool, reals: bool, scaled: bool,
          width: int) -> list[str]:
    """One step of the lane loop: ``width`` lanes as vectors (0: one, as scalars)."""
    def typed(element: str) -> str:
        return f"vector<{width}x{element}>" if width else element

    body = (_VectorCodelet if width else Codelet)(twiddle_table, typed(compute), "%v")
    lines = []
    for n in range(r):
        for c in range(2):
            if not (reals and c):
                lines += [f"%g{n}_{c} = llvm.getelementptr %xp{n}_{c}[%l] : (!llvm.ptr, i64) -> !llvm.ptr, {real}",
                          f"%a{2 * n + c} = llvm.load %g{n}_{c} {{alignment = {_bytes(real)} : i64}} : "
                          f"!llvm.ptr -> {typed(real)}"]
    scale = "%sc32" if compute == "f32" else "%sc"
    if width:                               # the scalars broadcast (LLVM hoists them)
        lines += [f"%w{i} = vector.broadcast %ws{i} : {compute} to {typed(compute)}"
                  for i in range(2 * (r - 1) if twiddled else 0)]
        if scaled:
            lines.append(f"%scv = vector.broadcast {scale} : {compute} to {typed(compute)}")
        scale = "%scv"
    results = stage_body(body, r, sign, typed(real), typed(compute), twiddled, reals, lambda i: f"%a{i}",
                         (lambda i: f"%w{i}") if width else (lambda i: f"%ws{i}"),
                         (lambda y: (body.op("mulf", y[0], scale), body.op("mulf", y[1], scale)))
                         if scaled else None)
    lines += body.lines
    for i, value in enumerate(results):
        k, c = divmod(i, 2)
        lines += [f"%h{k}_{c} = llvm.getelementptr %yp{k}_{c}[%l] : (!llvm.ptr, i64) -> !llvm.ptr, {real}",
                  f"llvm.store {value}, %h{k}_{c} {{alignment = {_bytes(real)} : i64}} : "
                  f"{typed(real)}, !llvm.ptr"]
    return ["    " + line for line in lines]


def _bytes(element: str) -> int:
    return 8 if element == "f64" else 4


class _VectorCodelet(Codelet):
    """A codelet on vectors: its constants splats."""

    def literal(self, value: float) -> str:
        return f"dense<{value!r}>"
