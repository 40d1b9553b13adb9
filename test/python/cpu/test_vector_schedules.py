"""The guard for the next slow path: every op class in every element type gets
a vector schedule on the CPU, or is on the allow-list below, which says why.

Structure, not timing: each canonical program (op_class_programs.py) is
lowered to the "bufferized" stage only, where xla-apply-schedules has said
which kernels it left as scalar loops (its remarks; ``exe.fusion_report()``
lists the same under "not scheduled:"). A pair not on the list that gains
such a remark fails: a new slow path. A pair on the list that no longer has
one fails too: it vectorizes now, so strike it and the list shrinks.
About 30 s on two loaded cores.
"""

from __future__ import annotations

import re

import pytest
from op_class_programs import CLASSES, COLS, ROWS, TYPES, cases, program

from xlac.compiler import resolve_options
from xlac.pipeline.stage_texts import StageTexts
from xlac.targets import get_target

_COMPLEX = ("complex numbers are {re, im} structs in memory: no schedule takes them; "
            "xla-complex-as-pairs moves sums, adds and data movement as part pairs, not "
            "this op")
_COMPLEX_TYPES = ("complex<f32>", "complex<f64>")
_SCALAR_LOWERING = "the lowering writes scalar scf loops (element reads and writes), not linalg"
_WINDOW = "reduce_window's windowed maps (d0 + d2) fit no plan; pooling needs NHWC 4-D"

# (class, element type): why it still runs as scalar loops. Each entry is
# checked: when the pair gets a vector schedule, the test says to strike it.
ALLOWED = {
    # c64 selects and gathers move as i64; c128 has no 16-byte integer lanes
    # (its gathers of whole rows go as rows of f64 parts)
    ("select", "complex<f64>"): _COMPLEX,
    **{("scatter", t): _SCALAR_LOWERING for t in TYPES},
    **{("sort", t): _SCALAR_LOWERING + " (rows on the threads: integer keys by a radix sort, "
       "others by a merge sort; no sorting network yet)" for t in TYPES if t not in _COMPLEX_TYPES},
    **{("reduce_window", t): _WINDOW for t in TYPES},
}

# what every remark must say: the op, its tensors, one of the three reasons
_REMARK = re.compile(r"no vector schedule for \S+ \(\d+ (iterations|elements)\) on .+ -> .+|"
                     r"no vector schedule for stablehlo\.\w+ \(\d+ elements\) on \S+")
_REASONS = ("dynamic shape", "not supported by the vector schedules", "no schedule for the op class")

_TARGET = get_target("cpu")
# the plans depend on the vector width: AVX2's in every run, AVX-512's in the heavy
# one (the same allow-list held at both levels in the audit of issue 39)
_LEVELS = ["x86-64-v3", pytest.param("x86-64-v4", marks=pytest.mark.heavy)]
_OPTIONS = resolve_options(None, cpu="x86-64-v3")    # the layout tests' plans


def unscheduled(op_class: str, element: str, level: str = "x86-64-v3") -> list[str]:
    """xla-apply-schedules' remarks for the canonical program of the pair."""
    stages = StageTexts(_TARGET, program(op_class, element).encode(), f"{op_class}.mlir", "main",
                        resolve_options(None, cpu=level))
    _, remarks = stages._run_until("bufferized")
    return [r.message for r in remarks if r.message.startswith("xla-apply-schedules:")]


@pytest.mark.parametrize("level", _LEVELS)
@pytest.mark.parametrize("op_class,element", cases())
def test_op_class_gets_a_vector_schedule_or_is_allowed(op_class, element, level):
    said = unscheduled(op_class, element, level)
    for message in said:
        assert _REMARK.search(message) and any(r in message for r in _REASONS), message
    if (op_class, element) in ALLOWED:
        assert said, (f"{op_class} {element} is vectorized now: strike it from ALLOWED "
                      f"({ALLOWED[op_class, element]})")
    else:
        assert not said, f"a new scalar path: {op_class} {element}:\n" + "\n".join(said)


def test_allow_list_names_only_real_cases():
    assert set(ALLOWED) <= set(cases()), sorted(set(ALLOWED) - set(cases()))
    assert {c for c, _ in cases()} == set(CLASSES)


# Transposed layouts: a transpose, or an elementwise op reading an operand
# transposed, moves square blocks through registers in every element width
# (passes/cpu/schedules/transpose.mlir), never a gather per output vector:
# every read is a block of rows, transposed in registers.
# The block's side (schedule_plan.transpose_block): 16, 8 for 8-byte elements.
_SIDE = {"f32": 16, "i32": 16, "f64": 8, "i64": 8, "f16": 16, "bf16": 16,
         "i8": 16, "ui8": 16, "i1": 16}
_T = f"tensor<{COLS}x{ROWS}x"        # the transposed operand: [cols, rows]


