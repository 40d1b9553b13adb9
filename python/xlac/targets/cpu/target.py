"""The CPU target, as a newcomer reads it: its stages in order, then its
capabilities. Machine code: ``xlac.targets.cpu.compile`` (the LLVM JIT, or
pieces compiled in worker processes and linked); code read back from bytes:
``xlac.targets.cpu.library``.
"""

from __future__ import annotations

from xlac.targets.cpu.pipeline import bufferized_stage, counted_top_k, has_integer_kernel, llvm_stage, stablehlo_stage
from xlac.targets.target import Stage, Target, front_stages

# every target's; f16/bf16 sums in f32: the CPU's reduction schedules take f32 lanes;
# large top-ks counted with AVX-512; 8-bit matmuls over their whole k where an integer kernel takes them
_INPUT, _STABLEHLO, _FUSED, _LINALG = front_stages("cpu", narrow_sums_in_f32=True,
                                                   counted_top_k=counted_top_k,
                                                   integer_kernel=has_integer_kernel)

CPU = Target(
    name="cpu",
    summary="x86-64 machine code through LLVM: JIT-compiled here, or a C library (xla-compile)",
    stages=(
        _INPUT,
        Stage(_STABLEHLO.name, _STABLEHLO.produces, stablehlo_stage),   # + weights as arguments
        _FUSED,
        _LINALG,
        Stage("bufferized", "memrefs, each kernel scheduled for this CPU: threads, tiles, vectors",
              bufferized_stage),
        Stage("llvm", "the LLVM dialect: a function per kernel, the entry with bare pointers",
              llvm_stage),
    ),
    compiler="xlac.targets.cpu.compile:CpuCompiler",
    loader="xlac.targets.cpu.library:load_function",
    device_kind="cpu",
    aot=True,
    profiles=True,
    recompiles=True,
    dynamic_shapes=True,
    input_keyed=True,
)
