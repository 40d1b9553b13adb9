"""Micro-kernels: the register tiles of f32 matmuls (and of the convolutions'
loops over input channels), compiled once per machine.

A matmul's register tile (passes/cpu/schedules/matmul.mlir) is
C[tm x tn] (+)= A[tm x K] * B[K x tn]: tm rows of accumulators, each k step
one broadcast of A(i, k) times B's row k, one FMA per vector. Every program
used to compile that loop again (about half of LLVM's work on the models,
docs/compile-time.md). ``xla-micro-kernel-calls`` replaces each such loop by
a call to ``xlac_ukernel_f32_<tm>x<tn>``; the function is generated here from
MLIR (the same ``vector.fma`` the schedule's contraction lowers to, in the
same k order, so results are bit-identical), compiled at -O3 for the
program's CPU level like the program itself, and kept in the compilation
cache directory under the level, the tile and xlac's build. The link of each
program's library takes the objects it calls (so artifacts stay
self-contained), and the JIT binds them from a shared library built beside.

ABI (every argument an i64, pointers as addresses; strides in elements):
``(c, ldc, a, lda, b, ldb, k, accumulate)``; ``accumulate`` 0 starts the
accumulators at zero instead of reading C (a fill fused into the tile).

``xlac_ukernel_amx_bf16_32x32`` (xlac.targets.cpu.amx_kernels: bf16 matmuls
on AMX tiles, at the host level of a CPU with AMX) and, on CPUs with
AVX512-BF16 and no AMX, ``xlac_ukernel_dpbf16_32x32`` (xlac.targets.cpu.dpbf16_kernels,
the same ABI) are kept, linked and bound the same way; only their MLIR and
their ABI are their own. So are the integer kernels of 8-bit integer matmuls
(``xlac_ukernel_imad_<variant>_32x32``, xlac.targets.cpu.imad_kernels: the
same ABI on i16 and i32) at levels without a bf16 kernel.

``xlac_ukernel_f32_<tm>x<tn>_nt`` (xla-micro-kernel-calls' choice for a C
written once and larger than the caches keep: docs/pipeline.md) stores C's
rows non-temporally where they are 64-byte aligned. The FFTs' Rader stages
call ``xlac_ukernel_fft_...`` (xlac.pipeline.fft_kernels), kept the same way.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import re
import tempfile
from pathlib import Path

from xlac.pipeline import fft_kernels

PREFIX = "xlac_ukernel_f32_"
STREAM = "_nt"                         # suffix: C stored past the caches
_NAME = re.compile(rf"^{PREFIX}(\d+)x(\d+)({STREAM})?$")
MAX_ROWS, MAX_COLUMNS = 8, 32          # AVX-512's 8 x 32 is the largest register tile


def symbol(tm: int, tn: int, stream: bool = False) -> str:
    return f"{PREFIX}{tm}x{tn}{STREAM if stream else ''}"


def tile_of(name: str) -> tuple[int, int] | None:
    """``(tm, tn)`` of a micro-kernel's symbol, or None for any other name."""
    found = _NAME.match(name)
    return (int(found[1]), int(found[2])) if found else None


def supported(tm: int, tn: int, lanes: int) -> bool:
    """Whether a micro-kernel does a tm x tn f32 tile of ``lanes``-lane vectors (whole ones, <= the planner's)."""
    return 1 <= tm <= MAX_ROWS and tn % lanes == 0 and 0 < tn <= MAX_COLUMNS


def is_kernel(name: str) -> bool:
    """Whether ``name`` is a micro-kernel's symbol (an f32 tile's, a bf16 or an FFT one's)."""
    return name in _bf16_kernels() or tile_of(name) is not None or fft_kernels.is_kernel(name)


def _bf16_kernels() -> dict:
    """The bf16 kernels' symbols, each with its MLIR text's maker: AMX's, and
    AVX512-BF16's where there is no AMX (the same ABI); and the integer
    kernels' of the same ABI (xlac.targets.cpu.imad_kernels)."""
    from xlac.targets.cpu import amx_kernels, dpbf16_kernels, imad_kernels
    return {amx_kernels.SYMBOL: amx_kernels.mlir_text, dpbf16_kernels.SYMBOL: dpbf16_kernels.mlir_text,
            **imad_kernels.makers()}


