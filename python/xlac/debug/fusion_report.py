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
from collections import Counter

from xlac.dialects.xla import FUSION, fusion_body, fusion_kind
from xlac.errors import collect_diagnostics, format_location
from xlac.mlir import ir
from xlac.passes.base import nested_ops
from xlac.passes.fusion.op_classes import CONSTANT, OTHER, bytes_of, flops, op_class, type_text
from xlac.pipeline.pass_manager import build_pass_manager

_KERNEL_HOLDERS = ("func.func", "stablehlo.while", "stablehlo.if", "stablehlo.case")
_WHY = {
    "loop": "elementwise ops and broadcasts in one loop",
    "input": "a reduction computing its producers in the same pass",
    "output": "a dot/convolution with its epilogue applied to each result",
    "multi_output": "one pass over the inputs writes several results",
}


def fusion_report(stages) -> str | None:
    """The report for the program behind ``stages`` (``xlac.executable.Stages``);
    for code loaded from an artifact, the report kept in it (None if none)."""
    module = stages.module("stablehlo")
    if module is None:
        saved = getattr(stages, "saved_report", None)
        return saved() if saved is not None else None
    ctx = module.context
    with ctx, collect_diagnostics(ctx) as diagnostics:
        build_pass_manager(ctx, ["xla-fuse{remarks=true}"]).run(module.operation)
    remarks = [d for d in diagnostics.records if d.severity == "remark"]
    return render(module.operation, remarks) + _unscheduled(stages.remarks)


def _unscheduled(remarks: list) -> str:
    """What the CPU schedules left as scalar loops (xla-apply-schedules' remarks)."""
    lines = [f"  {r.location}: {r.message.removeprefix('xla-apply-schedules: ')}"
             for r in remarks if r.message.startswith("xla-apply-schedules:")]
    return "\n".join(["not scheduled:", *lines]) + "\n" if lines else ""


def render(module: ir.Operation, remarks: list) -> str:
    """The report for a module after xla-fuse, and the remarks it emitted."""
    lines, fused = [], 0
    for op in nested_ops(module):          # module order: fusion N is xla.fusion_group N
        if op.parent.name not in _KERNEL_HOLDERS:
            continue                        # inside a fusion, or a reduction's body
        if op.name == FUSION:
            lines.append(_fusion_line(op, fused))
            fused += 1
        elif op_class(op) not in (CONSTANT, OTHER):
            lines.append(_kernel_line(op))
    alone = len(lines) - fused
    header = f"{fused} fusion(s), {alone} op(s) left as their own kernel"
    ordered = sorted(remarks, key=lambda r: [int(n) for n in re.findall(r"\d+", r.location)[-2:]])
    rejected = ["not fused:"] + [f"  {r.location}: {r.message}" for r in ordered] if remarks else []
    return "\n".join([header] + lines + rejected) + "\n"


def _fusion_line(fusion: ir.Operation, number: int) -> str:
    body = [op.operation for op in fusion_body(fusion).operations][:-1]
    names = Counter(short_name(op.name) for op in body if op_class(op) != CONSTANT)
    ops = ", ".join(name + (f" x{count}" if count > 1 else "") for name, count in names.items())
    kind = fusion_kind(fusion)
    return (f"fusion {number:<3} {kind:<12} {ops}\n"
            f"           {_traffic(fusion, sum(flops(op) for op in body))}  "
            f"{_where(body)}  ({_WHY[kind]})")


def _kernel_line(op: ir.Operation) -> str:
    return (f"op         {'-':<12} {short_name(op.name)}\n"
            f"           {_traffic(op, flops(op))}  {format_location(op.location)}")


def _traffic(op: ir.Operation, work: int) -> str:
    inputs = ", ".join(type_text(v.type) for v in op.operands)
    outputs = ", ".join(type_text(v.type) for v in op.results)
    moved = sum(bytes_of(v.type) for v in list(op.operands) + list(op.results))
    return f"{inputs} -> {outputs}  {scaled(moved, 'B')}  {scaled(work, 'FLOP')}"


def _where(body: list[ir.Operation]) -> str:
    """The location of the kernel's last computing op (its root)."""
    computing = [op for op in body if op_class(op) != CONSTANT] or body
    return format_location(computing[-1].location)


def short_name(name: str) -> str:
    return name.removeprefix("stablehlo.")


def scaled(amount: int, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if amount >= scale:
            return f"{amount / scale:.1f} {prefix}{unit}"
    return f"{amount} {unit}"
