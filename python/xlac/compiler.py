"""``xlac.compile``: source in, Executable out.

The one place that goes key -> cache get -> compile -> cache put. Options are
read from the environment here, at the API edge, unless given.

Keys come in two levels. The first is made from the input's bytes as they
are (with the options, the build identity and the CPU's features): a hit on
it loads the stored library with no MLIR at all, not even a parse, which is
why this module imports nothing heavy at its top. On a miss the program is
parsed and keyed again by its bytecode without locations, so two texts of one
program (a comment, a moved line) still share an entry; whatever is stored
is stored under both keys.
"""

from __future__ import annotations

import os

from xlac.cache import CompilationCache, digest, log
from xlac.cpu_model import cpu_model
from xlac.errors import CompileError, NotLoweredError, UnsupportedOpError, as_compile_errors, error
from xlac.frontend.source import source_to_bytes
from xlac.options import Options

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.executable import Executable

def compile(source, target: str = "cpu", entry: str = "main",  # noqa: A001 - the API's name
            disable_passes: tuple[str, ...] = (), cache: bool = True,
            options: Options | None = None, cpu: str | None = None) -> Executable:
    """Compile a StableHLO program for ``target``.

    ``source``: MLIR text, bytes (text, bytecode or a portable artifact), a
    path (``pathlib.Path``, any ``os.PathLike``, or a ``str`` naming an existing
    file), or an object with ``.as_text()`` (``jax.jit(f).lower(x)``: the
    executable is then called with ``f``'s pytree of arguments).
    ``options``: an ``xlac.Options`` (default: from the ``XLAC_*`` variables);
    ``disable_passes`` and ``cpu`` override its fields. ``cache=False`` skips
    the persistent compilation cache (``xlac.cache``) for the whole program;
    a big program's machine code pieces are still looked up there by their
    own content (``options.cache_dir=None`` turns that off too).
    """
    options = resolve_options(options, disable_passes, cpu)
    with as_compile_errors("<input>"):
        data, source_name = source_to_bytes(source)
    exe = compile_bytes(data, source_name, target, entry, options, cache)
    if isinstance(source, (str, bytes, bytearray, memoryview, os.PathLike)):
        return exe                                  # no pytrees: their module stays unloaded
    from xlac.frontend.pytrees import pytrees_of
    with as_compile_errors(source_name):
        trees = pytrees_of(source)
    return exe.with_pytrees(trees) if trees is not None else exe


def resolve_options(options: Options | None, disable_passes=(), cpu: str | None = None) -> Options:
    """``options`` (else the environment's) with the per-call overrides applied."""
    options = options or Options.from_env()
    if disable_passes:
        options = options.replace(disable_passes=tuple(disable_passes))
    if cpu:
        options = options.replace(cpu=cpu)
    try:
        cpu_model(options.cpu)
    except ValueError as exc:
        raise CompileError(error(str(exc)), "XLAC_CPU / cpu= takes one of those") from None
    return options


def compile_bytes(data: bytes, source_name: str, target: str = "cpu", entry: str = "main",
                  options: Options | None = None, cache: bool = True,
                  start: bool = True) -> Executable:
    """``compile`` for raw program bytes whose diagnostics carry ``source_name``.

    ``start=False``: an SPMD program is only compiled (for ``xla-compile``), not
    started on the ranks of an MPI job. Every failure is an xlac error.
    """
    with as_compile_errors(source_name):
        return _compile_bytes(data, source_name, target, entry, options, cache, start)


def _compile_bytes(data: bytes, source_name: str, target: str, entry: str,
                   options: Options | None, cache: bool, start: bool) -> Executable:
    options = options or Options.from_env()
    if options.launched_ranks > 1:                   # under mpiexec: one rank's error stops all
        from xlac.targets.cpu.collectives import abort_job_on_uncaught_errors
        abort_job_on_uncaught_errors(options)
    if not data.strip():
        raise CompileError(error("the input is empty", source_name),
                           "pass a StableHLO program: MLIR text, bytecode or a portable artifact")
    usable = cache and not options.stepwise and not options.profile   # a real, plain compile
    store = CompilationCache.open(options.cache_dir) if usable else None
    input_key = _input_key(data, target, entry, options) if store is not None else None
    if input_key is not None:
        exe = _input_hit(store, input_key, data, source_name, target, entry, options, start)
        if exe is not None:
            return exe
    return _parsed_and_compiled(data, source_name, target, entry, options, cache, start,
                                store, input_key)


