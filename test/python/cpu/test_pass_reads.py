"""The passes' cheap reads of affine maps, types and attributes: a map's
results by their class (``dim_position``, ``is_zero``), not printed and
matched; a type's or an attribute's text printed once per pass run
(``text_of``). They must read what the printed forms said."""

from __future__ import annotations

from xlac.context import new_context
from xlac.mlir import ir
from xlac.passes import base
from xlac.passes.base import dim_position, is_zero, text_of
from xlac.passes.cpu.peel_roll_columns import _walk_dim


def _map(text: str) -> ir.AffineMap:
    return ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{text}>")).value


def test_dim_position_and_is_zero_read_what_the_printed_results_say():
    with new_context():
        for text in ("(d0, d1, d2) -> (d2, 0, d0 + d1)", "(d0, d1) -> (d1 * 2 + d0, d0, 1)",
                     "(d0)[s0] -> (s0, d0 floordiv 4, d0)"):
            for expr in _map(text).results:
                printed = str(expr)
                assert dim_position(expr) == (int(printed[1:]) if printed[:1] == "d"
                                              and printed[1:].isdigit() else None)
                assert is_zero(expr) == (printed == "0")


def test_walk_dim_reads_plain_dims_and_sees_them_in_expressions():
    with new_context():
        assert _walk_dim(_map("(d0, d1) -> (d1, d0)"), 0) == 1
        assert _walk_dim(_map("(d0, d1) -> (d0 * 2 + d1)"), 1) is False
        assert _walk_dim(_map("(d0, d1) -> (0, d0)"), 1) is None
        assert _walk_dim(_map("(d0, d1) -> (d1, d0 + d1)"), 1) == 0


def test_text_of_prints_each_distinct_type_once_per_run():
    with new_context(), ir.Location.unknown():
        f32 = ir.F32Type.get()
        tensor = ir.RankedTensorType.get([2, 3], f32)
        assert text_of(tensor) == "tensor<2x3xf32>"          # outside a run: printed, kept nowhere
        base._run.memo = {}
        try:
            assert [text_of(t) for t in (tensor, tensor.element_type, f32, tensor)] == \
                ["tensor<2x3xf32>", "f32", "f32", "tensor<2x3xf32>"]
            kinds = ir.Attribute.parse("[#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]")
            assert [text_of(a) for a in kinds] == [str(a) for a in kinds]
            assert len(base._run.memo[base._TEXTS]) == 4     # two types, two attributes
        finally:
            base._run.memo = None
