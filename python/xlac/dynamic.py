"""Programs with ``?`` dimensions: compiled once per shape signature, reused.

A shape-polymorphic program (``tensor<?x4xf32>`` arguments, as JAX exports
with symbolic shapes) cannot be compiled before its shapes are known. Each
call with new shapes specializes it: the upstream
``stablehlo-refine-arguments`` gives the entry those shapes, and the normal
compile (whose ingest runs ``stablehlo-refine-shapes``) makes the whole
program static and compiles it. Specializations are kept by input shapes.

Every specialization logs one line on the ``xlac`` logger at INFO saying
why it happened, so an unexpected recompile can be explained::

    logging.basicConfig(level=logging.INFO)
    # INFO:xlac:compiling @main for f32[5,4]: first call with this shape
    #   (argument 0 was f32[3,4] in the previous call; 1 shape compiled before)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np

from xlac.context import new_context
from xlac.dtypes import shape_str
from xlac.errors import CompileError, error
from xlac.executable import Executable
from xlac.frontend.parse import parse_module
from xlac.mlir import ir
from xlac.pipeline.pass_manager import run_passes
from xlac.pipeline.stage_texts import StageTexts
from xlac.pipeline.text import without_passes
from xlac.signature import Signature, TensorSpec, check_inputs, entry_signature

log = logging.getLogger("xlac")

# Shape signatures kept per executable; the oldest goes first beyond this,
# so a program called with ever-new shapes does not grow without bound.
MAX_SPECIALIZATIONS = 64

_SHAPE_FREE_STAGES = ("input", "stablehlo")   # the rest differ per shape


def has_dynamic_arguments(module: ir.Module, entry: str) -> bool:
    """Does ``@entry`` (as parsed, before the ingest) take a tensor with ``?`` dims?"""
    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == entry:
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            return any(isinstance(t, ir.RankedTensorType) and not t.has_static_shape
                       for t in ftype.inputs)
    return False


def compile_dynamic(module: ir.Module, stages: StageTexts, source_name: str, target,
                    entry: str, options, compile_static: Callable[[bytes], Executable]
                    ) -> DynamicExecutable:
    """Ingest a program with dynamic arguments for ``target`` (an
    ``xlac.targets.target.Target``); its code is made per call shape by
    ``compile_static`` (program bytes with static shapes -> Executable)."""
    ingest = target.stage("stablehlo").steps(entry, options)
    run_passes(module, without_passes(ingest, options.disable_passes))
    signature = entry_signature(module, entry, allow_dynamic=True)
    return DynamicExecutable(module, signature, stages, source_name, target, entry, compile_static)


class DynamicExecutable(Executable):
    """An ``Executable`` for a program with ``?`` dims in its arguments.

    ``signature`` has ``None`` for each dynamic dim (printed ``?``). Each
    call checks the inputs against it (``InputError`` for a wrong count,
    rank, dtype or static dim), then runs the specialization for the
    inputs' shapes, compiling it on the first call with those shapes.
    ``as_text`` of "input" and "stablehlo" shows the dynamic program; later
    stages show the most recent specialization (a ``CompileError`` before
    the first call: use ``specialize``).
    """

    def __init__(self, module: ir.Module, signature: Signature, stages: StageTexts,
                 source_name: str, target: str, entry: str,
                 compile_static: Callable[[bytes], Executable]):
        super().__init__(None, signature, stages, target, entry)
        # with debug info, so each specialization's diagnostics point into the source
        self._text = module.operation.get_asm(enable_debug_info=True).encode()
        self._source_name = source_name
        self._compile_static = compile_static
        self._specializations: dict[tuple[tuple[int, ...], ...], Executable] = {}
        self._latest: tuple[tuple[int, ...], ...] | None = None
        self._lock = threading.Lock()        # calls from several threads share the table

    def run(self, *arrays, **kwargs) -> list[np.ndarray]:
        """Run once; always returns a list with one array per result."""
        plain = self._plain_arguments(arrays, kwargs)
        outputs = self._run_compiled_shapes(plain) if plain is not None else None
        if outputs is None:      # new shapes, or arguments to convert or refuse
            inputs = check_inputs(self.signature, *self.named_arguments(arrays, kwargs))
            outputs = self._specialization(inputs).run(*inputs)
        return outputs

    def _run_compiled_shapes(self, arrays) -> list[np.ndarray] | None:
        """The outputs when ``arrays`` are plain ndarrays of shapes compiled before
        and need no conversion, else None: no check against the dynamic
        signature, whose checks those shapes passed when they were compiled."""
        ndarray = np.ndarray
        key = tuple([a.shape if type(a) is ndarray else None for a in arrays])
        found = self._specializations.get(key)      # a dict read: safe beside a locked write
        if found is None:
            return None
        if key != self._latest:
            with self._lock:
                if key in self._specializations:
                    self._latest = key
        return found._run_ready(arrays)

    def specialize(self, *arrays) -> Executable:
        """The static ``Executable`` for these inputs' shapes (compiled if new).

        Only shapes and dtypes matter: ``np.empty(shape, dtype)`` will do.
        """
        return self._specialization(check_inputs(self.signature, arrays))

    @property
    def specializations(self) -> list[tuple[tuple[int, ...], ...]]:
        """The input shapes compiled so far, oldest first."""
        with self._lock:                 # another thread may be adding one
            return list(self._specializations)

    def as_text(self, stage: str | None = None) -> str:
        stage = stage or self._target.stages[-1].name
        if stage in _SHAPE_FREE_STAGES or stage not in self.stages:
            return self._stages.text(stage)
        if self._latest is None:
            raise CompileError(
                error(f"@{self.entry} has dynamic shapes {self._inputs_str()}; "
                f"its '{stage}' stage exists once per shape signature"),
                "call the executable first (the latest call's shapes are shown), or "
                "use exe.specialize(*arrays).as_text(stage)")
        with self._lock:                 # read with the table, as another thread changes it
            latest = self._specializations[self._latest]
        return latest.as_text(stage)

    def serialize(self) -> bytes:
        raise CompileError(
            error(f"@{self.entry} has dynamic shapes {self._inputs_str()}; "
            "only a specialization to concrete shapes can be serialized"),
            "exe.specialize(*arrays).serialize()")

    def _specialization(self, inputs: list[np.ndarray]) -> Executable:
        key = tuple(tuple(a.shape) for a in inputs)
        with self._lock:                 # one compile per new shape, however many callers
            found = self._specializations.get(key)
            if found is None:
                log.info("compiling @%s for %s: %s", self.entry, self._shapes_str(key),
                         self._reason(key))
                found = self._compile(key)
                if len(self._specializations) >= MAX_SPECIALIZATIONS:
                    del self._specializations[next(iter(self._specializations))]
                self._specializations[key] = found
            self._latest = key
        return found

    def _compile(self, shapes: tuple[tuple[int, ...], ...]) -> Executable:
        try:
            return self._compile_refined(shapes)
        except CompileError as failure:
            where = (f"while compiling @{self.entry} {self._inputs_str()} for "
                     f"{self._shapes_str(shapes)}")
            raise failure.with_hint(f"{failure.hint}; {where}" if failure.hint else where) from None

    def _compile_refined(self, shapes: tuple[tuple[int, ...], ...]) -> Executable:
        types = ",".join(TensorSpec(shape, spec.element_type).mlir_type()
                         for shape, spec in zip(shapes, self.signature.inputs))
        module = parse_module(new_context(), self._text, self._source_name)
        run_passes(module, [f"stablehlo-refine-arguments{{types={types}}}"])
        return self._compile_static(module.operation.get_asm(enable_debug_info=True).encode())

    def _reason(self, key: tuple[tuple[int, ...], ...]) -> str:
        if self._latest is None:
            return "first call"
        changed = [f"argument {i} was {self._shape_str(i, old)}"
                   for i, (old, new) in enumerate(zip(self._latest, key)) if old != new]
        count = len(self._specializations)
        return (f"first call with this shape ({', '.join(changed)} in the previous call; "
                f"{count} shape{'s' if count != 1 else ''} compiled before)")

    def _shape_str(self, index: int, shape: tuple[int, ...]) -> str:
        return shape_str(self.signature.inputs[index].dtype, shape)

    def _shapes_str(self, key: tuple[tuple[int, ...], ...]) -> str:
        return ", ".join(self._shape_str(i, shape) for i, shape in enumerate(key))

    def _inputs_str(self) -> str:
        return "(" + ", ".join(str(spec) for spec in self.signature.inputs) + ")"

