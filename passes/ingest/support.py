"""Which ops each target can compile, and why not where it cannot.

This table drives the up-front support check (``xla-check-support``) and the
generated op-support page, so the two can never disagree. An op of the
``stablehlo`` or ``chlo`` dialect that is not listed here is supported.
"""

from __future__ import annotations

# op name -> why xlac cannot compile it yet (every target).
UNSUPPORTED: dict[str, str] = {
    # (stablehlo.custom_call: by target, in custom_calls.py: LAPACK's run on the CPU)
    "stablehlo.send": "host communication is not supported",
    "stablehlo.recv": "host communication is not supported",
    "stablehlo.infeed": "host communication is not supported",
    "stablehlo.outfeed": "host communication is not supported",
    "stablehlo.create_token": "tokens are not supported",
    "stablehlo.after_all": "tokens are not supported",
}

# Dialects whose ops may appear in a program handed to xlac.
INPUT_DIALECTS = ("builtin", "func", "stablehlo", "chlo", "shape", "arith", "tensor",
                  "math")


# What the check rejects whatever the op (kept in step with unsupported_reason).
TYPE_RULES = (
    "ops of dialects other than " + ", ".join(INPUT_DIALECTS),
    "quantized (`!quant.uniform`) values left after the quantization lowering",
)


def unsupported_reason(op_name: str, operand_types: list[str], result_types: list[str]) -> str | None:
    """Why ``op_name`` with these types cannot be compiled, or None if it can."""
    if op_name in UNSUPPORTED:
        return UNSUPPORTED[op_name]
    dialect = op_name.split(".", 1)[0]
    if dialect not in INPUT_DIALECTS:
        return f"ops of the '{dialect}' dialect are not StableHLO input"
    types = operand_types + result_types
    if any("!quant." in t for t in types):  # the ingest lowers !quant first; a leftover would abort
        return "this quantized op has no lowering to integer math yet"
    return None