def streams(name: str) -> bool:
    """Whether micro-kernel ``name`` stores C with non-temporal stores."""
    found = _NAME.match(name)
    return bool(found and found[3])


def mlir_text(tm: int, tn: int, stream: bool = False, lanes: int = 0) -> str:
    """The micro-kernel as MLIR: func, scf, arith, vector and llvm pointer ops.
    ``lanes``: 8 for AVX2 (_avx2_lanes), where a tile needing more than its
    16 registers is written register-tight (_tight_text); 0 for other levels."""
    if lanes and not stream and _registers_needed(tm, tn, lanes) > SIMD_REGISTERS_AVX2:
        return _tight_text(tm, tn, lanes)
    vec = f"vector<{tn}xf32>"
    rows = range(tm)
    lines = [f"func.func @{symbol(tm, tn, stream)}(%c: i64, %ldc: i64, %a: i64, %lda: i64, %b: i64, "
             "%ldb: i64, %k: i64, %accumulate: i64) {",
             "  %zero_i = arith.constant 0 : i64",
             "  %one = arith.constant 1 : i64",
             "  %four = arith.constant 4 : i64",
             f"  %zero = arith.constant dense<0.0> : {vec}",
             "  %cp = llvm.inttoptr %c : i64 to !llvm.ptr",
             "  %ap = llvm.inttoptr %a : i64 to !llvm.ptr",
             "  %bp = llvm.inttoptr %b : i64 to !llvm.ptr",
             "  %from_c = arith.cmpi ne, %accumulate, %zero_i : i64"]
    for r in rows:
        lines += [f"  %row{r} = arith.constant {r} : i64",
                  f"  %coff{r} = arith.muli %row{r}, %ldc : i64",
                  f"  %aoff{r} = arith.muli %row{r}, %lda : i64",
                  f"  %cr{r} = llvm.getelementptr %cp[%coff{r}] : (!llvm.ptr, i64) -> !llvm.ptr, f32",
                  f"  %ar{r} = llvm.getelementptr %ap[%aoff{r}] : (!llvm.ptr, i64) -> !llvm.ptr, f32",
                  *_c_or_zeros(f"%init{r}", f"%cr{r}", vec)]
    accs = ", ".join(f"%acc{r} = %init{r}" for r in rows)
    types = ", ".join([vec] * tm)
    lines += [f"  %sum:{tm} = scf.for %i = %zero_i to %k step %one iter_args({accs}) -> ({types}) : i64 {{",
              "    %boff = arith.muli %i, %ldb : i64",
              "    %brow = llvm.getelementptr %bp[%boff] : (!llvm.ptr, i64) -> !llvm.ptr, f32",
              f"    %bv = llvm.load %brow {{alignment = 4 : i64}} : !llvm.ptr -> {vec}"]
    for r in rows:
        lines += [*_broadcast_a(r, vec),
                  f"    %next{r} = vector.fma %ab{r}, %bv, %acc{r} : {vec}"]
    lines.append(f"    scf.yield {', '.join(f'%next{r}' for r in rows)} : {types}")
    lines.append("  }")
    lines += _stores(tm, vec, stream)
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


def _c_or_zeros(name: str, pointer: str, vec: str) -> list[str]:
    """``name`` = C's vector at ``pointer`` where the kernel accumulates, else zeros."""
    return [f"  {name} = scf.if %from_c -> ({vec}) {{",
            f"    %v = llvm.load {pointer} {{alignment = 4 : i64}} : !llvm.ptr -> {vec}",
            f"    scf.yield %v : {vec}",
            "  } else {",
            f"    scf.yield %zero : {vec}",
            "  }"]


def _broadcast_a(r: int, vec: str) -> list[str]:
    """Row r's A(r, i), broadcast to ``%ab<r>``, in the k loop's body."""
    return [f"    %ae{r} = llvm.getelementptr %ar{r}[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32",
            f"    %as{r} = llvm.load %ae{r} : !llvm.ptr -> f32",
            f"    %ab{r} = vector.broadcast %as{r} : f32 to {vec}"]


