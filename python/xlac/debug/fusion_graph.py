"""The graph of a compiled program, with its kernels, for viewers people use.

Every op of the "fused" stage is a node; the ops of one kernel are grouped
under its name (``fusion 3 (loop)``, numbered as in ``exe.fusion_report()``),
a loop body under ``while 0``. Edges are the values, labelled with their
types. Written, per compile under ``XLAC_DUMP_TO``, as:

- ``fusion_graph.json``: a graph collection for Google's Model Explorer
  (``pip install ai-edge-model-explorer``; ``model-explorer fusion_graph.json
  --node_data_paths=fusion_graph.flops.json,fusion_graph.bytes.json``): kernels
  are collapsible layers, with their kind, bytes, FLOPs and location in the
  side panel; the node data colour ops by FLOPs and kernels by bytes moved.
- ``fusion_graph.dot``: the same graph for Graphviz (``dot -Tsvg``), kernels
  as clusters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlac.debug.kernels import KERNEL_HOLDERS, WHY, Kernel, kernels, scaled, short_name
from xlac.dialects.xla import FUSION, fusion_body
from xlac.errors import format_location
from xlac.mlir import ir
from xlac.passes.base import functions
from xlac.passes.fusion.op_classes import CONSTANT, flops, op_class, type_text

KIND_COLORS = {"loop": "#cfe2ff", "input": "#d1f0d1", "output": "#ffe0c2",
               "multi_output": "#ead7f7", "op": "#eeeeee"}
_SKIPPED = ("func.return", "stablehlo.return", "tensor.empty", "xla.yield")


@dataclass
class Node:
    id: str
    label: str
    namespace: str = ""
    attrs: dict[str, str] = field(default_factory=dict)
    inputs: list[tuple[str, int, str]] = field(default_factory=list)   # source, output, type
    outputs: list[str] = field(default_factory=list)                    # result types
    kernel: Kernel | None = None


@dataclass
class ProgramGraph:
    """The nodes of a program (in order) and its kernels."""

    title: str
    nodes: list[Node]
    kernels: list[Kernel]
    groups: dict[str, str] = field(default_factory=dict)     # kernel title -> its namespace

    def namespace_of(self, kernel: Kernel) -> str:
        return self.groups.get(kernel.title, "")

    def nodes_of(self, kernel: Kernel) -> list[Node]:
        if kernel.is_fusion:
            inner = self.namespace_of(kernel)
            return [n for n in self.nodes if n.namespace == inner]
        return [n for n in self.nodes if n.kernel is kernel]


def program_graph(module: ir.Module | ir.Operation, title: str = "") -> ProgramGraph:
    """The graph of the module's first function, after xla-fuse."""
    op = module.operation if isinstance(module, ir.Module) else module
    builder = _Builder({k.op: k for k in kernels(op)})
    builder.function(functions(op)[0])
    return ProgramGraph(title or "program", builder.nodes, list(builder.kernel_of.values()),
                        builder.groups)


class _Builder:
    def __init__(self, kernel_of: dict):
        self.kernel_of = kernel_of
        self.nodes: list[Node] = []
        self.producer: dict = {}          # ir.Value -> (node id, output index)
        self.groups: dict[str, str] = {}   # kernel title -> namespace
        self.regions = 0

    def add(self, label: str, namespace: str = "", **kwargs) -> Node:
        node = Node(f"n{len(self.nodes)}", label, namespace, **kwargs)
        self.nodes.append(node)
        return node

    def function(self, func: ir.Operation) -> None:
        block = func.regions[0].blocks[0]
        for index, argument in enumerate(block.arguments):
            node = self.add(f"argument {index}", outputs=[type_text(argument.type)],
                            attrs={"type": type_text(argument.type)})
            self.producer[argument] = (node.id, 0)
        self.block(block, "")
        returned = list(block.operations)[-1]
        for index, value in enumerate(returned.operands):
            self.add(f"result {index}", inputs=[self._source(value)],
                     attrs={"type": type_text(value.type)})

    def block(self, block: ir.Block, namespace: str) -> None:
        for op in block.operations:
            op = op.operation
            if op.name in _SKIPPED or (op_class(op) == CONSTANT and op.name != FUSION):
                continue
            if op.name == FUSION:
                self.fusion(op, namespace)
            elif op.name in KERNEL_HOLDERS:
                self.control_flow(op, namespace)
            else:
                self.op(op, namespace, self.kernel_of.get(op))

    def fusion(self, op: ir.Operation, namespace: str) -> None:
        kernel = self.kernel_of.get(op)
        inner = _join(namespace, f"{kernel.title} ({kernel.kind})" if kernel else "fusion")
        if kernel is not None:
            self.groups[kernel.title] = inner
        body = fusion_body(op)
        for argument, operand in zip(body.arguments, op.operands):
            if operand in self.producer:
                self.producer[argument] = self.producer[operand]
        self.block(body, inner)
        yielded = list(body.operations)[-1]
        for result, value in zip(op.results, yielded.operands):
            if value in self.producer:
                self.producer[result] = self.producer[value]

    def control_flow(self, op: ir.Operation, namespace: str) -> None:
        node = self.op(op, namespace, None)
        inner = _join(namespace, f"{short_name(op.name)} {self.regions}")
        self.regions += 1
        for region_index, region in enumerate(op.regions):
            for block in region.blocks:
                for index, argument in enumerate(block.arguments):
                    self.producer[argument] = (node.id, index)
                self.block(block, _join(inner, f"region {region_index}")
                           if len(op.regions) > 1 else inner)

    def op(self, op: ir.Operation, namespace: str, kernel: Kernel | None) -> Node:
        attrs = {"op": op.name, "location": format_location(op.location)}
        if kernel is not None:
            attrs["kernel"] = f"{kernel.title}: its own kernel"
        elif namespace:
            attrs["kernel"] = namespace.rsplit("/", 1)[-1]
        if op_class(op) != CONSTANT:
            attrs["FLOPs"] = str(flops(op))
        node = self.add(short_name(op.name), namespace, attrs=attrs,
                        inputs=[self._source(v) for v in op.operands if v in self.producer],
                        outputs=[type_text(r.type) for r in op.results], kernel=kernel)
        for index, result in enumerate(op.results):
            self.producer[result] = (node.id, index)
        return node

    def _source(self, value: ir.Value) -> tuple[str, int, str]:
        node, index = self.producer.get(value, ("", 0))
        return node, index, type_text(value.type)


