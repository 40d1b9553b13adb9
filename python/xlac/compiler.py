"""``xlac.compile``: source in, Executable out. The story, top to bottom:

options -> source bytes -> key (``xlac.cache.keys``) -> cache -> parse (in an
isolated worker) -> ``target.compile`` -> cache.

Keys come in two levels. The first is made from the input's bytes as they
are: a hit on it loads the stored code with no MLIR at all, not even a parse,
which is why this module imports nothing heavy at its top. On a miss the
program is parsed and keyed again by its bytecode without locations, so two
texts of one program (a comment, a moved line) still share an entry;
whatever is stored is stored under both keys. A program that runs on several
devices is built (or loaded) on every rank before any collective runs.
"""

from __future__ import annotations

import os

from xlac.cache import CompilationCache, log
from xlac.collector import collector_paused
from xlac.cpu_model import cpu_model
from xlac.errors import CompileError, NotLoweredError, UnsupportedOpError, as_compile_errors, error
from xlac.frontend.source import source_to_bytes
from xlac.options import Options
from xlac.targets import get_target

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from xlac.executable import Executable
    from xlac.targets.target import Target


def compile(source, target: str = "cpu", entry: str = "main",  # noqa: A001 - the API's name
            disable_passes: tuple[str, ...] = (), cache: bool = True,
            options: Options | None = None, cpu: str | None = None,
            device: int | None = None) -> Executable:
    """Compile a StableHLO program for ``target`` ("cpu", "cuda" or "reference").

    ``source``: MLIR text, bytes (text, bytecode or a portable artifact), a
    path (``pathlib.Path``, any ``os.PathLike``, or a ``str`` naming an existing
    file), or an object with ``.as_text()`` (``jax.jit(f).lower(x)``: the
    executable is then called with ``f``'s pytree of arguments).
    ``options``: an ``xlac.Options`` (default: from the ``XLAC_*`` variables);
    ``disable_passes``, ``cpu`` and ``device`` (the GPU of a cuda program) override its fields. ``cache=False`` skips
    the persistent compilation cache (``xlac.cache``) for the whole program;
    a big program's machine code pieces are still looked up there by their
    own content (``options.cache_dir=None`` turns that off too).
    """
    options = resolve_options(options, disable_passes, cpu)
    if device is not None:                          # target="cuda": the GPU it runs on
        options = options.replace(device=device)
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
    with as_compile_errors(source_name), collector_paused():    # no cycles to find: xlac.collector
        options = options or Options.from_env()
        return _Compile(data, source_name, get_target(target), entry, options, cache, start).run()


