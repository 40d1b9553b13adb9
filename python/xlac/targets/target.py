"""A target as data: its ordered table of stages, and what it can do.

Everything that depends on the target a program is compiled for reads its
``Target``: the pipeline (the stages' steps, in order), the stage names
(``exe.as_text``, ``xla-opt --xla-stage``), the cache key's pipeline text,
the disabled-pass check, and the capabilities that callers ask about instead
of comparing target names. ``Target.compile`` is the one loop that runs the
stages of every target. What comes after the passes (machine code and the
runtime that calls it) is the target's compiler, and reading compiled code
back is its loader: both named as ``"module:name"`` and imported only when
used, so that a cache hit imports neither MLIR nor a compiler.

A target registers itself in ``xlac.targets`` (one line); its folder holds
its table (``target.py``), its passes' lists (``pipeline.py``), its compiler
and its runtime.
"""

from __future__ import annotations

import importlib

from xlac.errors import CompileError, error
from xlac.record import record

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from collections.abc import Callable

    from xlac.executable import Executable
    from xlac.options import Options


@record
class Stage:
    """One named stage: the steps that make it, and what comes out.

    A stage with ``steps`` runs passes on the module. The first stage
    ("input") has none: it is the parsed program. A *code* stage has none
    either: its text is made from the module after the last pass stage by
    the function ``code`` names (``"module:function"``, module -> text), as
    PTX is made from the "gpu" stage.
    """

    name: str
    produces: str                          # what a reader finds at this stage
    steps: Callable[[str, Options], list[str]] | None = None   # (entry, options) -> passes
    code: str = ""                         # a code stage: "module:function" making its text
    kept: bool = False                     # its text travels with the code (cache, serialize)


@record
class Target:
    """A compilation target: its stages in order, and its capabilities."""

    name: str
    summary: str
    stages: tuple[Stage, ...]
    compiler: str                          # "module:Class": machine code from the last pass stage
    loader: str                            # "module:function": compiled code back from its bytes
    device_kind: str = "cpu"               # where the code runs: cpu, gpu, interpreter
    in_process: bool = True                # the code runs in this process (not a child's)
    aot: bool = False                      # xla-compile makes a C library of it
    profiles: bool = False                 # exe.profile() times each kernel
    recompiles: bool = False               # ... in a copy compiled again with kernel clocks
                                           # (else: the code's own profiled() copy, timed by the device)
    dynamic_shapes: bool = False           # `?` dims: compiled once per call shape
    input_keyed: bool = False              # a cache hit on the input's bytes loads without MLIR
    caches: bool = True                    # compiled code is kept in the compilation cache

    def stage_names(self) -> list[str]:
        return [stage.name for stage in self.stages]

    def stage(self, name: str) -> Stage:
        """The stage called ``name``; a CompileError listing them all otherwise."""
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise CompileError(error(f"no stage '{name}' on target {self.name}"),
                           f"stages: {', '.join(self.stage_names())}")

    def pass_stages(self) -> list[Stage]:
        """The stages that run passes, in order."""
        return [stage for stage in self.stages if stage.steps is not None]

    def stage_steps(self, entry: str, options: Options) -> dict[str, list[str]]:
        """Each pass stage's steps, with what ``options`` decides filled in."""
        return {stage.name: stage.steps(entry, options) for stage in self.pass_stages()}

    def pipeline(self, entry: str, options: Options) -> list[str]:
        """Every step of the pipeline, in order (disabled passes included)."""
        return [step for steps in self.stage_steps(entry, options).values() for step in steps]

    def pipeline_of(self, entry: str, **fields) -> list[str]:
        """``pipeline`` for the Options whose ``fields`` are given (as values, or
        as text: ``Options.with_texts``; None: Options' default): the target's
        one-pass named pipeline (``xla-cpu-pipeline``) is these very stages."""
        from xlac.options import Options
        given = {name: value for name, value in fields.items() if value is not None}
        return self.pipeline(entry, Options().with_texts(**given))

    def checked_pipeline(self, entry: str, options: Options) -> list[str]:
        """``pipeline``, once the passes ``options`` disables are known to be in
        it (a misspelt name would silently disable nothing)."""
        pipeline = self.pipeline(entry, options)
        if options.disable_passes:
            from xlac.pipeline.pipelines import check_disabled
            check_disabled(options.disable_passes, pipeline)
        return pipeline

    def steps_until(self, name: str, entry: str, options: Options) -> list[str]:
        """Every step from the input up to and including stage ``name`` (for a
        code stage: up to the pass stage its text is made from)."""
        self.stage(name)
        steps: list[str] = []
        for stage in self.stages:
            if stage.steps is not None:
                steps += stage.steps(entry, options)
            if stage.name == name:
                break
        return steps

    def compile(self, module, stages, entry: str, runner) -> Executable:
        """``module`` (the parsed input) -> an Executable: every pass stage run by
        ``runner`` in order, then the target's compiler makes the code. A compiler's
        ``stage_cut(stage, entry)`` may offer to take the end of a stage
        (``StageRunner.run``'s ``cut``), to run it where it makes the code."""
        from xlac.executable import Executable
        from xlac.signature import entry_signature
        from xlac.spmd.grid import program_grid
        compiler = resolve(self.compiler)(runner.options, program_grid(module.operation))
        kept, signature = {}, None
        cut = getattr(compiler, "stage_cut", lambda stage, entry: None)
        for stage in self.pass_stages():
            runner.run(module, stage.name, stage.steps(entry, runner.options),
                       cut(stage.name, entry))
            if signature is None:              # the first stage makes one StableHLO function
                signature = entry_signature(module, entry)
                compiler.ingested(module, entry, signature, runner)
            if stage.kept:
                kept[stage.name] = str(module)
        function = compiler.machine_code(module, entry, signature, kept, runner)
        stages.keep(function.stage_texts)
        stages.remarks = runner.remarks
        return Executable(function, signature, stages, self, entry=entry)

    def load(self, blob, what: str, entry: str, stages, options: Options,
             verified: bool = False) -> Executable:
        """An Executable from this target's bytes (``Executable.serialize()``, the
        cache); an ``ArtifactError`` for bytes that are not an intact artifact of
        this target. ``verified``: the caller checksummed every byte already."""
        from xlac.artifact.container import read_artifact
        from xlac.executable import Executable
        artifact = read_artifact(blob, what, self.name, entry, verified)
        function = resolve(self.loader)(artifact, options)
        stages.keep(function.stage_texts)
        return Executable(function, artifact.signature, stages, self, entry=entry)

    def code_text(self, name: str, module) -> str:
        """The text of code stage ``name`` made from ``module`` (at the last pass stage)."""
        return resolve(self.stage(name).code)(module)