def _stores(tm: int, vec: str, stream: bool) -> list[str]:
    """C's rows stored; with ``stream``, non-temporal where C and its row
    stride are 64-byte aligned (a non-temporal vector store must be), else
    as plain stores."""
    plain = [f"  llvm.store %sum#{r}, %cr{r} {{alignment = 4 : i64}} : {vec}, !llvm.ptr" for r in range(tm)]
    if not stream:
        return plain
    streamed = [f"    llvm.store %sum#{r}, %cr{r} {{alignment = 64 : i64, nontemporal}} : {vec}, !llvm.ptr"
                for r in range(tm)]
    return ["  %c63 = arith.constant 63 : i64",
            "  %ldc_bytes = arith.muli %ldc, %four : i64",
            "  %misaligned = arith.ori %c, %ldc_bytes : i64",
            "  %low = arith.andi %misaligned, %c63 : i64",
            "  %aligned = arith.cmpi eq, %low, %zero_i : i64",
            "  scf.if %aligned {", *streamed, "  } else {", *["  " + line for line in plain], "  }"]


SIMD_REGISTERS_AVX2 = 16


def _registers_needed(tm: int, tn: int, lanes: int) -> int:
    """Vector registers a tm x tn tile's k step holds: its accumulators, B's
    row and one broadcast of A."""
    vectors = -(-tn // lanes)
    return tm * vectors + vectors + 1


def _tight_text(tm: int, tn: int, lanes: int) -> str:
    """The micro-kernel with B's last vector of each k step read again by
    every row's FMA (a volatile load each: LLVM neither merges them nor
    keeps one in a register, and folds each into its FMA as a memory operand).

    Why: AVX2's 7 x 16 tile (14 accumulators, the convolutions' on 7-pixel
    rows) needs 17 registers written plainly, and LLVM spilled two
    accumulators, a store and a reload in their FMA chains every k step.
    Read from memory, B's second vector takes no register: 14 + 1 + 1.
    Each lane's FMAs run in the same k order as mlir_text's: same results."""
    vectors = tn // lanes
    vec = f"vector<{lanes}xf32>"
    accs = [(r, j) for r in range(tm) for j in range(vectors)]
    lines = [f"func.func @{symbol(tm, tn)}(%c: i64, %ldc: i64, %a: i64, %lda: i64, %b: i64, "
             "%ldb: i64, %k: i64, %accumulate: i64) {",
             "  %zero_i = arith.constant 0 : i64",
             "  %one = arith.constant 1 : i64",
             f"  %zero = arith.constant dense<0.0> : {vec}",
             "  %cp = llvm.inttoptr %c : i64 to !llvm.ptr",
             "  %ap = llvm.inttoptr %a : i64 to !llvm.ptr",
             "  %bp = llvm.inttoptr %b : i64 to !llvm.ptr",
             "  %from_c = arith.cmpi ne, %accumulate, %zero_i : i64"]
    for r in range(tm):
        lines += [f"  %row{r} = arith.constant {r} : i64",
                  f"  %coff{r} = arith.muli %row{r}, %ldc : i64",
                  f"  %aoff{r} = arith.muli %row{r}, %lda : i64",
                  f"  %ar{r} = llvm.getelementptr %ap[%aoff{r}] : (!llvm.ptr, i64) -> !llvm.ptr, f32"]
        for j in range(vectors):
            lines += [f"  %cc{r}_{j} = arith.constant {j * lanes} : i64",
                      f"  %co{r}_{j} = arith.addi %coff{r}, %cc{r}_{j} : i64",
                      f"  %cr{r}_{j} = llvm.getelementptr %cp[%co{r}_{j}] : (!llvm.ptr, i64) -> !llvm.ptr, f32",
                      *_c_or_zeros(f"%init{r}_{j}", f"%cr{r}_{j}", vec)]
    carried = ", ".join(f"%acc{r}_{j} = %init{r}_{j}" for r, j in accs)
    types = ", ".join([vec] * len(accs))
    lines += [f"  %sum:{len(accs)} = scf.for %i = %zero_i to %k step %one iter_args({carried}) -> ({types}) : i64 {{",
              "    %boff = arith.muli %i, %ldb : i64",
              "    %brow = llvm.getelementptr %bp[%boff] : (!llvm.ptr, i64) -> !llvm.ptr, f32"]
    for j in range(vectors):
        lines.append(f"    %bj{j} = llvm.getelementptr %brow[{j * lanes}] : (!llvm.ptr) -> !llvm.ptr, f32")
    for j in range(vectors - 1):
        lines.append(f"    %bv{j} = llvm.load %bj{j} {{alignment = 4 : i64}} : !llvm.ptr -> {vec}")
    last = vectors - 1
    for r in range(tm):
        lines += _broadcast_a(r, vec)
        lines.append(f"    %bm{r} = llvm.load volatile %bj{last} {{alignment = 4 : i64}} : !llvm.ptr -> {vec}")
        for j in range(vectors):
            b = f"%bm{r}" if j == last else f"%bv{j}"
            lines.append(f"    %next{r}_{j} = vector.fma %ab{r}, {b}, %acc{r}_{j} : {vec}")
    lines.append(f"    scf.yield {', '.join(f'%next{r}_{j}' for r, j in accs)} : {types}")
    lines.append("  }")
    lines += [f"  llvm.store %sum#{n}, %cr{r}_{j} {{alignment = 4 : i64}} : {vec}, !llvm.ptr"
              for n, (r, j) in enumerate(accs)]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


# The program's own lowering of these ops (xlac.targets.cpu.pipeline.lower_to_llvm),
# then its CPU level's target attributes
_LOWERING = ["convert-scf-to-cf", "convert-vector-to-llvm", "convert-arith-to-llvm",
             "convert-func-to-llvm", "convert-cf-to-llvm", "reconcile-unrealized-casts"]


def object_code(tm: int, tn: int, cpu: str, stream: bool = False) -> bytes:
    """The micro-kernel's relocatable object for CPU level ``cpu`` (host: this one)."""
    return compiled(mlir_text(tm, tn, stream, _avx2_lanes(cpu)), symbol(tm, tn, stream), cpu)


def _avx2_lanes(cpu: str) -> int:
    """8, the f32 lanes of a ymm register, where level ``cpu``'s widest vectors
    are AVX2's (16 of them), else 0: AVX-512's 32 registers hold every tile, and
    SSE's planner tiles fit its 16."""
    from xlac.cpu_model import cpu_model
    return 8 if cpu_model(cpu).vector_bytes == 32 else 0


def compiled(text: str, name: str, cpu: str) -> bytes:
    """The relocatable object of the micro-kernel ``name`` in MLIR ``text``."""
    from xlac.context import new_context
    from xlac.mlir import ExecutionEngine, ir
    from xlac.pipeline.pass_manager import run_passes
    with new_context() as context, ir.Location.unknown(context):
        module = ir.Module.parse(text)
        run_passes(module, [*_LOWERING, f"xla-target-cpu{{cpu={cpu}}}"],
                   "making a micro-kernel")
        engine = ExecutionEngine(module, opt_level=3, enable_pic=True)
        engine.raw_lookup(name)                        # compiles the module
        with tempfile.TemporaryDirectory(prefix="xlac-ukernel-") as workdir:
            path = Path(workdir) / "kernel.o"
            engine.dump_to_object_file(str(path))
            return path.read_bytes()


def level_for(features) -> str:
    """The CPU level whose exact features ``features`` are (host where they are this one's)."""
    from xlac.cpu_model import LEVELS, cpu_model
    wanted = tuple(sorted(features))
    if wanted == cpu_model("host").features:
        return "host"
    for name, level in LEVELS.items():
        if tuple(sorted(level)) == wanted:
            return name
    raise ValueError(f"no CPU level has the features {', '.join(wanted)}")


def directory(cache_dir: Path | None) -> Path:
    """Where the micro-kernels are kept: ``micro-kernels/`` in the compilation
    cache's directory (``Options.cache_dir``), or, with the cache off (None), in
    a directory of this user's alone under the temporary folder. Either is
    made 0700 and used only if this user owns it and no one else can write it:
    code another user could put there would be linked and loaded."""
    import os

    from xlac.errors import CompileError, error
    from xlac.files import private_directory
    base = Path(cache_dir) if cache_dir is not None else \
        Path(tempfile.gettempdir()) / f"xlac-built-{os.getuid()}"
    kept = base / "micro-kernels"
    problem = private_directory(kept)
    if problem:
        raise CompileError(error(f"no safe directory for the micro-kernels: {problem}"),
                           "set XLAC_CACHE_DIR to a directory of yours, or XLAC_MICRO_KERNELS=0")
    return kept


def _key(name: str, features) -> str:
    from xlac.artifact.container import build_identity
    text = json.dumps([name, sorted(features), build_identity()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


BUILT: list[str] = []                  # the kernels this process compiled (tests read it)
BUILDING: dict = {}                    # a kept object's path -> the thread a worker's build of it ends


def built_on_worker(jobs: list[list[str]]) -> tuple[bytes, bytes]:
    """In a piece worker (``kernel_builds``): each job's ``[text, name, level,
    path]`` compiled and written to ``path`` unless kept already; the answer's
    frames (nothing, then the names built)."""
    from xlac.files import write_atomically
    built = []
    for text, name, level, path in jobs:
        if not Path(path).exists():
            write_atomically(Path(path), compiled(text, name, level))
            built.append(name)
    return b"", json.dumps(built).encode()


def object_path(name: str, features, cache_dir: Path | None) -> Path:
    """The object file of micro-kernel ``name`` for CPU ``features``, compiled now
    if no process compiled it before (another process doing it meanwhile is
    harmless: each writes whole files, atomically)."""
    from xlac.files import write_atomically
    path = kept_path(name, features, cache_dir)
    building = BUILDING.pop(str(path), None)   # a piece worker building it (kernel_builds)
    if building is not None:
        building.join()
    if not path.exists():
        level = level_for(features)
        write_atomically(path, compiled(kernel_text(name, level), name, level))
        BUILT.append(name)
    return path


def kept_path(name: str, features, cache_dir: Path | None) -> Path:
    """Where micro-kernel ``name``'s object for CPU ``features`` is kept (made or not)."""
    return directory(cache_dir) / kept_name(name, features)


def kept_name(name: str, features) -> str:
    """The file name of micro-kernel ``name``'s object for CPU ``features``."""
    return f"{name}-{_key(name, features)}.o"


def candidates(level: str) -> list[str]:
    """Every micro-kernel a program compiled for CPU level ``level`` may call: the
    f32 tiles of whole vectors (``supported``), streamed or not; the bf16 and integer ones."""
    from xlac.cpu_model import cpu_model
    lanes = max(1, cpu_model(level).vector_bytes // 4)
    return [symbol(tm, tn, stream) for tm in range(1, MAX_ROWS + 1)
            for tn in range(lanes, MAX_COLUMNS + 1, lanes) for stream in (False, True)] + sorted(_bf16_kernels())


def kernel_text(name: str, level: str) -> str:
    """Micro-kernel ``name``'s MLIR for CPU level ``level`` (``compiled`` makes its object)."""
    if name in _bf16_kernels():
        return _bf16_kernels()[name]()
    if fft_kernels.is_kernel(name):
        return fft_kernels.mlir_text(name, level)
    return mlir_text(*tile_of(name), streams(name), _avx2_lanes(level))


def shared_library(name: str, features, cache_dir: Path | None) -> Path:
    """The micro-kernel as a shared library (the JIT binds its address)."""
    import subprocess

    from xlac.errors import CompileError, error
    from xlac.files import find_c_compiler, write_atomically
    source = object_path(name, features, cache_dir)
    path = source.with_suffix(".so")
    if not path.exists():
        with tempfile.TemporaryDirectory(dir=source.parent) as workdir:
            built = Path(workdir) / path.name
            done = subprocess.run([find_c_compiler() or "cc", "-shared", "-nostdlib", "-o", str(built),
                                   str(source)], capture_output=True, text=True)
            if done.returncode != 0:
                raise CompileError(error(f"linking micro-kernel {name} failed: "
                                         f"{(done.stderr or done.stdout).strip()[-400:]}"))
            write_atomically(path, built.read_bytes(), mode=0o755)
    return path


def objects_for(names, features, cache_dir: Path | None) -> list[str]:
    """The object files of the micro-kernels among ``names`` (symbols some code calls)."""
    return [str(object_path(n, features, cache_dir)) for n in sorted(set(names)) if is_kernel(n)]


def addresses_for(names, features, cache_dir: Path | None) -> dict[str, int]:
    """Where each micro-kernel among ``names`` is, loaded in this process (for the JIT)."""
    from xlac.targets.cpu import amx_kernels
    if amx_kernels.SYMBOL in names:           # Linux's leave to use the tiles, before any call
        amx_kernels.request_tile_state()
    return {n: _address(n, tuple(sorted(features)), cache_dir) for n in set(names) if is_kernel(n)}


@functools.cache
def _address(name: str, features: tuple[str, ...], cache_dir: Path | None) -> int:
    library = ctypes.CDLL(str(shared_library(name, features, cache_dir)))   # kept loaded
    return ctypes.cast(getattr(library, name), ctypes.c_void_p).value
