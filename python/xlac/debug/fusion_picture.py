"""A picture of the kernels of a program: which ops went into which kernel,
with their shapes, the bytes each must move and its estimated FLOPs.

Drawn from the "fused" stage (each ``xla.fusion`` is one kernel, an op left
alone is a kernel of its own) as one self-contained HTML page with an SVG
graph (hover a box for its ops and source location) and a table. It is
written to ``fusion_graph.html`` in each ``XLAC_DUMP_TO`` directory, or:

    python -m xlac.debug.fusion_picture model.mlir -o graph.html
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from xlac.debug.fusion_report import scaled, short_name
from xlac.errors import format_location
from xlac.mlir import ir
from xlac.passes.base import functions
from xlac.passes.fusion.op_classes import CONSTANT, bytes_of, flops, op_class, type_text
from xlac.pipeline import pipelines

_FUSION = "xla.fusion"
_SKIPPED = {"func.return", "arith.constant", "tensor.empty"}
_COLORS = {"loop": "#cfe2ff", "input": "#d1f0d1", "output": "#ffe0c2",
           "multi_output": "#ead7f7", "op": "#eeeeee", "parameter": "#ffffff",
           "result": "#ffffff"}
_WIDTH, _LINE, _GAP_X, _GAP_Y, _MARGIN = 270, 15, 40, 50, 20


@dataclass
class Kernel:
    """One box of the graph."""

    title: str
    kind: str                      # loop, input, output, multi_output, op, parameter, result
    ops: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    bytes: int = 0
    flops: int = 0
    location: str = ""
    layer: int = 0


@dataclass
class Graph:
    title: str
    kernels: list[Kernel]
    edges: list[tuple[int, int, str]]          # producer, consumer, value type

    @property
    def compute(self) -> list[Kernel]:
        return [k for k in self.kernels if k.kind not in ("parameter", "result")]


def build_graph(module: ir.Module | ir.Operation, title: str = "") -> Graph:
    """The kernels of the module's first function and the values between them."""
    op = module.operation if isinstance(module, ir.Module) else module
    func = functions(op)[0]
    block = func.regions[0].blocks[0]
    kernels, edges, producers = [], [], {}
    for index, argument in enumerate(block.arguments):
        producers[argument] = len(kernels)
        kernels.append(Kernel(f"argument {index}", "parameter", outputs=[type_text(argument.type)]))
    for inner in block.operations:
        inner = inner.operation
        if inner.name == "func.return":
            for index, value in enumerate(inner.operands):
                _link(producers, value, len(kernels), edges)
                kernels.append(Kernel(f"result {index}", "result", inputs=[type_text(value.type)]))
        elif inner.name in _SKIPPED or op_class(inner) == CONSTANT:
            continue
        else:
            for value in inner.operands:
                _link(producers, value, len(kernels), edges)
            for result in inner.results:
                producers[result] = len(kernels)
            kernels.append(_kernel(inner, len([k for k in kernels if k.kind != "parameter"])))
    _assign_layers(kernels, edges)
    return Graph(title, kernels, edges)


def _link(producers: dict, value: ir.Value, consumer: int, edges: list) -> None:
    if value in producers:
        edges.append((producers[value], consumer, type_text(value.type)))


def _kernel(op: ir.Operation, number: int) -> Kernel:
    if op.name == _FUSION:
        body = [o.operation for o in op.regions[0].blocks[0].operations][:-1]
        kind = ir.StringAttr(op.attributes["kind"]).value
        title = f"fusion {number} ({kind})"
        work = sum(flops(o) for o in body)
    else:
        body, kind, title, work = [op], "op", f"kernel {number}: {short_name(op.name)}", flops(op)
    names = Counter(short_name(o.name) for o in body if op_class(o) != CONSTANT)
    return Kernel(title, kind, [n + (f" x{c}" if c > 1 else "") for n, c in names.items()],
                  [type_text(v.type) for v in op.operands],
                  [type_text(v.type) for v in op.results],
                  sum(bytes_of(v.type) for v in list(op.operands) + list(op.results)),
                  work, format_location(op.location))


def _assign_layers(kernels: list[Kernel], edges: list[tuple[int, int, str]]) -> None:
    """Longest path from the arguments: producers above their consumers."""
    for source, target, _ in sorted(edges, key=lambda e: e[1]):
        kernels[target].layer = max(kernels[target].layer, kernels[source].layer + 1)
    bottom = max((k.layer for k in kernels if k.kind != "result"), default=0) + 1
    for kernel in kernels:
        if kernel.kind == "result":
            kernel.layer = bottom


def render_html(graph: Graph) -> str:
    """A page with the SVG graph and a table of the kernels."""
    total_bytes = sum(k.bytes for k in graph.compute)
    total_flops = sum(k.flops for k in graph.compute)
    summary = (f"{len(graph.compute)} kernel(s), {scaled(total_bytes, 'B')} moved, "
               f"{scaled(total_flops, 'FLOP')} (estimates: inputs read once, outputs written once)")
    title = html.escape(graph.title or "fusion graph")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title>",
        "<style>body{font-family:sans-serif;margin:1em}td,th{padding:2px 8px;text-align:left;"
        "font-size:13px}th{background:#eee}svg text{font-family:monospace;font-size:11px}</style>",
        "</head><body>", f"<h1>{title}</h1>", f"<p>{html.escape(summary)}</p>",
        render_svg(graph), _table(graph), "</body></html>", ""])