def front_stages(target: str, complex_as_real: bool = True, parallel_rows: bool = True,
                 library_contractions=None, narrow_sums_in_f32: bool = False,
                 counted_top_k=None, integer_kernel=None, fft_kernels=None) -> tuple[Stage, ...]:
    """The stages every compiling target starts with (``xlac.pipeline.pipelines``):
    input -> stablehlo (checked for ``target``'s support) -> fused -> linalg
    (complex contractions as real ones where ``complex_as_real``; a sort's rows
    in an scf.forall where ``parallel_rows``; ``library_contractions``: options ->
    whether matmuls go to a library; f16/bf16 sums in f32 where ``narrow_sums_in_f32``;
    ``counted_top_k``: options -> whether large top-ks count; ``integer_kernel``: options ->
    whether 8-bit integer matmuls have an integer kernel; ``fft_kernels``: options -> whether
    FFT stages call micro-kernels; see ``lower_to_linalg``)."""
    from xlac.pipeline.pipelines import fused_stage, fused_stage_apart, ingest_stage, linalg_stage
    return (
        Stage("input", "the program as given, parsed and verified"),
        Stage("stablehlo", "one StableHLO function with static shapes, every op supported",
              ingest_stage(target)),
        Stage("fused", "StableHLO with its ops grouped into xla.fusion kernels, as XLA does",
              fused_stage if parallel_rows else fused_stage_apart),
        Stage("linalg", "linalg on tensors: each kernel a loop nest, contractions as matmuls",
              linalg_stage(complex_as_real, parallel_rows, library_contractions,
                           narrow_sums_in_f32, counted_top_k, integer_kernel, fft_kernels)),
    )


def resolve(reference: str):
    """The object ``"package.module:name"`` names, its module imported now."""
    module_name, name = reference.split(":")
    return getattr(importlib.import_module(module_name), name)
