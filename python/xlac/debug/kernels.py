"""The kernels of a fused program, numbered once for every view of them.

``exe.fusion_report()``, the graph (``fusion_graph.json`` for Model Explorer,
``fusion_graph.dot``) and the kernel table all list the kernels of the
"fused" stage in module order: each ``xla.fusion`` is ``fusion N`` (N counts
the fusions), an op left alone is a kernel of its own named after the op. So
"fusion 3" is the same kernel wherever it is shown.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xlac.dialects.xla import FUSION, fusion_body, fusion_kind
from xlac.errors import format_location
from xlac.mlir import ir
from xlac.passes.base import nested_ops
from xlac.passes.fusion.op_classes import CONSTANT, OTHER, bytes_of, flops, op_class, type_text

# Ops whose blocks hold kernels: functions and control flow.
KERNEL_HOLDERS = ("func.func", "stablehlo.while", "stablehlo.if", "stablehlo.case")
WHY = {
    "loop": "elementwise ops and broadcasts in one loop",
    "input": "a reduction computing its producers in the same pass",
    "output": "a dot/convolution with its epilogue applied to each result",
    "multi_output": "one pass over the inputs writes several results",
}


@dataclass
class Kernel:
    """One kernel: a fusion or an op of its own."""

    op: ir.Operation
    title: str                     # "fusion 3" or the op's short name ("dot_general")
    kind: str                      # loop, input, output, multi_output; "op" for an op alone
    body: list[ir.Operation]       # the ops it computes (the op itself when alone)
    bytes: int                     # inputs read once, outputs written once
    flops: int
    location: str

    @property
    def is_fusion(self) -> bool:
        return self.kind != "op"

    @property
    def op_names(self) -> str:
        """``reduce, exponential x2``: its computing ops, counted."""
        names = Counter(short_name(o.name) for o in self.body if op_class(o) != CONSTANT)
        return ", ".join(name + (f" x{count}" if count > 1 else "") for name, count in names.items())

    @property
    def inputs(self) -> list[str]:
        return [type_text(v.type) for v in self.op.operands]

    @property
    def outputs(self) -> list[str]:
        return [type_text(v.type) for v in self.op.results]


def kernels(module: ir.Operation) -> list[Kernel]:
    """The module's kernels, in module order (fusion N is the N-th xla.fusion)."""
    found, fused = [], 0
    for op in nested_ops(module):
        if op.parent.name not in KERNEL_HOLDERS:
            continue                        # inside a fusion, or a reduction's body
        if op.name == FUSION:
            body = [o.operation for o in fusion_body(op).operations][:-1]
            found.append(Kernel(op, f"fusion {fused}", fusion_kind(op), body,
                                _moved(op), sum(flops(o) for o in body), _root_location(body)))
            fused += 1
        elif op_class(op) not in (CONSTANT, OTHER):
            found.append(Kernel(op, short_name(op.name), "op", [op], _moved(op), flops(op),
                                format_location(op.location)))
    return found


def _moved(op: ir.Operation) -> int:
    return sum(bytes_of(v.type) for v in list(op.operands) + list(op.results))


def _root_location(body: list[ir.Operation]) -> str:
    """The location of the kernel's last computing op (its root)."""
    computing = [op for op in body if op_class(op) != CONSTANT] or body
    return format_location(computing[-1].location) if computing else ""


def short_name(name: str) -> str:
    return name.removeprefix("stablehlo.")


def scaled(amount: int, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if amount >= scale:
            return f"{amount / scale:.1f} {prefix}{unit}"
    return f"{amount} {unit}"
