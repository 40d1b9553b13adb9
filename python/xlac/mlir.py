"""The one place xlac imports MLIR from.

Everything else imports ``ir``, ``passmanager``, the ExecutionEngine and the
StableHLO helpers from here, so switching the provider of the bindings
(today the ``torch-mlir`` wheel, which carries upstream MLIR together with
StableHLO) is a one-file change.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys

from xlac import blas_pool
from xlac.blas_pool import pool_before_bindings
from xlac.blas_pool import threads as _threads

# numpy's pool: the threads the bindings' import starts (it imports numpy) and,
# where a script imported numpy first, the pool that was there before it.
_before = _threads()
_pool_before = pool_before_bindings(_before)
from torch_mlir import ir, passmanager  # noqa: E402, F401  (re-exported)
from torch_mlir._mlir_libs import _mlir  # noqa: E402
from torch_mlir._mlir_libs import _stablehlo as stablehlo  # noqa: E402
from torch_mlir.execution_engine import ExecutionEngine  # noqa: E402, F401

_after = _threads() if _pool_before is not None else None
blas_pool.note_pool((_after - _before) | _pool_before if _after is not None and "numpy" in sys.modules
                    else frozenset())

__all__ = ["ir", "passmanager", "stablehlo", "ExecutionEngine", "bare_context",
           "dialect", "op_classes", "transform_interpreter", "translate_to_llvm_ir", "fork_is_safe"]


class _NoBindings(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty modules for the dialects that have no Python bindings (stablehlo,
    chlo, xla ...), found under a search prefix of their own.

    Why: the bindings look a dialect's module up each time they wrap an op of
    it, and remember only a lookup that found one; a failed one costs a full
    import search (~1 ms), once per op read, thousands per pass on a large
    program (measured: 25 s of a 110 s compile). Found here once, it is
    remembered, and the ops stay plain OpViews as before.
    """

    prefix = "xlac_dialects_without_bindings"

    def find_spec(self, name, path=None, target=None):
        if name == self.prefix or name.startswith(self.prefix + "."):
            return importlib.machinery.ModuleSpec(name, self, is_package=name == self.prefix)
        return None

    def create_module(self, spec):
        return None                     # the default: an empty module

    def exec_module(self, module) -> None:
        pass


class _OpViewsOnly(_NoBindings):
    """The op classes of the dialects in ``VIEWS_ONLY`` without the rest of
    their package (for ``llvm``, none: its ops are read as plain OpViews, as
    those of dialects without bindings are), found ahead of the bindings' own
    modules.

    Why: the bindings import a dialect's package the first time an op of it is
    read. ``torch_mlir.dialects.linalg`` builds every OpDSL named-op
    definition at import (0.1-0.2 s of each cold compile, more than the linalg
    stage's own passes on a small program); ``torch_mlir.dialects.llvm``
    defines a class for each of its ~300 ops (40-80 ms, in the compiling
    process and in each piece worker). xlac reads ops through the generic
    interface (names, operands, results, attributes); ``dialect(name)``, where
    ops are built, imports the whole package, whose classes then take over.
    """

    prefix = "xlac_dialect_op_views"
    # the dialects whose ops xlac only reads (or builds through ``dialect(name)``):
    # their generated classes cost 1-15 ms of import each in a process's first
    # compile (~45 ms on ViT; transform, vector and affine the most; linalg's ops
    # and enums 8-9 ms of a tiny program's ~150 ms). arith, func and builtin keep
    # their classes: arith's are built in several passes and func's and builtin's
    # are read through their properties. The CUDA target's passes get linalg's
    # classes as before (``op_classes``).
    PLAIN = ("llvm", "transform", "vector", "affine", "math", "memref", "tensor", "scf", "ub", "linalg")
    VIEWS_ONLY = dict.fromkeys(PLAIN, ())

    def find_spec(self, name, path=None, target=None):
        if name == self.prefix or name.removeprefix(self.prefix + ".") in self.VIEWS_ONLY:
            return importlib.machinery.ModuleSpec(name, self, is_package=name == self.prefix)
        return None

    def exec_module(self, module) -> None:
        import importlib
        for generated in self.VIEWS_ONLY.get(module.__name__.removeprefix(self.prefix + "."), ()):
            importlib.import_module(generated)          # registers the dialect's op classes


if not any(isinstance(finder, _NoBindings) for finder in sys.meta_path):
    sys.meta_path += [_NoBindings(), _OpViewsOnly()]
    _mlir.globals.dialect_search_modules = [_OpViewsOnly.prefix, *_mlir.globals.dialect_search_modules,
                                            _NoBindings.prefix]


