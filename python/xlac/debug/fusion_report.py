"""Which ops xlac fused into which kernel, and why: ``exe.fusion_report()``.

    fusion 0  multi_output  reduce, exponential, subtract, broadcast_in_dim
              4096xf32, 4096x1024xf32 -> 4096x1024xf32, 4096xf32  33.6 MB  8.4 MFLOP  softmax.mlir:12:10
    ...
    not fused:
      softmax.mlir:11:10: producer has 2 consumers and is expensive ...

One line per kernel (fusion or op left alone): its kind, its ops, its
input -> output shapes, the bytes it must move (inputs read once, outputs
written once) and its FLOPs. Then every candidate xla-fuse rejected, with
the reason (the remarks of ``xla-opt --xla-fusion-remarks``).
"""

from __future__ import annotations

import re

from xlac.debug.kernels import WHY, Kernel, kernels, scaled, short_name
from xlac.errors import collect_diagnostics, format_location
from xlac.mlir import ir
from xlac.passes.remarks import collected_remarks
from xlac.pipeline.pass_manager import build_pass_manager

__all__ = ["fusion_report", "render", "scaled", "short_name"]


def fusion_report(stages) -> str | None:
    """The report for the program behind ``stages`` (``xlac.executable.Stages``);
    for code loaded from an artifact, the report kept in it (None if none)."""
    module = stages.module("stablehlo")
    if module is None:
        saved = getattr(stages, "saved_report", None)
        return saved() if saved is not None else None
    ctx = module.context
    with ctx, collect_diagnostics(ctx) as diagnostics, collected_remarks() as remarks:
        build_pass_manager(ctx, ["xla-fuse{remarks=true}"]).run(module.operation)
    remarks += [d for d in diagnostics.records if d.severity == "remark"]
    return render(module.operation, remarks) + _unscheduled(stages.remarks, _sources(module.operation))


def _unscheduled(remarks: list, sources: dict[str, str]) -> str:
    """What the CPU schedules left as scalar loops (xla-apply-schedules' remarks),
    each with the StableHLO op(s) at its location: the linalg op says how, the
    StableHLO op which line of the program."""
    lines = [f"  {r.location}: {_source(sources, r.location)}"
             f"{r.message.removeprefix('xla-apply-schedules: ')}"
             for r in remarks if r.message.startswith("xla-apply-schedules:")]
    return "\n".join(["not scheduled:", *lines]) + "\n" if lines else ""


def _sources(module: ir.Operation) -> dict[str, str]:
    """Location -> the names of the StableHLO ops there, in program order."""
    found: dict[str, list[str]] = {}

    def visit(op: ir.Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    if inner.operation.name.startswith("stablehlo."):
                        names = found.setdefault(format_location(inner.operation.location), [])
                        if inner.operation.name not in names:
                            names.append(inner.operation.name)
                    visit(inner.operation)
    visit(module)
    return {where: ", ".join(names) for where, names in found.items()}


def _source(sources: dict[str, str], location: str) -> str:
    names = sources.get(location)
    return f"[{names}] " if names else ""


def render(module: ir.Operation, remarks: list) -> str:
    """The report for a module after xla-fuse, and the remarks it emitted."""
    found = kernels(module)
    lines = [_fusion_line(k) if k.is_fusion else _kernel_line(k) for k in found]
    fused = sum(k.is_fusion for k in found)
    header = f"{fused} fusion(s), {len(found) - fused} op(s) left as their own kernel"
    ordered = sorted(remarks, key=lambda r: [int(n) for n in re.findall(r"\d+", r.location)[-2:]])
    rejected = ["not fused:"] + [f"  {r.location}: {r.message}" for r in ordered] if remarks else []
    return "\n".join([header] + lines + rejected) + "\n"


def _fusion_line(kernel: Kernel) -> str:
    number = kernel.title.split()[-1]
    return (f"fusion {number:<3} {kernel.kind:<12} {kernel.op_names}\n"
            f"           {_traffic(kernel)}  {kernel.location}  ({WHY[kernel.kind]})")


def _kernel_line(kernel: Kernel) -> str:
    return (f"op         {'-':<12} {kernel.title}\n"
            f"           {_traffic(kernel)}  {kernel.location}")


def _traffic(kernel: Kernel) -> str:
    return (f"{', '.join(kernel.inputs)} -> {', '.join(kernel.outputs)}  "
            f"{scaled(kernel.bytes, 'B')}  {scaled(kernel.flops, 'FLOP')}")