def render_svg(graph: Graph) -> str:
    positions = _positions(graph)
    width = max((x + _WIDTH for x, _, _ in positions), default=0) + _MARGIN
    height = max((y + h for _, y, h in positions), default=0) + _MARGIN
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>']
    for source, target, label in graph.edges:
        parts.append(_edge(positions[source], positions[target], label))
    for kernel, position in zip(graph.kernels, positions):
        parts.append(_box(kernel, position))
    parts.append("</svg>")
    return "\n".join(parts)


def _lines(kernel: Kernel) -> list[str]:
    if kernel.kind in ("parameter", "result"):
        return [kernel.title, (kernel.outputs or kernel.inputs)[0]]
    return [kernel.title, _clip(", ".join(kernel.ops)),
            _clip("in: " + ", ".join(kernel.inputs)), _clip("out: " + ", ".join(kernel.outputs)),
            f"{scaled(kernel.bytes, 'B')}, {scaled(kernel.flops, 'FLOP')}"]


def _positions(graph: Graph) -> list[tuple[int, int, int]]:
    """(x, y, height) of each box: one row per layer."""
    heights = [len(_lines(k)) * _LINE + 10 for k in graph.kernels]
    layers = sorted({k.layer for k in graph.kernels})
    row_height = {layer: max(h for k, h in zip(graph.kernels, heights) if k.layer == layer)
                  for layer in layers}
    row_y, y = {}, _MARGIN
    for layer in layers:
        row_y[layer], y = y, y + row_height[layer] + _GAP_Y
    column = Counter()
    positions = []
    for kernel, height in zip(graph.kernels, heights):
        x = _MARGIN + column[kernel.layer] * (_WIDTH + _GAP_X)
        column[kernel.layer] += 1
        positions.append((x, row_y[kernel.layer], height))
    return positions


def _box(kernel: Kernel, position: tuple[int, int, int]) -> str:
    x, y, height = position
    tooltip = "\n".join([kernel.title, ", ".join(kernel.ops), kernel.location]).strip()
    weights = [' font-weight="bold"'] + [""] * len(_lines(kernel))
    texts = [f'<text x="{x + 6}" y="{y + 14 + i * _LINE}"{weights[i]}>{html.escape(line)}</text>'
             for i, line in enumerate(_lines(kernel))]
    return (f'<g class="kernel" data-kind="{kernel.kind}"><title>{html.escape(tooltip)}</title>'
            f'<rect x="{x}" y="{y}" width="{_WIDTH}" height="{height}" rx="6" '
            f'fill="{_COLORS.get(kernel.kind, "#eee")}" stroke="#555"/>' + "".join(texts) + "</g>")


def _edge(source: tuple[int, int, int], target: tuple[int, int, int], label: str) -> str:
    x1, y1 = source[0] + _WIDTH // 2, source[1] + source[2]
    x2, y2 = target[0] + _WIDTH // 2, target[1]
    middle = (y1 + y2) // 2
    return (f'<path class="edge" d="M{x1},{y1} C{x1},{middle} {x2},{middle} {x2},{y2}" '
            f'fill="none" stroke="#555" marker-end="url(#arrow)"><title>{html.escape(label)}'
            "</title></path>")


def _table(graph: Graph) -> str:
    rows = ["<table><tr><th>kernel</th><th>ops</th><th>inputs</th><th>outputs</th>"
            "<th>bytes</th><th>FLOPs</th><th>source</th></tr>"]
    for k in graph.compute:
        cells = [k.title, ", ".join(k.ops), ", ".join(k.inputs), ", ".join(k.outputs),
                 scaled(k.bytes, "B"), scaled(k.flops, "FLOP"), k.location]
        rows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return "\n".join(rows + ["</table>"])


def _clip(text: str, limit: int = 42) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def write_fusion_graph(module: ir.Module, path: Path, title: str = "") -> None:
    Path(path).write_text(render_html(build_graph(module, title or Path(path).parent.name)))


def main(argv: list[str] | None = None) -> int:
    """``python -m xlac.debug.fusion_picture model.mlir -o graph.html``."""
    import argparse

    from xlac.pipeline.stage_texts import StageTexts
    parser = argparse.ArgumentParser(prog="python -m xlac.debug.fusion_picture", description=__doc__)
    parser.add_argument("module")
    parser.add_argument("-o", dest="output", default="fusion_graph.html")
    parser.add_argument("--entry", default="main")
    args = parser.parse_args(argv)
    stage = "fused" if "fused" in pipelines.CPU_STAGES else "linalg"
    module = StageTexts(Path(args.module).read_bytes(), args.module, args.entry).module(stage)
    write_fusion_graph(module, Path(args.output), Path(args.module).name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
