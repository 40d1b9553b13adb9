"""xlac's architecture read from its code: which module imports which, the
parts (folders) they belong to, the layers the parts form, and the picture
in docs/architecture.md, drawn from the same reading.

    python test/support/house.py            # print the picture's Mermaid text

Every ``import`` is counted, those inside functions too: a lazy import is
still a dependency.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = {"xlac": REPO / "python" / "xlac", "xlac.passes": REPO / "passes",
         "xlac.dialects": REPO / "dialects", "xlac.tools": REPO / "tools"}

# The parts, bottom layer first, and what each part may import (itself included).
CORE = ("xlac.version", "xlac.context", "xlac.errors", "xlac.dtypes", "xlac.signature", "xlac.options",
        "xlac.cpu_model", "xlac.files", "xlac.record", "xlac.checksum", "xlac.pipes")
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("mlir", ()),
    ("dialects", ("mlir",)),
    ("core", ("mlir", "dialects")),
    ("cache", ("mlir", "core")),
    ("spmd", ("mlir", "core")),
    ("frontend", ("mlir", "core", "spmd")),
    ("artifact", ("core", "cache", "spmd")),
    ("passes", ("mlir", "core", "dialects", "spmd")),
    ("pipeline", ("mlir", "core", "frontend", "passes")),
    ("reference", ("mlir", "core", "frontend", "pipeline", "spmd")),
    ("debug", ("mlir", "core", "frontend", "pipeline", "passes", "dialects")),
    ("executable", ("mlir", "core", "frontend", "pipeline", "debug")),
    ("targets", ("mlir", "core", "cache", "spmd", "pipeline", "artifact", "executable",
                 "reference")),
    ("api", ("mlir", "core", "cache", "spmd", "frontend", "pipeline", "debug", "executable",
             "targets", "artifact")),
    ("tools", ("mlir", "core", "cache", "spmd", "frontend", "pipeline", "debug", "executable",
               "targets", "artifact", "api", "reference", "passes")),
]
ALLOWED = {part: set(below) | {part} for part, below in LAYERS}
_PART_OF_PACKAGE = {"xlac.frontend": "frontend", "xlac.pipeline": "pipeline",
                    "xlac.cache": "cache", "xlac.spmd": "spmd",
                    "xlac.targets": "targets", "xlac.artifact": "artifact",
                    "xlac.reference": "reference", "xlac.debug": "debug",
                    "xlac.passes": "passes", "xlac.dialects": "dialects", "xlac.tools": "tools"}
_EXECUTABLE = ("xlac.executable", "xlac.dynamic")
_API = ("xlac.compiler", "xlac.loader", "xlac.aot", "xlac.jax_jit", "xlac.__init__")


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name."""
    found = {}
    for package, root in ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            found[".".join([package, *parts])] = path
    return found


def part_of(module: str) -> str:
    if module in ("xlac.mlir", "xlac.blas_pool"):      # the bindings, and the threads their import starts
        return "mlir"
    if module in _API or module == "xlac":
        return "api"
    if module in _EXECUTABLE:
        return "executable"
    if module in CORE:
        return "core"
    for package, part in sorted(_PART_OF_PACKAGE.items(), key=lambda kv: -len(kv[0])):
        if module == package or module.startswith(package + "."):
            return part
    return "core"


def imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package modules it imports (anywhere in its code)."""
    graph = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(tree):
            for target in _imported_modules(node, package, known):
                if target != module:
                    targets.add(target)
        graph[module] = targets
    return graph


def _imported_modules(node, package: str, known) -> set[str]:
    """``import a.b``: a.b; ``from a import b``: a.b if it is a module, else a."""
    if isinstance(node, ast.Import):
        return {t for alias in node.names if (t := _resolve(alias.name, known))}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                        + ([base] if base else []))
    found = set()
    for alias in node.names:
        name = f"{base}.{alias.name}"
        if name in known or name + ".__init__" in known:
            found.add(_resolve(name, known))
        elif (target := _resolve(base, known)):
            found.add(target)
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The known module ``name`` refers to (a module, or a name inside one)."""
    while name:
        if name in known:
            return name
        if name + ".__init__" in known:
            return name + ".__init__"
        name = name.rpartition(".")[0]
    return None


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Modules that import each other in a loop (strongly connected, size > 1)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _package_init(module: str) -> bool:
    return module.endswith(".__init__")


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Imports a part may not make (see LAYERS)."""
    problems = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = part_of(module), part_of(target)
            if _package_init(target) and target.startswith(module.rsplit(".", 1)[0]):
                continue                     # a subpackage's own __init__
            if there not in ALLOWED[here]:
                problems.append(f"{module} ({here}) imports {target} ({there})")
    return problems


def part_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(part_of(m), part_of(t)) for m, ts in graph.items() for t in ts
            if part_of(m) != part_of(t)}


def mermaid(graph: dict[str, set[str]]) -> str:
    """The parts as a Mermaid flowchart, top layer first, arrows = imports.

    Arrows into core and mlir are left out: (nearly) every part has them.
    """
    lines = ["flowchart TD"]
    for part, _ in reversed(LAYERS):
        lines.append(f'    {part}["{_LABELS[part]}"]')
    for source, target in sorted(part_edges(graph)):
        if target not in ("core", "mlir"):
            lines.append(f"    {source} --> {target}")
    return "\n".join(lines) + "\n"


def private_imports(known: dict[str, Path]) -> list[str]:
    """``from a import _name`` across modules: a private name used where it is not private."""
    found = []
    for module, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xlac"):
                found += [f"{module}: from {node.module} import {alias.name}"
                          for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


# A target named in a comparison: ``target == "cpu"``, ``"cuda" != name``, ``in ("cpu", ...)``.
_TARGET_COMPARISON = re.compile(r"""[!=]=\s*["'](?:cpu|cuda|reference)["']"""
                                r"""|["'](?:cpu|cuda|reference)["']\s*[!=]="""
                                r"""|\bin\s*[(\[{]\s*["'](?:cpu|cuda|reference)["']""")


def target_name_comparisons(known: dict[str, Path]) -> list[str]:
    """Lines outside ``xlac.targets`` that decide by a target's name: what a target
    can do is an attribute of its table (``Target.aot``, ``.recompiles``, ...)."""
    found = []
    for module, path in known.items():
        if module.startswith("xlac.targets."):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _TARGET_COMPARISON.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return found


def environment_reads(known: dict[str, Path]) -> dict[str, list[str]]:
    """module -> the ``XLAC_*`` names and ``os.environ``/``getenv`` uses in its code."""
    found = {}
    for module, path in known.items():
        text = path.read_text()
        uses = sorted(set(re.findall(r"os\.environ|os\.getenv|\"XLAC_[A-Z_]+\"", text)))
        if uses:
            found[module] = uses
    return found


_LABELS = {
    "mlir": "mlir: the one import of the MLIR bindings",
    "core": "core: context, errors, options, cpu_model, signature, dtypes, files, record",
    "cache": "cache/: the compilation cache, its keys, the build identity",
    "spmd": "spmd/: device grid, MPI world and shim, starting on every rank",
    "dialects": "dialects/: xla.fusion",
    "frontend": "frontend/: bytes, text, VHLO -> module",
    "artifact": "artifact/: on-disk container, C ABI",
    "passes": "passes/: ingest, lower, numerics, fusion, buffers, cpu, gpu",
    "pipeline": "pipeline/: pipelines, parser, pass manager, stage runner",
    "reference": "reference/: the interpreter, out of process",
    "debug": "debug/: dumps, timing, fusion picture and report",
    "executable": "executable, dynamic",
    "targets": "targets/: a table of stages each: cpu, cuda, reference",
    "api": "compiler, loader, aot, jax_jit",
    "tools": "tools/: xla-opt, xla-run, xla-compile",
}


if __name__ == "__main__":
    print(mermaid(imports(modules())), end="")
