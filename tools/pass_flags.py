"""mlir-opt's per-pass flags: ``xla-opt f.mlir --canonicalize --cse``.

Each flag that names a pass (xlac's, a named pipeline, or an upstream MLIR or
StableHLO pass) becomes one element of the pipeline, in command-line order.
Options follow an ``=``: ``--canonicalize=max-iterations=3`` or
``--canonicalize='max-iterations=3 region-simplify=disabled'``. A pass that
runs on functions only is nested under ``func.func(...)``, as mlir-opt nests
it implicitly.
"""

from __future__ import annotations

from xlac.errors import ToolError


def pipeline_from_flags(flags: list[str], tool: str = "xla-opt") -> str:
    """``builtin.module(...)`` text for ``flags`` (``--name[=options]`` each);
    ToolError for a flag that is neither an option of ``tool`` nor a pass."""
    elements = [_element(flag, tool) for flag in flags]
    return "builtin.module(" + ",".join(elements) + ")"


def _element(flag: str, tool: str) -> str:
    if not flag.startswith("--") or len(flag) < 3:
        raise ToolError(f"{tool}: error: unexpected argument '{flag}' "
                        f"(see {tool} --help)")
    name, _, options = flag[2:].partition("=")
    options = options.strip().strip("'\"")
    element = name + (f"{{{options}}}" if options else "")
    return _anchored(element, name, flag, tool)


def _anchored(element: str, name: str, flag: str, tool: str) -> str:
    """``element``, nested under the op its pass is restricted to, if any."""
    from xlac.passes.registry import pass_names
    from xlac.pipeline.pipelines import NAMED_PIPELINES
    if name in pass_names() or name in NAMED_PIPELINES:
        return element
    problem = _upstream_problem(element)
    if problem is None:
        return element
    if "restricted to '" in problem:
        anchor = problem.split("restricted to '", 1)[1].split("'", 1)[0]
        if _upstream_problem(f"{anchor}({element})") is None:
            return f"{anchor}({element})"
    if "does not refer to a registered pass" in problem:
        raise ToolError(f"{tool}: error: unknown option '{flag}': neither an option of {tool} nor a "
                        f"pass (see {tool} --help and {tool} --list-passes)")
    raise ToolError(f"{tool}: error: bad pass flag '{flag}': {problem}")


def _upstream_problem(text: str) -> str | None:
    """Why an upstream MLIR pass manager rejects ``text``, or None."""
    from xlac.context import new_context
    from xlac.mlir import passmanager
    with new_context():
        try:
            passmanager.PassManager("builtin.module").add(text)
        except ValueError as exc:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            return next((line.split("error: ", 1)[1] for line in lines if "error: " in line),
                        lines[0] if lines else "rejected")
    return None
