"""The micro-kernels a compile calls, built ahead on an idle piece worker.

A machine's first compile of a program that calls micro-kernels
(``xlac.targets.cpu.micro_kernels``) used to build each missing one in the
compiling process when the library was linked: an ExecutionEngine of ~60 ms
of CPU per kernel, after the pieces, while the second core idled. Their names
are known as soon as ``xla-micro-kernel-calls`` (and ``xla-amx-calls``) have
run, at the start of the llvm stage: ``build_ahead`` then sends the missing
ones to a piece worker (the compile started them, ``CpuCompiler.ingested``;
they wait for the pieces meanwhile), which compiles each as the compiling
process would (``micro_kernels.built_on_worker``: the same text compiled at
the same level, so the same bytes) and writes it where the library is kept.
``micro_kernels.object_path`` waits for such a build (``BUILDING``) before it
looks; whatever went wrong (no worker idle, a worker that died, an error)
leaves the kernel to be built there, as before.
The worker is lent with ``pieces.lend_for_job``: a piece that finds no idle
worker waits for it instead of starting another.

A small program (one JIT, no pieces) starts no piece workers of its own, so
its kernels were built by the JIT, on the serial path (a 1024^3 matmul's cold
compile: 40 of its 240 ms of CPU). Where it holds a contraction and the
cache keeps no micro-kernel of its CPU level and xlac's build (a machine's
first compile: ``library_cold``), and no core is busy with other processes'
work, the compile starts one worker at ingest for them: its start (about
twice the builds' CPU) overlaps the passes on the core they leave idle. On
busy cores that would only add CPU: the JIT builds them, as before.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import xlac.pipes as pipes
from xlac.targets.cpu import micro_kernels, pieces

_LOCK = threading.Lock()


def called_kernels(module) -> list[str]:
    """The micro-kernels ``module`` declares (top-level functions without a body)."""
    names = set()
    for op in module.body.operations:
        op = op.operation
        if op.name in ("func.func", "llvm.func") and not op.regions[0].blocks:
            name = op.attributes["sym_name"].value
            if micro_kernels.is_kernel(name):
                names.add(name)
    return sorted(names)


_CONTRACTIONS = ("stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution")


def library_cold(module, features, cache_dir: Path | None) -> bool:
    """Whether StableHLO ``module`` holds a contraction (which may call a
    micro-kernel) and the cache keeps none of the micro-kernels of CPU
    ``features`` and this build: they would be built at the link."""
    if not _holds_contraction(module):
        return False
    from xlac.errors import CompileError
    try:
        kept = {entry.name for entry in micro_kernels.directory(cache_dir).iterdir()}
    except (CompileError, OSError):         # no safe directory: the link says so if it needs one
        return False
    return not any(micro_kernels.kept_name(name, features) in kept
                   for name in micro_kernels.candidates(micro_kernels.level_for(features)))


def _holds_contraction(module) -> bool:
    from xlac.mlir import ir
    found = []

    def visit(op):
        if op.name in _CONTRACTIONS:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return bool(found)


def build_ahead(module, features, cache_dir: Path | None) -> list[str]:
    """Start building, on an idle piece worker, the micro-kernels ``module``
    calls that are not kept yet; the names sent (none: all kept, or no worker idle)."""
    wanted = []
    for name in called_kernels(module):
        path = micro_kernels.kept_path(name, features, cache_dir)
        with _LOCK:
            if not path.exists() and str(path) not in micro_kernels.BUILDING:
                wanted.append((name, path))
    if not wanted:
        return []
    worker = pieces.lend_for_job()
    if worker is None:
        return []
    level = micro_kernels.level_for(features)
    jobs = [[micro_kernels.kernel_text(name, level), name, level, str(path)] for name, path in wanted]
    thread = threading.Thread(target=_build, args=(worker, jobs), daemon=True,
                              name="xlac-micro-kernels-ahead")
    with _LOCK:
        for _, path in wanted:
            micro_kernels.BUILDING[str(path)] = thread
    thread.start()
    return [name for name, _ in wanted]


def _build(worker, jobs: list[list[str]]) -> None:
    """Send ``jobs`` to ``worker``, take its answer, hand the worker back."""
    try:
        pipes.write_frames(worker.process.stdin, json.dumps({"micro_kernels": jobs}).encode(), b"")
        status = worker.process.stdout.read(1)
        frames = pipes.read_frames(worker.process.stdout, 2) if status else None
        if frames is None:                      # died: the compiling process builds them
            worker.process.kill()
            worker.close()
        elif status == b"\0":
            micro_kernels.BUILT.extend(json.loads(frames[1]))
    except (OSError, EOFError, ValueError):
        worker.process.kill()
        worker.close()
    finally:
        pieces.returned(worker)
