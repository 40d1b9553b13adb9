"""xla-target-cpu: machine code for a named CPU level, not for this host."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure
from xlac.record import record

# /proc/cpuinfo spelling -> LLVM's, where they differ
_LLVM_NAMES = {"sse4_1": "sse4.1", "sse4_2": "sse4.2", "bmi1": "bmi", "abm": "lzcnt"}
# LLVM's tuning for the generic levels has no fast gathers, so it scalarized
# every AVX2 `masked.gather` (a lane's index extracted, loaded, inserted): a
# 512x256 i32 column gather at x86-64-v3 took 1.8-2.4x XLA's time, 1.0-1.4x
# with `vpgatherdd` (docs/PERFORMANCE.md). AVX-512 levels gather anyway.
_AVX2_TUNING = ("+fast-gather",)


@record
class TargetCpu(ModulePass):
    """Give every `llvm.func` the CPU level's `target_cpu` and its exact
    `target_features`, so LLVM makes code for that level (`cpu=x86-64-v3`)
    whatever CPU compiles it. `cpu=host` (or empty) leaves them unset: the
    JIT's own CPU.

    Why: the JIT's target machine is this host's, and without these
    attributes an artifact compiled here "for x86-64-v3" on an AVX-512 host
    used AVX-512 instructions, then stopped with SIGILL on the AVX2 machine
    it was made for. The features replace the target machine's (LLVM reads a
    function's `target-features` instead of them), so none of the host's
    extra ones slip in; with AVX2, LLVM's `fast-gather` tuning too (vector
    gathers, not one load per lane). Example (cpu=x86-64-v3):
    `llvm.func @main(...) attributes {target_cpu = "x86-64-v3",
    target_features = #llvm.target_features<["+avx", "+avx2", ...]>}`.
    """

    name = "xla-target-cpu"
    cpu: str = "host"

    def run(self, module: ir.Operation) -> None:
        if self.cpu in ("", "host"):
            return
        from xlac.cpu_model import cpu_model
        try:
            model = cpu_model(self.cpu)
        except ValueError as exc:
            raise PassFailure(module.location, str(exc)) from None
        features = [f"+{_LLVM_NAMES.get(f, f)}" for f in model.features]
        if "avx2" in model.features:
            features += _AVX2_TUNING
        with module.context:
            cpu = ir.StringAttr.get(model.name)
            wanted = ir.Attribute.parse(
                "#llvm.target_features<[" + ", ".join(f'"{f}"' for f in features) + "]>")
        for op in module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name == "llvm.func" and op.regions[0].blocks:
                op.attributes["target_cpu"] = cpu
                op.attributes["target_features"] = wanted