def _input_key(data: bytes, target: str, entry: str, options: Options) -> str | None:
    """The first-level key: the input's bytes as given, before any parse (cpu only)."""
    if target != "cpu":
        return None
    from xlac.artifact.identity import build_identity
    from xlac.pipeline import pipelines
    pipeline = [step for steps in pipelines.cpu_stages(entry, options).values() for step in steps]
    if options.disable_passes:
        from xlac.debug.dump import check_disabled
        check_disabled(options.disable_passes, pipeline)
    configuration = _configuration(target, entry, options, pipeline,
                                   build_identity(options.cache_dir))
    return digest(b"input bytes", data, configuration)


def _input_hit(store, key, data, source_name, target, entry, options, start) -> Executable | None:
    """The entry stored under the input's key, loaded without MLIR; None on a miss."""
    what = f"{source_name} @{entry}"
    blob = store.get_view(key, what, quiet=True)   # the parsed key's look-up logs a miss
    if blob is None:
        return None
    from xlac.pipeline.stage_texts import StageTexts
    from xlac.targets.cpu.library import executable_from
    stages = StageTexts(data, source_name, entry, options)     # parsed only if asked for
    try:
        exe = executable_from(blob, f"cache entry {key[:16]}", entry, stages, options,
                              verified=True)         # store.get checked its SHA-256
    except (ValueError, CompileError, OSError) as exc:
        log.warning("xlac cache miss %s (%s): ignoring an unusable entry, rebuilding: %s",
                    key[:16], what, exc)
        return None
    grid = getattr(exe.function, "grid", None)
    if grid is not None and start:                   # an SPMD program: every rank loads it
        from xlac.targets.spmd import start_on_every_rank
        return start_on_every_rank(grid, lambda: exe, source_name, options)
    return _recompilable(exe, data, source_name, target, entry, options)


def _parsed_and_compiled(data, source_name, target, entry, options, cache, start, store,
                         input_key) -> Executable:
    """The miss: parse, key again by the bare program, then load or compile."""
    from xlac.collectives import program_grid
    from xlac.context import new_context
    from xlac.debug.dump import check_disabled
    from xlac.dynamic import compile_dynamic, has_dynamic_arguments
    from xlac.frontend.isolation import parse_untrusted
    from xlac.pipeline.stage_texts import StageTexts
    from xlac.targets import get_target
    from xlac.targets.spmd import start_on_every_rank
    backend = get_target(target)
    pipeline = backend.pipeline(entry, options)
    check_disabled(options.disable_passes, pipeline)
    module = parse_untrusted(new_context(), data, source_name, options)
    stages = StageTexts(data, source_name, entry, options)
    if has_dynamic_arguments(module, entry):        # `?` dims: compiled per call shape
        if target != "cpu":
            raise CompileError(error(f"dynamic shapes (`?` dimensions) are not supported on "
                                     f"{target}", source_name),
                               "compile for target='cpu', or give static shapes")
        return compile_dynamic(module, stages, source_name, target, entry,
                               options.disable_passes,
                               lambda static: compile_bytes(static, source_name, target, entry,
                                                            options, cache))
    key = digest(_bare_bytecode(module), _configuration(target, entry, options, pipeline))
    keys = [key] + ([input_key] if input_key is not None else [])
    build = lambda: _cached_or_compiled(store, keys, backend, module, data, source_name, target,
                                        entry, stages, options)
    grid = program_grid(module.operation)
    if grid is not None and start:                   # one MPI rank per device; none may hang
        return start_on_every_rank(grid, build, source_name, options)
    return build()


