"""``xlac.compile``: source in, Executable out."""

from __future__ import annotations

from xlac import pipelines
from xlac.errors import CompileError
from xlac.executable import Executable
from xlac.ingest import parse_module, source_to_bytes
from xlac.mlir import new_context
from xlac.pass_manager import run_passes
from xlac.runtime.cpu import CpuFunction
from xlac.signature import entry_signature
from xlac.stages import StageTexts

TARGETS = ("cpu",)


def compile(source, target: str = "cpu", entry: str = "main",
            disable_passes: tuple[str, ...] = ()) -> Executable:  # noqa: A001 - the API's name
    """Compile a StableHLO program for ``target``.

    ``source``: MLIR text, bytes (text, bytecode or a portable artifact), a
    ``pathlib.Path``, or an object with ``.as_text()`` (``jax.jit(f).lower(x)``).
    """
    data, source_name = source_to_bytes(source)
    return compile_bytes(data, source_name, target, entry, disable_passes)


def compile_bytes(data: bytes, source_name: str, target: str = "cpu", entry: str = "main",
                  disable_passes: tuple[str, ...] = ()) -> Executable:
    """``compile`` for raw program bytes whose diagnostics carry ``source_name``."""
    if target not in TARGETS:
        raise CompileError(f"<unknown>: error: unknown target '{target}'",
                           f"targets: {', '.join(TARGETS)}")
    if not data.strip():
        raise CompileError(f"{source_name}: error: the input is empty",
                           "pass a StableHLO program: MLIR text, bytecode or a portable artifact")
    disabled = frozenset(disable_passes)
    ctx = new_context()
    module = parse_module(ctx, data, source_name)
    try:
        run_passes(module, pipelines.ingest(entry, target), disabled=disabled)
    except CompileError as error:
        if any("is not supported on" in line for line in error.diagnostics):
            raise CompileError(error.diagnostics,
                               "docs/op-support.md lists what each target supports") from None
        raise
    signature = entry_signature(module, entry)
    run_passes(module, pipelines.lower_to_linalg() + pipelines.bufferize()
               + pipelines.lower_to_llvm(), disabled=disabled)
    function = CpuFunction(module, entry)
    stages = StageTexts(data, source_name, entry, disabled)
    return Executable(function, signature, stages, target)