def dialect(name: str):
    """The generated Python builders of an upstream dialect (``arith``, ``linalg`` ...)."""
    import importlib
    return importlib.import_module(f"torch_mlir.dialects.{name}")


def op_classes(name: str) -> None:
    """Register the generated op classes of ``name`` (``linalg``), without the
    rest of its package (OpDSL's named ops): for code that reads its ops through
    their generated properties."""
    import importlib
    importlib.import_module(f"torch_mlir.dialects._{name}_ops_gen")


def transform_interpreter():
    """The transform interpreter (``TransformOptions``, ``apply_named_sequence``
    on operations), from its extension alone: ``torch_mlir.dialects.transform``'s
    package, which its Python module sits in, defines a class per transform op
    (13-16 ms of a process's first compile) that xlac never uses: its scripts are
    parsed from text."""
    from torch_mlir._mlir_libs import _mlirTransformInterpreter
    return _mlirTransformInterpreter


def translate_to_llvm_ir(module: ir.Operation) -> str:
    """LLVM IR text of a module in the LLVM dialect (MLIR's own translation)."""
    from torch_mlir.dialects.llvm import translate_module_to_llvmir
    return translate_module_to_llvmir(module)


@functools.cache
def _register_stablehlo_passes() -> None:
    stablehlo.register_stablehlo_passes()


def native_library_path() -> str:
    """The shared library behind the bindings (MLIR and LLVM's C APIs), for
    tools that call LLVM's C API directly (bench/llvm_kinds.py sets LLVM's
    command-line options through it)."""
    import os

    from torch_mlir import _mlir_libs
    return os.path.join(os.path.dirname(_mlir_libs.__file__), "libTorchMLIRAggregateCAPI.so")


def bare_context() -> ir.Context:
    """A context with the StableHLO and CHLO dialects loaded (``xlac.context``
    adds xlac's own).

    CHLO is not loaded by ``register_dialect``: it loads only once a pass that
    depends on it runs. JAX emits ``chlo.*`` in ordinary programs, so we run
    such a pass on an empty module before anything is parsed.
    """
    _register_stablehlo_passes()
    ctx = ir.Context()
    stablehlo.register_dialect(ctx)
    stablehlo.register_interpreter_dialect(ctx)
    with ctx, ir.Location.unknown():
        empty = ir.Module.parse("module {}")
        pm = passmanager.PassManager.parse(
            "builtin.module(func.func(stablehlo-complex-math-expander))")
        pm.run(empty.operation)
    ctx.load_all_available_dialects()
    return ctx


def text_without_blobs(module, leave_out: str | None = None) -> bytes:
    """``module``'s text with large constants elided and no resource blobs: its
    header (attributes) and each operation printed alone. Printing the module
    whole walks every blob even where it elides them (3-4 s for 64 MB of weights
    on a loaded machine); printed alone, an operation has no resource section.
    ``leave_out``: a module attribute the header goes without (the weights
    ``xla-constants-to-arguments`` keeps: printed, their resources were 0.8 s of
    hex per 47 MB)."""
    attributes = module.operation.attributes
    kept = attributes[leave_out] if leave_out and leave_out in attributes else None
    if kept is not None:
        del attributes[leave_out]
    try:
        header = module.operation.get_asm(binary=True, large_elements_limit=16, skip_regions=True)
    finally:
        if kept is not None:
            attributes[leave_out] = kept
    return b"\n".join([header, *(op.operation.get_asm(binary=True, large_elements_limit=16)
                                  for op in module.body.operations)])


def fork_is_safe() -> bool:
    """Whether this process may fork a helper now: the calling thread is its
    only one but numpy's idle pool, which OpenBLAS shuts down around a fork
    itself (its ``pthread_atfork`` handlers). A fork copies the calling thread
    alone, so a lock any other thread (a user's, JAX's) held would stay held in
    the child for good: then spawn. A pool restarted after a fork has new
    thread ids, unknown: later forks spawn (``blas_pool.fork``; the process
    is single-threaded until the pool restarts, and forks meanwhile).
    ``xlac.blas_pool`` tells the pool's threads, also where numpy was imported
    first. Why: the bindings' import starts
    that pool, so a user's script was never single-threaded when it parsed its
    first program, and spawned its isolated parser, a new interpreter importing
    the bindings on the path of every cold compile (0.2-0.4 s of wall;
    docs/compile-time.md, twentieth round)."""
    return blas_pool.fork_is_safe()
