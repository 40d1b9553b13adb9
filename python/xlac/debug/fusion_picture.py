"""The kernels of a program, to look at: the graph for a viewer, and a table.

Drawn from the "fused" stage (each ``xla.fusion`` is one kernel, an op left
alone is a kernel of its own), numbered as ``exe.fusion_report()`` numbers
them. Each ``XLAC_DUMP_TO`` directory gets:

- ``fusion_graph.json`` (+ ``.flops.json``, ``.bytes.json`` node data): open it in
  Google's Model Explorer, which lays the graph out, with kernels as
  collapsible layers (``xlac.debug.fusion_graph``);
- ``fusion_graph.dot``: the same graph for Graphviz;
- ``fusion_graph.html``: the table of kernels (ops, shapes, bytes, FLOPs,
  source) and how to open the graph.

Or, for a file: ``python -m xlac.debug.fusion_picture model.mlir -o graph.json
[--open]`` (``--open`` starts Model Explorer on it, if installed).
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from xlac.debug.fusion_graph import (
    KIND_COLORS,
    ProgramGraph,
    dot_text,
    model_explorer_collection,
    node_data,
    program_graph,
)
from xlac.debug.kernels import scaled
from xlac.mlir import ir
from xlac.pipeline import pipelines

OPEN_HINT = ("pip install ai-edge-model-explorer; model-explorer {json} "
             "--node_data_paths={flops},{bytes}")


def write_fusion_graph(module: ir.Module, path: Path, title: str = "") -> list[Path]:
    """The graph beside ``path`` (its stem): ``.json`` and node data for Model
    Explorer, ``.dot``, and the ``.html`` table. Returns the files written."""
    path = Path(path)
    graph = program_graph(module, title or path.parent.name or "program")
    base = path.with_suffix("")
    files = {"json": base.with_suffix(".json"), "flops": base.with_suffix(".flops.json"),
             "bytes": base.with_suffix(".bytes.json"), "dot": base.with_suffix(".dot"),
             "html": base.with_suffix(".html")}
    files["json"].write_text(json.dumps(model_explorer_collection(graph), indent=1))
    files["flops"].write_text(json.dumps(node_data(graph, "flops"), indent=1))
    files["bytes"].write_text(json.dumps(node_data(graph, "bytes"), indent=1))
    files["dot"].write_text(dot_text(graph))
    files["html"].write_text(render_html(graph, {k: v.name for k, v in files.items()}))
    return list(files.values())


def render_html(graph: ProgramGraph, names: dict[str, str]) -> str:
    """A page with the kernel table and how to open the graph."""
    compute = graph.kernels
    summary = (f"{len(compute)} kernel(s), {scaled(sum(k.bytes for k in compute), 'B')} moved, "
               f"{scaled(sum(k.flops for k in compute), 'FLOP')} (estimates: inputs read once, "
               "outputs written once)")
    title = html.escape(graph.title or "fusion graph")
    command = OPEN_HINT.format(**names)
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title>",
        "<style>body{font-family:sans-serif;margin:1em}td,th{padding:2px 8px;text-align:left;"
        "font-size:13px}th{background:#eee}code{background:#f4f4f4;padding:1px 4px}</style>",
        "</head><body>", f"<h1>{title}</h1>", f"<p>{html.escape(summary)}</p>",
        "<p>The graph, laid out, with each kernel a collapsible layer: open "
        f"<code>{html.escape(names['json'])}</code> in Model Explorer "
        f"(<code>{html.escape(command)}</code>), or "
        f"<code>{html.escape(names['dot'])}</code> with Graphviz "
        f"(<code>dot -Tsvg {html.escape(names['dot'])} -o graph.svg</code>).</p>",
        _table(graph), "</body></html>", ""])


def _table(graph: ProgramGraph) -> str:
    rows = ['<table class="kernels"><tr><th>kernel</th><th>kind</th><th>ops</th><th>inputs</th>'
            "<th>outputs</th><th>bytes</th><th>FLOPs</th><th>source</th></tr>"]
    for k in graph.kernels:
        cells = [k.title, k.kind, k.op_names, ", ".join(k.inputs), ", ".join(k.outputs),
                 scaled(k.bytes, "B"), scaled(k.flops, "FLOP"), k.location]
        rows.append(f'<tr data-kind="{k.kind}" style="background:{KIND_COLORS[k.kind]}">'
                    + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return "\n".join(rows + ["</table>"])


def main(argv: list[str] | None = None) -> int:
    """``python -m xlac.debug.fusion_picture model.mlir -o graph.json [--open]``."""
    import argparse

    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.pipeline.pass_manager import run_passes
    parser = argparse.ArgumentParser(prog="python -m xlac.debug.fusion_picture",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("-o", dest="output", default="fusion_graph.json",
                        help="where the graph goes (.json; .dot, .html and node data beside it)")
    parser.add_argument("--entry", default="main")
    parser.add_argument("--open", action="store_true", help="open the graph in Model Explorer")
    args = parser.parse_args(argv)
    module = parse_module(new_context(), Path(args.module).read_bytes(), args.module)
    run_passes(module, pipelines.ingest(args.entry) + pipelines.fuse())   # the "fused" stage
    written = write_fusion_graph(module, Path(args.output), Path(args.module).name)
    print("wrote " + ", ".join(str(p) for p in written))
    return open_in_model_explorer(written[0], written[1:3]) if args.open else 0


def open_in_model_explorer(graph: Path, data: list[Path]) -> int:
    """Start Model Explorer (a local web server and a browser tab) on the graph."""
    try:
        import model_explorer
    except ImportError:
        print("Model Explorer is not installed: " + OPEN_HINT.format(
            json=graph, flops=data[0], bytes=data[1]))
        return 1
    config = model_explorer.config().add_model_from_path(str(graph))
    for path in data:
        config.add_node_data_from_path(str(path))
    model_explorer.visualize_from_config(config)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
