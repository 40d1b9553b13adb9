"""``Executable``: a compiled program you call with numpy arrays.

What an executable is made of is declared here as protocols, so that the
CPU's JIT functions, loaded libraries and the cuda runtime are interchangeable
behind one ``Executable`` and nothing here imports a target.
"""

from __future__ import annotations

from xlac.errors import InputError
from xlac.signature import Signature, check_inputs

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:                 # numpy loads on the first run: a cache hit needs none
    from collections.abc import Callable
    from typing import Protocol

    import numpy as np
else:
    Protocol = object             # the protocols below are for type checkers and readers


class CompiledFunction(Protocol):
    """Compiled code: called with the data pointers of every input, then every output."""

    stage_texts: dict[str, str]       # the stage texts that travel with the code (Stage.kept)

    def __call__(self, pointers: list[int]) -> None: ...

    # Optional, the quicker way in (``xlac.calls``): ``array_caller(count)`` returns
    # ``call(inputs, outputs)`` taking the ``count`` arrays themselves (plain
    # ndarrays, C-contiguous), or None where this function takes only pointers.

    def serializer(self, entry: str, signature: Signature) -> Callable[[], bytes]:
        """What the bytes of this code will be: whatever must be taken now is taken
        (the JIT's object code), the slow rest (linking) runs when called."""


class Stages(Protocol):
    """The IR of a compiled program at its named stages."""

    remarks: list

    def names(self) -> list[str]: ...

    def keep(self, texts: dict[str, str]) -> None:
        """Stage texts that came with the code."""

    def text(self, stage: str) -> str: ...

    def module(self, stage: str):
        """A fresh ``ir.Module`` at ``stage``, or None where there is no IR (loaded code)."""


