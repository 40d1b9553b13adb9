"""xla-collectives-to-mpi: collective buffer calls -> calls into xlac's MPI shim."""

from __future__ import annotations

import numpy as np

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, functions, symbol_name
from xlac.passes.cpu.builders.mpi_text import SHIM_DECLARATIONS, MpiModule
from xlac.spmd.grid import declared_grid


class CollectivesToMpi(ModulePass):
    """Give each collective declaration of xla-lower-collectives a body that
    calls the MPI shim (`xlac_mpi_all_reduce(comm, send, recv, count, dtype,
    op)`, ...), and add `@__xlac_init`, which makes one communicator per
    replica-group set.

    Why: compiled code calls MPI directly, with no Python per collective, so
    it runs the same in the JIT and in xla-compile libraries. It calls the
    small C shim (python/xlac/spmd/xlac_mpi.c) rather than MPI itself
    because MPI handles differ between implementations (MPICH: ints, Open
    MPI: pointers); the shim is built against the MPI at hand and the code
    stays the same. Communicators are made once, when the runtime calls
    `@__xlac_init` on every rank after all ranks compiled (MPI_Comm_split);
    each collective reads its slot from a global. Example:

        func.func private @__xlac_all_reduce_0_call0(memref<4xf32>, memref<4xf32>)
            attributes {xla.collective = "all_reduce", xla.groups = dense<[[0, 1]]>, ...}
      gets the body
        %slot = memref.load @__xlac_comm_0; pointers of both buffers;
        call @xlac_mpi_all_reduce(%slot, %send, %recv, 4, f32, add)
    """

    name = "xla-collectives-to-mpi"

    def run(self, module: ir.Operation) -> None:
        declarations = [f for f in functions(module) if "xla.collective" in f.attributes]
        if not declarations:
            return
        mpi = MpiModule(declared_grid(module).partitions)
        texts = [mpi.body(symbol_name(f), _description(f)) for f in declarations]
        body = module.regions[0].blocks[0]
        for func in declarations:
            func.erase()
        init = mpi.init_text()                  # adds the group tables: before globals_text
        text = "module {\n" + SHIM_DECLARATIONS + mpi.globals_text() + init + "\n".join(texts) + "\n}"
        try:
            parsed = ir.Module.parse(text, context=module.context)
        except ir.MLIRError as exc:
            raise PassFailure(module.location, f"internal error: the MPI calls do not parse "
                              f"({exc}); please report it with the input program") from None
        for op in [o.operation for o in parsed.body.operations]:
            op.detach_from_parent()
            body.append(op)


def _description(func: ir.Operation) -> dict:
    """The declaration's attributes and buffer types as plain Python values."""
    attrs = func.attributes
    ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
    memrefs = [t for t in ftype.inputs if isinstance(t, ir.MemRefType) or str(t).startswith("memref")]
    description = {"kind": ir.StringAttr(attrs["xla.collective"]).value,
                   "element": ir.StringAttr(attrs["xla.element_type"]).value,
                   "phase": ir.StringAttr(attrs["xla.collective_phase"]).value
                   if "xla.collective_phase" in attrs else "",
                   "buffers": [list(ir.MemRefType(t).shape) for t in memrefs],
                   "types": [str(t) for t in ftype.inputs],
                   "reduction": ir.StringAttr(attrs["xla.reduction"]).value
                   if "xla.reduction" in attrs else "",
                   "location": func.location}
    for name in ("groups", "pairs"):
        key = f"xla.{name}"
        description[name] = np.array(ir.DenseIntElementsAttr(attrs[key]), dtype=np.int64) \
            .reshape(ir.RankedTensorType(attrs[key].type).shape).tolist() if key in attrs else []
    return description
