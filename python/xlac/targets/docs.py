"""docs/targets.md: every target's table of stages, generated from the tables.

    python -m xlac.targets.docs > docs/targets.md
"""

from __future__ import annotations

from xlac.options import Options
from xlac.pipeline.text import parse_pipeline
from xlac.targets import TARGETS, get_target

# Steps depend on the CPU level and core count only through pass options,
# which the page leaves out; a fixed level keeps it the same on every machine.
# cuda's matmuls as cuBLASLt calls (the default where libcublasLt is found): the
# page shows those passes whether or not this machine has the library.
_OPTIONS = Options(cpu="x86-64-v3", num_threads=2, cuda_contractions="cublaslt")
_CAPABILITIES = (("device_kind", "where its code runs"),
                 ("in_process", "runs in the calling process"),
                 ("aot", "xla-compile makes a C library of it"),
                 ("profiles", "exe.profile() times each kernel"),
                 ("dynamic_shapes", "`?` dimensions, compiled per call shape"),
                 ("input_keyed", "a cache hit on the input's bytes loads without MLIR"),
                 ("caches", "kept in the compilation cache"))


def markdown() -> str:
    lines = ["# Targets", "",
             "Generated from the targets' tables (`python -m xlac.targets.docs > docs/targets.md`;",
             "a test fails when they disagree). Each target is one table of stages in",
             "`python/xlac/targets/<name>/target.py`: `exe.as_text(stage)`, `xla-opt --target=<name>",
             "--xla-stage=<stage>`, the compile's progress, dumps and the cache key all read it.",
             "A stage's passes run in the order shown; their options (threads, vector width,",
             "remarks) come from `xlac.Options`.", ""]
    for name in TARGETS:
        lines += _target_section(name)
    return "\n".join(lines)


def _target_section(name: str) -> list[str]:
    target = get_target(name)
    lines = [f"## `{name}`: {target.summary}", "",
             "| stage | what it holds | made by |", "|---|---|---|"]
    for stage in target.stages:
        lines.append(f"| `{stage.name}` | {stage.produces} | {_made_by(stage)} |")
    lines += ["", "| capability | |", "|---|---|"]
    for field, meaning in _CAPABILITIES:
        lines.append(f"| {meaning} | {_shown(getattr(target, field))} |")
    lines += ["", f"Machine code: `{target.compiler}`; loading: `{target.loader}`.", ""]
    return lines


def _made_by(stage) -> str:
    if stage.code:
        return f"`{stage.code}` from the stage before"
    if stage.steps is None:
        return "parsing and verifying the input"
    steps = [element for step in stage.steps("main", _OPTIONS) for element in parse_pipeline(step)]
    return ", ".join(f"`{_bare(element)}`" for element in steps)


def _bare(element) -> str:
    """A step as its pass names: ``func.func(cse)``, options left out."""
    if element.children is None:
        return element.name
    return f"{element.name}({','.join(_bare(child) for child in element.children)})"


def _shown(value) -> str:
    return {True: "yes", False: "no"}.get(value, str(value)) if isinstance(value, bool) \
        else str(value)


if __name__ == "__main__":
    print(markdown(), end="")
