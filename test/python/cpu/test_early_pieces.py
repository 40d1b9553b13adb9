"""A big program split right after xla-outline-kernels, each piece lowered to
the LLVM dialect by its worker (xlac.targets.cpu.early_pieces): the same
kernels, the same numbers as the whole module's lowering."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_pieces import _compile, _inputs, _layers, small_is_big  # noqa: F401 - a fixture

from xlac.errors import CompileError
from xlac.targets.cpu import compile as cpu_compile
from xlac.targets.cpu import early_pieces, pieces
from xlac.targets.cpu.piece_modules import symbols as pieces_symbols

_SCALES = [0.5, 0.25, 0.125]


@pytest.fixture
def lowered_in_workers(monkeypatch):
    """One bool per compile in pieces: whether its workers lowered the pieces."""
    seen: list[bool] = []
    real = cpu_compile.CpuCompiler._in_pieces

    def spy(self, *args, **kwargs):
        seen.append(self.early is not None)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(cpu_compile.CpuCompiler, "_in_pieces", spy)
    return seen


@pytest.mark.usefixtures("small_is_big")
def test_pieces_lowered_in_workers_compute_what_the_whole_stage_computes(lowered_in_workers):
    x, w = _inputs()
    early = _compile(_layers(_SCALES))
    late = _compile(_layers(_SCALES), verify_each=True)   # the llvm stage whole, here
    assert lowered_in_workers == [True, False]
    assert type(early.function).__name__ == "PiecesFunction"
    np.testing.assert_array_equal(early(x, w), late(x, w))


def outlined_layers():
    """``_layers`` lowered at x86-64-v3 up to the cut (``CUT_AFTER``), and the
    llvm stage's steps after it."""
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.options import Options
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.pipeline import llvm_stage
    from xlac.targets.cpu.target import CPU
    options = Options.from_env().replace(cpu="x86-64-v3")
    module = parse_module(new_context(), _layers(_SCALES).encode(), "layers.mlir")
    run_passes(module, CPU.steps_until("bufferized", "main", options))
    steps = llvm_stage("main", options)
    cut = steps.index(early_pieces.CUT_AFTER) + 1
    run_passes(module, steps[:cut])
    return module, steps[cut:]


def test_each_kernel_lowered_alone_is_the_whole_modules():
    """Every step after outlining depends on the function it lowers alone."""
    from xlac.mlir import ir
    from xlac.pipeline.pass_manager import run_passes
    module, rest = outlined_layers()
    found = early_pieces.split(module, "main", 4, _texts(module), rest, 0)
    run_passes(module, rest)
    whole = _texts(module, "llvm.func")
    lowered = {}
    for piece in found:
        part = ir.Module.parse(piece.bytecode, module.context)
        run_passes(part, list(piece.steps))
        lowered.update(_texts(part, "llvm.func"))
    assert len(found) >= 2 and set(lowered) == set(whole)
    assert all(lowered[name] == text for name, text in whole.items())


def _texts(module, kind: str = "func.func") -> dict[str, str]:
    from xlac.mlir import ir
    return {ir.StringAttr(op.attributes["sym_name"]).value:
            op.get_asm(enable_debug_info=False, use_local_scope=True, assume_verified=True)
            for op in (o.operation for o in module.body.operations)
            if op.name == kind and op.regions[0].blocks}


def test_a_pass_failing_in_a_worker_is_a_compile_error():
    """A piece's lowering fails in its worker as it would here: its diagnostics."""
    orphan = (b"llvm.mlir.global external constant @__xlac_constant_0() "
              b"{addr_space = 0 : i32} : !llvm.array<4 x f32>\n")
    piece = pieces.Piece("piece1", orphan, "key", (), ("xla-constant-table",))
    worker = pieces._Worker()
    try:
        with pytest.raises(CompileError, match="constant globals without"):
            worker.compile(piece, 3)
        assert worker.alive()
    finally:
        worker.end_requests()
        worker.close()


@pytest.mark.usefixtures("small_is_big")
def test_an_entry_long_enough_for_parts_is_split_on_the_llvm_dialect(monkeypatch):
    """xla-split-long-blocks' parts go to other pieces only when the split follows it."""
    from test_pieces import _transpose_dot_chain

    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.options import Options
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.target import CPU
    module = parse_module(new_context(), _transpose_dot_chain(4).encode(), "chain.mlir")
    run_passes(module, CPU.steps_until("bufferized", "main", Options.from_env()))
    run_passes(module, ["xla-inline-schedule-calls", "inline", early_pieces.CUT_AFTER])
    assert early_pieces.function_texts(module, "main") is not None
    monkeypatch.setattr(early_pieces, "LONG_ENTRY_OPS", 8)
    assert early_pieces.function_texts(module, "main") is None