def _join(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def model_explorer_collection(graph: ProgramGraph) -> dict:
    """A Model Explorer graph collection (its JSON format: ``{"label", "graphs"}``)."""
    nodes = []
    for node in graph.nodes:
        nodes.append({
            "id": node.id, "label": node.label, "namespace": node.namespace,
            "attrs": [{"key": k, "value": v} for k, v in node.attrs.items()],
            "incomingEdges": [{"sourceNodeId": source, "sourceNodeOutputId": str(output),
                               "targetNodeInputId": str(index)}
                              for index, (source, output, _) in enumerate(node.inputs) if source],
            "outputsMetadata": [{"id": str(index), "attrs": [
                {"key": "tensor_shape", "value": f"tensor<{t}>"}]}
                for index, t in enumerate(node.outputs)],
        })
    groups = {graph.namespace_of(k): _kernel_attrs(k) for k in graph.kernels if k.is_fusion}
    configs = [{"namespaceRegex": f".*\\({kind}\\)$", "backgroundColor": color}
               for kind, color in KIND_COLORS.items() if kind != "op"]
    return {"label": graph.title, "graphs": [{
        "id": graph.title, "nodes": nodes, "groupNodeAttributes": groups,
        "groupNodeConfigs": configs}]}


def _kernel_attrs(kernel: Kernel) -> dict[str, str]:
    return {"kernel": kernel.title, "kind": kernel.kind, "why": WHY.get(kernel.kind, ""),
            "ops": kernel.op_names, "inputs": ", ".join(kernel.inputs),
            "outputs": ", ".join(kernel.outputs), "bytes moved": scaled(kernel.bytes, "B"),
            "FLOPs": scaled(kernel.flops, "FLOP"), "location": kernel.location}


def node_data(graph: ProgramGraph, what: str) -> dict:
    """Model Explorer node data: ``flops`` per op (a kernel's group sums them), or
    ``bytes`` each kernel moves, on its last op (so the group shows the kernel's)."""
    results = {}
    for node in graph.nodes:
        if what == "flops" and "FLOPs" in node.attrs:
            results[node.id] = {"value": int(node.attrs["FLOPs"])}
    if what == "bytes":
        for kernel in graph.kernels:
            members = graph.nodes_of(kernel)
            if members:
                results[members[-1].id] = {"value": kernel.bytes}
    return {graph.title: {"results": results, "gradient": [
        {"stop": 0, "bgColor": "#ffffff"}, {"stop": 1, "bgColor": "#e0413d"}]}}


def dot_text(graph: ProgramGraph) -> str:
    """Graphviz: kernels as clusters, values as labelled edges."""
    lines = [f"digraph {_quoted(graph.title)} {{",
             '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
             'fontname="monospace", fontsize=10];', '  edge [fontname="monospace", fontsize=8];']
    clusters: dict[str, list[Node]] = {}
    for node in graph.nodes:
        clusters.setdefault(node.namespace, []).append(node)
    for namespace, members in clusters.items():
        indent = "  "
        if namespace:
            kernel = next((k for k in graph.kernels if graph.namespace_of(k) == namespace), None)
            label = namespace + (f"\\n{scaled(kernel.bytes, 'B')}, {scaled(kernel.flops, 'FLOP')}"
                                 if kernel else "")
            color = KIND_COLORS.get(kernel.kind if kernel else "op", "#eeeeee")
            lines.append(f"  subgraph {_quoted('cluster_' + namespace)} {{ label={_quoted(label)}; "
                         f'style="rounded,filled"; fillcolor="{color}";')
            indent = "    "
        for node in members:
            label = node.label + ("\\n" + ", ".join(node.outputs) if node.outputs else "")
            lines.append(f"{indent}{node.id} [label={_quoted(label)}];")
        if namespace:
            lines.append("  }")
    for node in graph.nodes:
        for source, _, value_type in node.inputs:
            if source:
                lines.append(f"  {source} -> {node.id} [label={_quoted(value_type)}];")
    return "\n".join(lines + ["}"]) + "\n"


def _quoted(text: str) -> str:
    """A DOT string: quotes escaped, ``\\n`` kept as DOT's line break."""
    return '"' + text.replace('"', '\\"') + '"'
