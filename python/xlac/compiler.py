"""``xlac.compile``: source in, Executable out."""

from __future__ import annotations

from xlac.pipeline import pipelines
from xlac.dynamic import compile_dynamic, has_dynamic_arguments
from xlac.errors import CompileError
from xlac.executable import Executable
from xlac.frontend.parse import parse_module, source_to_bytes
from xlac.mlir import new_context
from xlac.targets.cpu.runtime import CpuFunction
from xlac.signature import entry_signature
from xlac.pipeline.stage_texts import StageTexts

TARGETS = ("cpu", "cuda")


def compile(source, target: str = "cpu", entry: str = "main",
            disable_passes: tuple[str, ...] = (), cache: bool = True) -> Executable:  # noqa: A001 - the API's name
    """Compile a StableHLO program for ``target``.

    ``source``: MLIR text, bytes (text, bytecode or a portable artifact), a
    ``pathlib.Path``, or an object with ``.as_text()`` (``jax.jit(f).lower(x)``).
    ``cache=False`` skips the persistent compilation cache (``xlac.cache``).
    """
    data, source_name = source_to_bytes(source)
    return compile_bytes(data, source_name, target, entry, disable_passes, cache)


def compile_bytes(data: bytes, source_name: str, target: str = "cpu", entry: str = "main",
                  disable_passes: tuple[str, ...] = (), cache: bool = True) -> Executable:
    """``compile`` for raw program bytes whose diagnostics carry ``source_name``."""
    from xlac.debug.dump import DebugOptions, check_disabled
    if target not in TARGETS:
        raise CompileError(f"<unknown>: error: unknown target '{target}'",
                           f"targets: {', '.join(TARGETS)}")
    if not data.strip():
        raise CompileError(f"{source_name}: error: the input is empty",
                           "pass a StableHLO program: MLIR text, bytecode or a portable artifact")
    options = DebugOptions.from_env(disable_passes)
    check_disabled(options.disable_passes, _pipeline(target, entry))
    module = parse_module(new_context(), data, source_name)
    stages = StageTexts(data, source_name, entry, frozenset(options.disable_passes))
    if target == "cuda":
        return _compile_cuda(module, data, stages, source_name, entry, options, cache)
    if has_dynamic_arguments(module, entry):        # `?` dims: compiled per call shape
        return compile_dynamic(module, stages, source_name, target, entry,
                               options.disable_passes, cache)
    store = _open_cache(cache and not options.stepwise)   # dumps and timings need a real compile
    if store is not None:
        key = _cache_key(module, target, entry, options)
        what = f"{source_name} @{entry}"
        cached = store.lookup(key, what, entry, target, stages)
        if cached is not None:
            return cached
    exe = _compile_module(module, data, source_name, target, entry, options, stages)
    if store is not None and not exe.signature.is_dynamic:   # dynamic: compiled per call shape
        store.store(key, exe, what)
    return exe


def _compile_module(module, data, source_name, target, entry, options, stages) -> Executable:
    from xlac.debug.dump import CompileSession
    session = CompileSession(data, source_name, entry, options)
    session.start(module)
    try:
        session.run(module, "stablehlo", pipelines.ingest(entry, target))
    except CompileError as error:
        if any("is not supported on" in line for line in error.diagnostics):
            raise CompileError(error.diagnostics,
                               "docs/op-support.md lists what each target supports") from None
        raise
    signature = entry_signature(module, entry)
    for stage in list(pipelines.CPU_STAGES)[2:]:          # the stages after "stablehlo"
        session.run(module, stage, pipelines.CPU_STAGES[stage](entry))
    function = session.jit(lambda: CpuFunction(module, entry))
    session.finish()
    return Executable(function, signature, stages, target, entry=entry)


def _compile_cuda(module, data, stages, source_name, entry, options, cache: bool) -> Executable:
    from xlac.targets.cuda.compile import compile_cuda
    from xlac.debug.dump import CompileSession
    if has_dynamic_arguments(module, entry):
        raise CompileError(f"{source_name}: error: dynamic shapes (`?` dimensions) are not "
                           "supported on cuda", "compile for target='cpu', or give static shapes")
    store = _open_cache(cache and not options.stepwise)
    if store is not None:
        key = _cache_key(module, "cuda", entry, options)
        cached = store.lookup(key, f"{source_name} @{entry}", entry, "cuda", stages)
        if cached is not None:
            return cached
    session = CompileSession(data, source_name, entry, options)   # dumps, timings, reproducers
    session.start(module)
    exe = compile_cuda(module, stages, entry, session)
    session.finish()
    if store is not None:
        store.store(key, exe, f"{source_name} @{entry}")
    return exe


def _open_cache(wanted: bool):
    if not wanted:
        return None
    from xlac.cache import CompilationCache
    return CompilationCache.open()


def _pipeline(target: str, entry: str) -> list[str]:
    if target == "cuda":
        from xlac.targets.cuda import pipeline as cuda_pipeline
        return cuda_pipeline.cuda(entry)
    return pipelines.cpu(entry)


def _cache_key(module, target: str, entry: str, options) -> str:
    from xlac.cache import cache_key
    from xlac.targets.cpu.runtime import configured_threads
    return cache_key(module, {"target": target, "entry": entry, "opt_level": 3,
                              "disabled_passes": sorted(options.disable_passes),
                              "pipeline": _pipeline(target, entry),
                              "threads": configured_threads()})   # parallel loops are split for it