class _Compile:
    """One call of ``compile``: its program, target, options and cache."""

    def __init__(self, data: bytes, source_name: str, target: Target, entry: str,
                 options: Options, cache: bool, start: bool):
        self.data, self.source_name, self.target, self.entry = data, source_name, target, entry
        self.options, self.start = options, start
        self.what = f"{source_name} @{entry}"
        self.usable = cache and target.caches and not options.stepwise and not options.profile
        self.store = CompilationCache.open(options.cache_dir) if self.usable else None

    def run(self) -> Executable:
        if self.options.launched_ranks > 1:           # under mpiexec: one rank's error stops all
            from xlac.spmd.mpi import abort_job_on_uncaught_errors
            abort_job_on_uncaught_errors(self.options)
        if not self.data or self.data.isspace():      # not strip(): it copies a 128 MB text
            raise CompileError(error("the input is empty", self.source_name),
                               "pass a StableHLO program: MLIR text, bytecode or a portable artifact")
        input_key = None
        if self.store is not None and self.target.input_keyed:
            from xlac.cache.keys import input_key as key_of_input
            input_key = key_of_input(self.data, self.target, self.entry, self.options)
            exe = self._loaded_by_input_key(input_key)
            if exe is not None:
                return exe
        return self._parsed_and_built(input_key)

    def _loaded_by_input_key(self, key: str) -> Executable | None:
        """The code stored under the input's own key, loaded with no parse; None on a miss."""
        blob = self.store.get_view(key, self.what, quiet=True)   # the parsed key's look-up logs a miss
        exe = self._loaded(blob, key) if blob is not None else None
        grid = getattr(exe.function, "grid", None) if exe is not None else None
        if grid is not None and self.start:              # an SPMD program: every rank loads it
            from xlac.spmd.start import start_on_every_rank
            return start_on_every_rank(grid, lambda: exe, self.source_name, self.options)
        return exe

    def _parsed_and_built(self, input_key: str | None) -> Executable:
        """The miss: parse (isolated), key again by the bare program, then load or compile."""
        from xlac.context import new_context
        from xlac.frontend.isolation import parse_untrusted
        from xlac.spmd.grid import program_grid
        self.target.checked_pipeline(self.entry, self.options)
        module = parse_untrusted(new_context(), self.data, self.source_name, self.options)
        if self._has_dynamic_arguments(module):        # `?` dims: compiled per call shape
            return self._dynamic(module)
        keys = [input_key] if input_key is not None else []
        build = lambda: self._cached_or_compiled(module, keys)
        grid = program_grid(module.operation)
        if grid is not None and self.start:            # one MPI rank per device; none may hang
            from xlac.spmd.start import start_on_every_rank
            return start_on_every_rank(grid, build, self.source_name, self.options)
        return build()

    def _cached_or_compiled(self, module, keys: list[str]) -> Executable:
        if self.store is not None:
            from xlac.cache.keys import program_key
            keys.insert(0, program_key(module, self.target, self.entry, self.options))
            blob = self.store.get(keys[0], self.what)
            exe = self._loaded(blob, keys[0]) if blob is not None else None
            if exe is not None:
                if len(keys) > 1:         # stored again under the input's key: the next run
                    self.store.put(keys, lambda: blob, self.what)   # of these bytes needs no parse
                return exe
        exe = self._compiled(module)
        if self.store is not None:
            self.store.put(keys, exe.function.serializer(self.entry, exe.signature), self.what)
        return exe

    def _loaded(self, blob, key: str) -> Executable | None:
        """The executable of a cache entry, loaded without MLIR; None if it is unusable."""
        try:
            exe = self.target.load(blob, f"cache entry {key[:16]}", self.entry, self._stages(),
                                   self.options, verified=True)   # the store checked its SHA-256
        except (ValueError, CompileError, OSError) as exc:
            log.warning("xlac cache miss %s (%s): ignoring an unusable entry, rebuilding: %s",
                        key[:16], self.what, exc)
            return None
        return self._recompilable(exe)

    def _compiled(self, module) -> Executable:
        from xlac.debug.dump import CompileReporter
        from xlac.pipeline.runner import StageRunner
        runner = StageRunner(self.options,
                             CompileReporter(self.data, self.source_name, self.entry, self.options),
                             self._progress(), self._piece_cache())
        runner.start(module)
        try:
            exe = self.target.compile(module, self._stages(), self.entry, runner)
        except UnsupportedOpError as failure:
            raise failure.with_hint("docs/op-support.md lists what each target supports") from None
        except NotLoweredError as failure:
            raise failure.with_hint(_not_lowered_hint(self.options.disable_passes)) from None
        runner.finish()
        from xlac.pipeline.remark_log import log_remarks
        log_remarks(runner.remarks)
        return self._recompilable(exe)

    def _dynamic(self, module) -> Executable:
        from xlac.dynamic import compile_dynamic
        if not self.target.dynamic_shapes:
            raise CompileError(error(f"dynamic shapes (`?` dimensions) are not supported on "
                                     f"{self.target.name}", self.source_name),
                               "compile for target='cpu', or give static shapes")
        return compile_dynamic(module, self._stages(), self.source_name, self.target, self.entry,
                               self.options,
                               lambda static: compile_bytes(static, self.source_name,
                                                            self.target.name, self.entry,
                                                            self.options, self.store is not None))

    def _recompilable(self, exe: Executable) -> Executable:
        """Let ``exe`` compile its program again with other options (``exe.profile()``)."""
        exe.recompile = lambda **changes: compile_bytes(
            self.data, self.source_name, self.target.name, self.entry,
            self.options.replace(**changes), cache=False)
        return exe

    def _stages(self):
        from xlac.pipeline.stage_texts import StageTexts
        return StageTexts(self.target, self.data, self.source_name, self.entry, self.options)

    def _piece_cache(self):
        """Where a big program's machine-code pieces are kept: the store even
        when this program's own entry is not (``cache=False``)."""
        from xlac.cache.keys import ContentCache
        store = self.store if self.usable else CompilationCache.open(self.options.cache_dir)
        return ContentCache(store, self.options) if store is not None else None

    def _progress(self):
        """The display of a long compile (``options.progress``), or None."""
        from pathlib import PurePath

        from xlac.debug.progress import compile_progress
        from xlac.pipeline.text import without_passes
        steps = without_passes(self.target.pipeline(self.entry, self.options),
                               self.options.disable_passes)
        name = self.source_name
        title = PurePath(name).name if not name.startswith("<") else name
        stages = [stage.name for stage in self.target.pass_stages()] + ["machine code"]
        try:
            return compile_progress(self.options.progress, title, stages, len(steps) + 1)
        except ValueError as exc:
            raise CompileError(error(str(exc)), "progress takes auto, bar, log or off") from None

    def _has_dynamic_arguments(self, module) -> bool:
        from xlac.dynamic import has_dynamic_arguments
        return has_dynamic_arguments(module, self.entry)


def _not_lowered_hint(disabled: tuple[str, ...]) -> str:
    """Ops left unlowered: the user's disabled passes, or a bug of xlac's."""
    if disabled:
        return (f"passes are disabled ({', '.join(disabled)}; --disable-passes / "
                "XLAC_DISABLE_PASSES): each op above needs the pass named beside it; "
                "enable it to compile this program")
    return "this is an xlac bug: please report it with the input program"
