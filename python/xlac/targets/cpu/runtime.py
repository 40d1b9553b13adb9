"""Calling code JIT-compiled for the host CPU by MLIR's ExecutionEngine.

The entry function uses the bare-pointer ABI: one pointer per argument, then
one per result (the results were turned into out-parameters), so a call is
a packed array of pointers to pointers and nothing else.
"""

from __future__ import annotations

import ctypes

from xlac.cpu_model import check_runnable, cpu_model
from xlac.errors import CompileError, collect_diagnostics, compile_error_from, error
from xlac.mlir import ExecutionEngine, ir
from xlac.signature import CONSTANT_TABLE_SYMBOL
from xlac.targets.cpu import micro_kernels
from xlac.targets.cpu.constant_data import table_of
from xlac.targets.cpu.idle_workers import follow_load
from xlac.targets.cpu.kernel_clock import KernelClock
from xlac.targets.cpu.libraries import keep_freed_memory, lapack_addresses, openmp_library

_KERNELS_ATTR = "xla.profile_kernels"      # set by xla-profile-kernels

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class CpuFunction:
    """One JIT-compiled entry point; call it with raw data pointers."""

    stage_texts: dict = {}             # no stage text travels with the code

    def __init__(self, module: ir.Module, entry: str, cpu_features: tuple[str, ...],
                 malloc_tuning: bool = True, opt_level: int = 3, grid=None,
                 mpi_library: str | None = None, constants: tuple = (), cache_dir=None):
        ctx = module.context
        self.constants = constants         # xlac.targets.cpu.constants: the code reads their arrays
        openmp_library()
        self.grid = grid                   # an SPMD program's device grid (None: one device)
        self.mpi_library = mpi_library     # loaded already (RTLD_GLOBAL) when the code calls MPI
        keep_freed_memory(malloc_tuning)
        self._cpu_features = cpu_features
        self._cache_dir = cache_dir         # the micro-kernels': the artifact's link takes them
        self._runnable = not cpu_model("host").lacks(cpu_features)   # else: refused, not SIGILL
        with ctx, collect_diagnostics(ctx) as diags:
            try:
                # PIC: the same object code can be linked into a shared
                # library by write_object (xla-compile, serialize, the cache)
                self._engine = ExecutionEngine(module, opt_level=opt_level, enable_pic=True)
            except (RuntimeError, ir.MLIRError) as exc:
                raise compile_error_from(exc, diags, "the LLVM JIT rejected the module") from None
        external = _external_functions(module)
        for name, where in {**lapack_addresses(external),
                            **micro_kernels.addresses_for(external, cpu_features, cache_dir)}.items():
            self._engine.raw_register_runtime(name, ctypes.c_void_p(where))   # before any lookup
        self._constant_table = table_of(constants)      # the code reads their addresses here
        if self._constant_table is not None:
            self._engine.raw_register_runtime(CONSTANT_TABLE_SYMBOL,
                                              ctypes.c_void_p(ctypes.addressof(self._constant_table)))
        self.clock = _clock(module)
        if self.clock is not None:
            self.clock.register(self._engine)
        address = self._engine.raw_lookup(entry)
        if not address:
            raise CompileError(error(f"the JIT has no function '{entry}'"))
        self._function = _PACKED(address)

    def __call__(self, pointers: list[int]) -> None:
        """Call with the data pointers of every input, then every output."""
        if not self._runnable:
            check_runnable(self._cpu_features)
        follow_load()
        slots = (ctypes.c_void_p * len(pointers))(*pointers)
        packed = (ctypes.c_void_p * len(pointers))(
            *[ctypes.addressof(slots) + i * ctypes.sizeof(ctypes.c_void_p)
              for i in range(len(pointers))])
        self._function(packed)

    def array_caller(self, count: int):
        """``call(inputs, outputs)`` with the ``count`` arrays themselves (plain
        ndarrays, contiguous), or None where the code must not run here."""
        from xlac.calls import DATA_FIELD, SparePointerArrays
        if DATA_FIELD is None or not self._runnable:
            return None
        function, spare = self._function, SparePointerArrays(ctypes.c_void_p * count)

        def call(inputs, outputs) -> None:
            # the packed ABI reads argument i from *packed[i]: the field of the
            # array object that holds its data pointer will do, no copy of it
            follow_load()
            packed = spare.take()
            packed[:] = [id(a) + DATA_FIELD for a in (*inputs, *outputs)]
            function(packed)
            spare.give_back(packed)
        return call

    def start_collectives(self) -> None:
        """Make the program's communicators (``@__xlac_init``): collective, once,
        on every rank after all of them compiled (``xlac.spmd.start``)."""
        address = self._engine.raw_lookup("__xlac_init")
        if address:
            _PACKED(address)((ctypes.c_void_p * 1)())

    def write_object(self, path: str) -> None:
        """Write the compiled machine code as a relocatable object file."""
        self._engine.dump_to_object_file(str(path))

    def serializer(self, entry: str, signature):
        from xlac.targets.cpu.serialize import PendingArtifact
        return PendingArtifact(self.write_object, entry, signature, self._cpu_features,
                               self.grid, self.mpi_library, self.constants, self._cache_dir)


def _clock(module: ir.Module) -> KernelClock | None:
    """The kernel clock of a program compiled with xla-profile-kernels, else None."""
    attrs = module.operation.attributes
    if _KERNELS_ATTR not in attrs:
        return None
    return KernelClock([ir.StringAttr(name).value for name in ir.ArrayAttr(attrs[_KERNELS_ATTR])])


def _external_functions(module: ir.Module) -> list[str]:
    """The functions the module calls but does not define (llvm.func declarations)."""
    names = []
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and not op.regions[0].blocks:
            names.append(ir.StringAttr(op.attributes["sym_name"]).value)
    return names