def _cached_or_compiled(store, keys, backend, module, data, source_name, target, entry, stages,
                        options) -> Executable:
    what = f"{source_name} @{entry}"
    if store is not None:
        exe = _cached(store, backend, keys, what, entry, stages, options)
        if exe is not None:
            return _recompilable(exe, data, source_name, target, entry, options)
    exe = _compile_module(backend, module, data, source_name, entry, stages, options)
    if store is not None:
        store.put(keys, exe.function.serializer(entry, exe.signature), what)
    return _recompilable(exe, data, source_name, target, entry, options)


def _recompilable(exe: Executable, data, source_name, target, entry, options) -> Executable:
    """Let ``exe`` compile its program again with other options (``exe.profile()``)."""
    exe.recompile = lambda **changes: compile_bytes(data, source_name, target, entry,
                                                    options.replace(**changes), cache=False)
    return exe


def _cached(store, backend, keys, what, entry, stages, options) -> Executable | None:
    key = keys[0]
    blob = store.get(key, what)
    if blob is None:
        return None
    try:
        exe = backend.deserialize(blob, f"cache entry {key[:16]}", entry, stages, options)
    except (ValueError, CompileError, OSError) as exc:
        log.warning("xlac cache miss %s (%s): ignoring an unusable entry, rebuilding: %s",
                    key[:16], what, exc)
        return None
    if len(keys) > 1:                 # stored again under the input's key: the next run of
        store.put(keys, lambda: blob, what)          # these very bytes hits without a parse
    return exe


def _compile_module(backend, module, data, source_name, entry, stages, options) -> Executable:
    from xlac.debug.dump import CompileReporter
    from xlac.pipeline.runner import StageRunner
    runner = StageRunner(options, CompileReporter(data, source_name, entry, options),
                         _progress(backend, source_name, entry, options))
    runner.start(module)
    try:
        exe = backend.compile(module, stages, entry, runner)
    except UnsupportedOpError as failure:
        raise failure.with_hint("docs/op-support.md lists what each target supports") from None
    except NotLoweredError as failure:
        raise failure.with_hint(_not_lowered_hint(options.disable_passes)) from None
    runner.finish()
    return exe


def _progress(backend, source_name: str, entry: str, options: Options):
    """The display of a long compile (``options.progress``), or None."""
    from pathlib import PurePath

    from xlac.debug.progress import compile_progress
    from xlac.pipeline.text import without_passes
    steps = without_passes(backend.pipeline(entry, options), options.disable_passes)
    title = PurePath(source_name).name if not source_name.startswith("<") else source_name
    try:
        return compile_progress(options.progress, title,
                                [name for name in backend.stage_names() if name != "input"]
                                + ["machine code"], len(steps) + 1)
    except ValueError as exc:
        raise CompileError(error(str(exc)), "progress takes auto, bar, log or off") from None


def _not_lowered_hint(disabled: tuple[str, ...]) -> str:
    """Ops left unlowered: the user's disabled passes, or a bug of xlac's."""
    if disabled:
        return (f"passes are disabled ({', '.join(disabled)}; --disable-passes / "
                "XLAC_DISABLE_PASSES): each op above needs the pass named beside it; "
                "enable it to compile this program")
    return "this is an xlac bug: please report it with the input program"


def _bare_bytecode(module) -> bytes:
    """The module's bytecode without locations: a comment or a moved line
    does not change the code, so it still hits (as JAX's cache does)."""
    import io

    from xlac.mlir import passmanager
    bare = module.operation.clone()
    with module.context:
        passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(bare)
    buffer = io.BytesIO()
    bare.write_bytecode(buffer)
    bare.erase()
    return buffer.getvalue()


def _configuration(target: str, entry: str, options: Options, pipeline: list[str],
                   identity: dict | None = None) -> dict:
    """Everything besides the program that the compiled code depends on."""
    from xlac.artifact.identity import build_identity
    return {"target": target, "entry": entry, "pipeline": pipeline,
            "disabled": sorted(options.disable_passes),
            "build": identity or build_identity(options.cache_dir),
            "cpu_features": list(cpu_model(options.cpu).features),
            "malloc_tuning": options.malloc_tuning, "cuda_graphs": options.cuda_graphs}