def test_an_entry_long_in_constants_alone_is_not_long(monkeypatch):
    """Constants become next to nothing in the LLVM dialect (most are copied
    into the kernels): an entry is long by its other ops."""
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    monkeypatch.setattr(early_pieces, "LONG_ENTRY_OPS", 8)

    def entry(constants: int, copies: int) -> str:
        lines = ["func.func @main(%a: memref<4xf32>, %b: memref<4xf32>) {"]
        lines += [f"  %c{i} = arith.constant {i} : index" for i in range(constants)]
        lines += ["  memref.copy %a, %b : memref<4xf32> to memref<4xf32>"] * copies
        return "\n".join(lines + ["  return", "}"])
    for constants, copies, long in ((20, 3, False), (0, 9, True), (20, 9, True), (3, 3, False)):
        module = parse_module(new_context(), entry(constants, copies).encode(), "entry.mlir")
        assert early_pieces._long_entry(module, "main") is long, (constants, copies)


@pytest.mark.usefixtures("small_is_big")
def test_helpers_the_workers_define_stay_in_their_piece(lowered_in_workers):
    """xla-expm1-to-libm defines a helper in every piece with an expm1: the
    copies are internal, so the pieces still link."""
    scales = [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625]
    program = _layers(scales).replace("stablehlo.tanh", "stablehlo.exponential_minus_one")
    x, w = _inputs()
    exe = _compile(program)
    assert lowered_in_workers == [True]
    want = x
    for scale in scales:
        want = np.expm1((want @ w) * np.float32(scale))
    np.testing.assert_allclose(exe(x, w), want, rtol=2e-5, atol=1e-6)


@pytest.mark.usefixtures("small_is_big")
def test_started_workers_lower_without_numpy(lowered_in_workers, monkeypatch):
    """Workers started, not forked (where the compiling process has other
    threads: a jax user's), keep numpy out (piece_worker._without_numpy):
    at x86-64-v3 erfc's merged coefficients are selects of two constants,
    which they lower to permutes of a table (xla-constant-selects-as-permutes)."""
    import xlac.mlir
    monkeypatch.setattr(xlac.mlir, "fork_is_safe", lambda: False)
    pieces._close_workers()                 # workers forked earlier have numpy
    t = "tensor<256xf32>"
    text = (f"func.func @main(%x: {t}) -> {t} {{\n  %0 = chlo.erfc %x : {t} -> {t}\n"
            f"  return %0 : {t}\n}}")
    x = np.linspace(-4, 4, 256, dtype=np.float32)
    exe = _compile(text, cpu="x86-64-v3")
    assert lowered_in_workers == [True]
    assert "llvm.x86.avx.vpermilvar.ps.256" in exe.as_text("llvm")
    np.testing.assert_allclose(exe(x), [math.erfc(v) for v in x], rtol=1e-5, atol=1e-7)


_C = "tensor<16x32xcomplex<f32>>"
_PADDED_BY_A_COMPLEX_CONSTANT = f"""
func.func public @main(%x: {_C}, %w: tensor<32x32xcomplex<f32>>) -> {_C} {{
  %c = stablehlo.constant dense<(1.5, -2.0)> : tensor<complex<f32>>
  %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : ({_C}, tensor<32x32xcomplex<f32>>) -> {_C}
  %p = stablehlo.pad %h, %c, low = [1, 0], high = [0, 0], interior = [0, 0] : ({_C}, tensor<complex<f32>>) -> tensor<17x32xcomplex<f32>>
  %s = stablehlo.slice %p [0:16, 0:32] : (tensor<17x32xcomplex<f32>>) -> {_C}
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<complex<f32>>) -> {_C}
  %y = stablehlo.multiply %s, %b : {_C}
  %e = stablehlo.exponential %y : {_C}
  return %e : {_C}
}}"""


@pytest.mark.usefixtures("small_is_big")
def test_a_piece_carries_the_globals_its_quoted_symbols_name():
    """A complex constant's buffer is `@"__constant_xcomplex<f32>"`: quoted, with
    `<` and `>` in its name (jax.scipy.linalg.funm failed: 'does not reference a
    valid global memref' in the piece that read it)."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((16, 32)) + 1j * rng.standard_normal((16, 32))).astype(np.complex64) / 4
    w = (rng.standard_normal((32, 32)) + 1j * rng.standard_normal((32, 32))).astype(np.complex64) / 8
    split = _compile(_PADDED_BY_A_COMPLEX_CONSTANT)
    whole = _compile(_PADDED_BY_A_COMPLEX_CONSTANT, pieces=False)
    assert type(split.function).__name__ == "PiecesFunction"
    np.testing.assert_array_equal(split(x, w), whole(x, w))


def test_quoted_symbols_are_named_whole():
    assert pieces_symbols('%g = memref.get_global @"__constant_xcomplex<f32>" : memref<complex<f32>>'
                          " call @xla_kernel_3.a-b(%g)") == ["__constant_xcomplex<f32>", "xla_kernel_3.a-b"]
