"""xla-gpu-matmul-kernels: linalg.matmul / batch_matmul on buffers -> a shared-memory tiled kernel.

See gpu_matmul_text.py for the kernel's shape (64x64 tiles per 16x16-thread
block, K staged through shared memory, 4x4 outputs per thread).
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import ModulePass
from xlac.passes.gpu.gpu_matmul_text import matmul_kernel
from xlac.passes.gpu.launch_ops import constant_text, fill_before, top_level_ops
from xlac.passes.gpu.matmul_epilogue import find_epilogue, inline_body
from xlac.passes.helper_calls import fresh_symbol, region_declaration, replace_with_call

_MATMULS = {"linalg.matmul": 0, "linalg.batch_matmul": 1}


@dataclass(frozen=True)
class GpuMatmulKernels(ModulePass):
    """linalg.matmul / batch_matmul (f32, f64, plain layouts) -> a shared-memory tiled kernel."""

    name = "xla-gpu-matmul-kernels"

    def run(self, module: ir.Operation) -> None:
        for op in top_level_ops(module):
            if op.name in _MATMULS and _plain_matmul(op):
                types = [ir.MemRefType(v.type) for v in op.operands]
                batch = types[0].shape[0] if _MATMULS[op.name] else 0
                (m, k), n = types[0].shape[-2:], types[1].shape[-1]
                name = fresh_symbol(module, "xla_gpu_matmul")
                fill = fill_before(op, op.operands[2])
                folded = fill is not None
                init = constant_text(fill.operands[0]) if folded else ""
                epilogue = find_epilogue(op, 3)
                memrefs = [str(t) for t in types] + ([str(v.type) for v in epilogue.extra]
                                                     if epilogue else [])
                text = matmul_kernel(name, memrefs, str(types[0].element_type),
                                     batch, m, n, k, init, epilogue)
                bodies = {}
                if epilogue is not None:
                    text += region_declaration(epilogue.op.regions[0], f"{name}_body")
                    bodies[f"{name}_body"] = epilogue.op.regions[0]
                replace_with_call(module, op, text, name, bodies,
                                  arguments=epilogue.extra if epilogue else ())
                if epilogue is not None:
                    epilogue.op.erase()
                    inline_body(module, f"{name}_body")
                if folded:
                    fill.erase()


_DEFAULT_MAPS = {
    "linalg.matmul": ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    "linalg.batch_matmul": ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)",
                            "(d0, d1, d2, d3) -> (d0, d1, d2)"],
}


def _plain_matmul(op: ir.Operation) -> bool:
    """No transposed operand (custom indexing_maps), no casting: C += A . B exactly."""
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if maps != _DEFAULT_MAPS[op.name] or "cast" in op.attributes:
        return False
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.MemRefType) and ir.MemRefType(t).has_static_shape for t in types):
        return False
    elements = {str(ir.MemRefType(t).element_type) for t in types}
    return elements in ({"f32"}, {"f64"}) and all("strided" not in str(t) for t in types)
