"""The reference target, as a newcomer reads it: one light stage (the
interpreter's own preparation: the entry chosen, CHLO legalized, calls
inlined), then the interpreter runs the program on every call, in a child
process (``xlac.targets.reference.compile``). Nothing is lowered, fused or
cached: the results are StableHLO's by definition.
"""

from __future__ import annotations

from xlac.targets.target import Stage, Target


def interpreted_stage(entry: str, options) -> list[str]:
    """What the interpreter runs: the entry alone, with every helper inlined."""
    return [f"xla-select-entry{{entry={entry}}}", "func.func(chlo-legalize-to-stablehlo)",
            "inline", "symbol-dce"]


REFERENCE = Target(
    name="reference",
    summary="the StableHLO reference interpreter, in a child process: slow, exact",
    stages=(
        Stage("input", "the program as given, parsed and verified"),
        Stage("stablehlo", "the entry with its callees inlined and CHLO legalized: what the "
              "interpreter runs", interpreted_stage, kept=True),
    ),
    compiler="xlac.targets.reference.compile:ReferenceCompiler",
    loader="xlac.targets.reference.compile:load_function",
    device_kind="interpreter",
    in_process=False,
    caches=False,
)