class Executable:
    """A program compiled for one target; ``run`` it with numpy arrays.

    Outputs are fresh arrays owned by the caller; inputs are never modified.
    ``signature`` lists the input and output shapes; a dimension the program
    leaves dynamic (``?``) is ``None`` there, and such a program compiles
    once per call shape (``xlac.dynamic.DynamicExecutable``).
    """

    def __init__(self, function: CompiledFunction, signature: Signature, stages: Stages,
                 target, entry: str = "main"):
        self._function = function
        self.signature = signature
        self._stages = stages
        self._target = target             # its xlac.targets.target.Target: what it can do
        self.entry = entry

    @property
    def target(self) -> str:
        """The name of the target the program was compiled for ("cpu", "cuda", ...)."""
        return self._target.name

    pytrees = None            # frontend.pytrees.PyTrees of a program lowered by JAX
    _prepared = None          # xlac.calls.PreparedCall: made on the first call
    _on_device = None         # does a call return device arrays (cuda)? Known after the first

    def run(self, *arrays, **kwargs) -> list[np.ndarray]:
        """Run once; always returns a list with one array per result.

        A program compiled from ``jax.jit(f).lower(...)`` also takes ``f``'s
        arguments as they were lowered (lists, dicts: the same pytree).
        """
        prepared = self._prepared or self._prepare()
        plain = self._plain_arguments(arrays, kwargs)
        outputs = prepared(plain) if plain is not None else None
        if outputs is None and self._takes_device_arrays(plain):    # read where they are
            return [output.numpy() for output in self._device_call(arrays, kwargs)]
        if outputs is None:         # arguments to convert, or to refuse with every mismatch named
            outputs = prepared.run(check_inputs(self.signature,
                                                *self.named_arguments(arrays, kwargs)))
        return outputs

    def _run_ready(self, arrays) -> list[np.ndarray] | None:
        """``run`` for the program's own arguments when none needs a conversion
        (plain ndarrays of the compiled dtypes and shapes, C-contiguous), else None."""
        return (self._prepared or self._prepare())(arrays)

    def _prepare(self):
        from xlac.calls import PreparedCall  # here: numpy, which it imports, loads on a first run
        self._prepared = PreparedCall(self.signature, self._function)
        return self._prepared

    def __call__(self, *arrays, **kwargs):
        """One result -> the array; several -> a tuple of arrays. Compiled from
        ``jax.jit(f).lower(...)``: called like ``f``, returning ``f``'s pytree.
        On a GPU (target "cuda") the arrays are ``xlac.DeviceArray``s, left on the
        device and maybe still being computed, as jax's are (``run`` returns numpy)."""
        if self._on_device is None:           # worked out once: a call takes a few attribute reads
            self._on_device = getattr(self._function, "device_call", None) is not None and \
                not self.signature.is_dynamic
        if self._on_device:
            outputs = self._device_call(arrays, kwargs)
        else:
            outputs = self.run(*arrays, **kwargs)
        if self.pytrees is not None:
            return self.pytrees.unflatten(outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _takes_device_arrays(self, arguments) -> bool:
        """Has a device function been given a device array (which ``run`` reads in place)?"""
        takes = getattr(self._function, "takes_on_device", None)
        return takes is not None and arguments is not None and takes(arguments)

    def _device_call(self, arrays: tuple, kwargs: dict) -> list:
        return self._function.device_call(self.flat_arguments(arrays, kwargs), self.signature)

    def flat_arguments(self, arrays: tuple, kwargs: dict) -> list:
        """The program's arguments: ``arrays``, or the leaves of a JAX function's pytree."""
        return self.named_arguments(arrays, kwargs)[0]

    def _plain_arguments(self, arrays: tuple, kwargs: dict) -> tuple | list | None:
        """``flat_arguments`` where they are found quickly: ``arrays``, or the
        leaves of ``f``'s pytree when the call has it; None otherwise (then
        ``named_arguments`` takes them or says what is wrong)."""
        if self.pytrees is not None:
            return self.pytrees.leaves(arrays, kwargs)
        return None if kwargs else arrays

    def named_arguments(self, arrays: tuple, kwargs: dict) -> tuple[list, list[str] | None]:
        """``flat_arguments`` and, for a JAX function, each one's pytree path."""
        if self.pytrees is not None:
            return self.pytrees.flatten_named(arrays, kwargs, len(self.signature.inputs))
        if kwargs:
            raise InputError(f"keyword arguments ({', '.join(kwargs)}) given, but this "
                             "executable takes positional arrays only")
        return list(arrays), None

    def with_pytrees(self, pytrees) -> Executable:
        """The same executable, called with (and returning) a JAX function's pytrees."""
        import copy  # here: a hit copies nothing
        other = copy.copy(self)
        other.pytrees = pytrees
        return other

    def as_text(self, stage: str | None = None) -> str:
        """The IR at a named stage of the target (``exe.stages``; default: the last):
        on the CPU input, stablehlo, fused, linalg, bufferized, llvm; on CUDA ...,
        kernels, gpu, ptx."""
        return self._stages.text(stage or self._target.stages[-1].name)

    def fusion_report(self) -> str | None:
        """Which ops run fused in which kernel, their cost, what was not fused and why,
        and which ops no schedule took. Code loaded from an artifact (``xlac.load``,
        ``xlac.deserialize``) has the report its artifact keeps (xla-compile and
        ``serialize()`` write it); None for one that keeps none (cuda)."""
        from xlac.debug.fusion_report import fusion_report
        return fusion_report(self._stages)

    def profile(self, *arrays, runs: int = 10):
        """Time each kernel over ``runs`` calls: an ``xlac.debug.profile.Profile``
        (``.table()``, ``.write_trace(path)`` for Perfetto). On the CPU a copy of the
        program is compiled with a clock around every kernel; on a GPU a copy of the
        code times each launch with CUDA events. This executable is untouched."""
        from xlac.debug.profile import profile_calls
        from xlac.errors import CompileError, error
        recompile = getattr(self, "recompile", None)
        profiled = getattr(self._function, "profiled", None)
        if self._target.profiles and not self._target.recompiles and profiled is not None:
            return profile_calls(self.with_function(profiled()), arrays, runs)
        if recompile is None or not self._target.recompiles:
            raise CompileError(error(f"cannot profile this {self.target} executable: it was not "
                                     "compiled here from its program"),
                               "profile the result of xlac.compile on a target that "
                               "profiles (cpu, cuda)")
        profile = profile_calls(recompile(profile=True), arrays, runs)
        if "fused" not in self.stages:
            return profile
        from xlac.debug.profile import named_after_fusions
        return named_after_fusions(profile, self._stages.module("fused").operation)

    def fusion_graph(self, path) -> list | None:
        """Write the program's graph, its kernels as groups (numbered as in
        ``fusion_report``), for Model Explorer (``path``, a .json, and its node
        data), Graphviz (.dot) and a browser (.html); returns the files. None
        for code loaded from an artifact (it has no program)."""
        module = self._stages.module("fused") if "fused" in self.stages else None
        if module is None:
            return None
        from pathlib import Path

        from xlac.debug.fusion_picture import write_fusion_graph
        return write_fusion_graph(module, Path(path), self.entry)

    @property
    def function(self) -> CompiledFunction:
        """The compiled code behind ``run``."""
        return self._function

    def with_function(self, function: CompiledFunction) -> Executable:
        """The same executable (signature, stages) running ``function`` instead."""
        import copy
        other = copy.copy(self)
        other._function = function
        other._prepared = other._on_device = None     # it called the other function
        return other

    @property
    def stages(self) -> list[str]:
        return self._stages.names()

    def serialize(self) -> bytes:
        """The compiled code as bytes for ``xlac.deserialize`` (no MLIR needed there).

        It is a shared library with its metadata; loading it on another xlac
        version or a CPU lacking features it was compiled for is refused.
        """
        pending = self._function.serializer(self.entry, self.signature)
        if hasattr(pending, "keep_metadata"):          # CPU artifacts: the report goes along
            report = self.fusion_report()
            if report is not None:
                pending.keep_metadata({"fusion_reports": {self.entry: report}})
        return pending()

    def __repr__(self) -> str:
        return f"<xlac.Executable target={self.target} {self.signature}>"
