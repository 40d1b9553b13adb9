"""The update computation of a scatter, as text xla-lower-scatter can paste.

The region is printed in generic form, its values renamed so they cannot
clash with the helper's, and, when every op in it acts on each element
alone, its 0-d tensor types widened so it runs on whole update windows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlac.mlir import ir
from xlac.passes.base import PassFailure
from xlac.passes.helper_calls import copy_outside_constants, tensor_type


@dataclass(frozen=True)
class Region:
    """The update computation as generic-form lines, ready to paste."""

    arguments: tuple[str, ...]           # block argument names, inputs then updates
    lines: tuple[str, ...]               # body without its terminator
    results: tuple[str, ...]             # operands of stablehlo.return
    elementwise: bool                    # safe to run on whole windows


VALUE_NAME = re.compile(r"%([A-Za-z0-9_$.\-]+)")
_SCALAR_TENSOR = re.compile(r"tensor<((?:complex<[A-Za-z]\w*>)|[A-Za-z]\w*)>")


def paste_region(region: Region, inputs: list[str],
                 window_shape: list[int]) -> tuple[list[str], list[str]]:
    """The region's lines with its arguments bound to ``inputs``, and its results.

    Every other value gets a `%rgn_` prefix so it cannot clash with the
    helper's names; 0-d tensor types become ``window_shape`` ones.
    """
    binding = dict(zip(region.arguments, inputs))

    def rename(match: re.Match) -> str:
        return binding.get(match.group(1), "%rgn_" + match.group(1))

    def widen(text: str) -> str:
        if not window_shape:
            return text
        return _SCALAR_TENSOR.sub(lambda m: tensor_type(window_shape, m.group(1)), text)

    lines = [widen(VALUE_NAME.sub(rename, line)) for line in region.lines]
    results = [VALUE_NAME.sub(rename, name) for name in region.results]
    return lines, results


# Ops that act on each element alone: the region may run on whole windows.
_ELEMENTWISE = frozenset("stablehlo." + name for name in """
    abs add and atan2 bitcast_convert cbrt ceil clamp compare complex constant convert
    cosine count_leading_zeros divide exponential exponential_minus_one floor imag
    is_finite log log_plus_one logistic maximum minimum multiply negate not or popcnt
    power real reduce_precision remainder round_nearest_afz round_nearest_even rsqrt
    select shift_left shift_right_arithmetic shift_right_logical sign sine sqrt subtract
    tan tanh xor
""".split())


def region_of(op: ir.Operation) -> Region:
    """The update computation of ``op`` as text (its types checked first)."""
    block = op.regions[0].blocks[0]
    _check_region_types(op, block)
    copy_outside_constants(op, block, op.name)  # the text must name every value it uses
    lines = op.get_asm(print_generic_op_form=True).splitlines()
    end = max(i for i, line in enumerate(lines) if line.startswith("})"))
    header, body = lines[1], lines[2:end]
    operations = list(block.operations)
    return Region(
        arguments=tuple(VALUE_NAME.findall(header.split("(", 1)[1])),
        lines=tuple(body[:-1]),
        results=tuple("%" + n for n in VALUE_NAME.findall(body[-1].split(" : ", 1)[0])),
        elementwise=all(inner.name in _ELEMENTWISE for inner in operations[:-1]))


def _check_region_types(op: ir.Operation, block: ir.Block) -> None:
    count = len(op.results)
    expected = [f"tensor<{ir.RankedTensorType(v.type).element_type}>"
                for v in list(op.operands[:count]) + list(op.operands[count + 1:])]
    found = [str(arg.type) for arg in block.arguments]
    if found != expected:
        raise PassFailure(op.location, f"scatter: the update computation takes ({', '.join(found)})"
                                       f" but the operands need ({', '.join(expected)}); "
                                       "only computations on the operands' own types are supported")