def _transposed_program(kind: str, e: str) -> str:
    t, a = f"tensor<{ROWS}x{COLS}x{e}>", f"{_T}{e}>"
    read = f"  %x = stablehlo.transpose %a, dims = [1, 0] : ({a}) -> {t}\n"
    if kind == "transpose":
        return f"func.func @main(%a: {a}) -> {t} {{\n{read}  return %x : {t}\n}}"
    if kind == "transpose_3d":
        s, o = f"tensor<4x{ROWS}x{COLS}x{e}>", f"tensor<4x{COLS}x{ROWS}x{e}>"
        return (f"func.func @main(%a: {s}) -> {o} {{\n"
                f"  %x = stablehlo.transpose %a, dims = [0, 2, 1] : ({s}) -> {o}\n  return %x : {o}\n}}")
    if kind == "elementwise":
        op = "stablehlo.or" if e == "i1" else "stablehlo.add"
        return (f"func.func @main(%a: {a}, %b: {t}) -> {t} {{\n{read}"
                f"  %0 = {op} %x, %b : {t}\n  return %0 : {t}\n}}")
    if kind == "select":
        p = f"tensor<{ROWS}x{COLS}xi1>"
        return (f"func.func @main(%p: {p}, %a: {a}, %b: {t}) -> {t} {{\n{read}"
                f"  %0 = stablehlo.select %p, %x, %b : {p}, {t}\n  return %0 : {t}\n}}")
    out = f"tensor<{ROWS}x{COLS}x{'i32' if e == 'f32' else 'f32'}>"     # convert
    return (f"func.func @main(%a: {a}) -> {out} {{\n{read}"
            f"  %0 = stablehlo.convert %x : ({t}) -> {out}\n  return %0 : {out}\n}}")


@pytest.mark.parametrize("kind", ["transpose", "transpose_3d", "elementwise", "select", "convert"])
@pytest.mark.parametrize("element", sorted(_SIDE))
def test_transposed_layouts_move_register_blocks(kind, element):
    stages = StageTexts(_TARGET, _transposed_program(kind, element).encode(), f"{kind}.mlir", "main",
                        _OPTIONS)
    module, _ = stages._run_until("bufferized")
    text = module.operation.get_asm(large_elements_limit=16)
    side = _SIDE[element]       # a convert's f32 or i32 result: 16 too; from f64 or i64: 8
    reads = set(re.findall(r"vector\.transfer_read [^\n]*, vector<(?:1x)*(\d+x\d+)x", text))
    assert reads == {f"{side}x{side}"}, (kind, element, reads)
    # 16x16: rounds of two-row unpacks; 8x8: one shuffle of the flattened block
    in_registers = rf"vector\.shuffle [^\n]*: vector<({side}|{side * side})x\w+>, vector<"
    assert re.search(in_registers, text), f"{kind} {element}: no block transposed in registers"
    assert "vector.gather" not in text, f"{kind} {element} gathers its transposed operand"


# Complex transposes move as pairs of their parts (xla-complex-as-pairs), the
# parts' dim last on both sides: 4x4 blocks of pairs, both parts
# (pair_transpose_plan.py), read by rows; no complex<f32> scalar loop, no gather.
@pytest.mark.parametrize("kind", ["transpose", "transpose_3d"])
@pytest.mark.parametrize("element", _COMPLEX_TYPES)
def test_complex_transposes_move_blocks_of_pairs(kind, element):
    stages = StageTexts(_TARGET, _transposed_program(kind, element).encode(), f"{kind}.mlir", "main",
                        _OPTIONS)
    module, remarks = stages._run_until("bufferized")
    text = module.operation.get_asm(large_elements_limit=16)
    assert not [r.message for r in remarks if r.message.startswith("xla-apply-schedules:")]
    reads = set(re.findall(r"vector\.transfer_read [^\n]*, (vector<[^>]*>)", text))
    part = "f32" if element == "complex<f32>" else "f64"
    assert reads == {f"vector<4x4x2x{part}>"}, (kind, element, reads)
    assert "complex<" not in text and "vector.gather" not in text


# A sum of negated elements (a gradient's reduce(negate(x))): canonicalization
# folds the body's `out + (-v)` into `out - v`, whose reduction the vectorizer
# could not take; xla-additive-reductions puts the addition back (same bits).
_NEGATED_SUM = """
func.func @main(%x: tensor<512x64x{t}>) -> tensor<64x{t}> {{
  %n = stablehlo.negate %x : tensor<512x64x{t}>
  %z = stablehlo.constant dense<0.0> : tensor<{t}>
  %r = stablehlo.reduce(%n init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<512x64x{t}>, tensor<{t}>) -> tensor<64x{t}>
  return %r : tensor<64x{t}>
}}"""


@pytest.mark.parametrize("element", ["f32", "f64"])
def test_a_sum_of_negations_gets_a_vector_schedule(element):
    import numpy as np

    import xlac
    text = _NEGATED_SUM.format(t=element)
    stages = StageTexts(_TARGET, text.encode(), "negated_sum.mlir", "main", _OPTIONS)
    _, remarks = stages._run_until("bufferized")
    assert not [r.message for r in remarks if r.message.startswith("xla-apply-schedules:")]
    x = np.random.default_rng(0).standard_normal((512, 64)).astype({"f32": np.float32, "f64": np.float64}[element])
    (got,) = xlac.compile(text).run(x)
    (scalar,) = xlac.compile(text, disable_passes=("xla-additive-reductions",)).run(x)
    np.testing.assert_array_equal(got, scalar)
    np.testing.assert_allclose(got, -x.sum(axis=0), rtol=1e-5)
