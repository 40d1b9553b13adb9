"""Machine code in pieces: kernels outlined, identical ones shared, big
programs compiled by worker processes piece by piece, each piece cached by
its content (xla-outline-kernels, xlac.targets.cpu.pieces)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac.cache import CompilationCache
from xlac.errors import CompileError
from xlac.options import Options
from xlac.targets.cpu import pieces

_T = "tensor<16x32xf32>"


def _layers(scales: list[float]) -> str:
    """A layer per scale: x = tanh(x @ w * s); the layers differ only in s."""
    lines = [f"func.func public @main(%x0: {_T}, %w: tensor<32x32xf32>) -> {_T} {{"]
    for k, scale in enumerate(scales):
        x, y = f"%x{k}", f"%x{k + 1}"
        lines += [
            f"  %h{k} = stablehlo.dot_general {x}, %w, contracting_dims = [1] x [0]"
            f" : ({_T}, tensor<32x32xf32>) -> {_T}",
            f"  %c{k} = stablehlo.constant dense<{scale:.3f}> : {_T}",
            f"  %s{k} = stablehlo.multiply %h{k}, %c{k} : {_T}",
            f"  {y} = stablehlo.tanh %s{k} : {_T}"]
    lines += [f"  return %x{len(scales)} : {_T}", "}"]
    return "\n".join(lines)


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((16, 32)).astype(np.float32),
            (rng.standard_normal((32, 32)) / 8).astype(np.float32)]


def _expected(scales, x, w):
    for scale in scales:
        x = np.tanh((x @ w) * np.float32(scale))
    return x


@pytest.fixture
def small_is_big(monkeypatch):
    """Every program goes into pieces, however small."""
    monkeypatch.setattr(pieces, "PIECES_MIN_BYTES", 0)


@pytest.fixture
def compiled_pieces(monkeypatch):
    """The names of the pieces the workers compile (cache hits are not)."""
    names: list[str] = []
    real = pieces._compile_on_worker
    monkeypatch.setattr(pieces, "_compile_on_worker",
                        lambda piece, level: names.append(piece.name) or real(piece, level))
    return names


def _compile(text: str, **changes) -> xlac.Executable:
    options = Options.from_env().replace(**{"cache_dir": None, "progress": "off", **changes})
    return xlac.compile(text, options=options, cache=False)


def test_identical_layers_share_one_kernel_function():
    scales = [0.5] * 6
    text = _compile(_layers(scales)).as_text("llvm")
    calls = text.count("llvm.call @xla_kernel_")
    defined = text.count("llvm.func @xla_kernel_")
    assert calls >= 12 and defined <= 3, (calls, defined)   # six layers, one set of kernels


def test_pieces_compute_what_one_jit_computes(small_is_big):
    scales = [0.5, 0.25, 0.125, 0.5]
    x, w = _inputs()
    split = _compile(_layers(scales))
    whole = _compile(_layers(scales), pieces=False)
    assert type(split.function).__name__ == "PiecesFunction"
    assert type(whole.function).__name__ == "CpuFunction"
    np.testing.assert_array_equal(split(x, w), whole(x, w))
    np.testing.assert_allclose(split(x, w), _expected(scales, x, w), rtol=2e-5, atol=2e-5)


def test_the_c_wrapper_compiled_ahead_is_the_one_linked(small_is_big, monkeypatch):
    """A big program's C wrapper is compiled while the passes run; the link
    takes that object, and a wrapper of other sources is never taken."""
    from xlac.targets.cpu import serialize
    monkeypatch.setattr(pieces, "likely_big", lambda module: True)
    taken = []
    real = serialize.WrapperObject.object_for
    monkeypatch.setattr(serialize.WrapperObject, "object_for",
                        lambda self, sources: taken.append(real(self, sources)) or taken[-1])
    scales = [0.5, 0.25]
    x, w = _inputs()
    exe = _compile(_layers(scales))
    assert len(taken) == 1 and taken[0] is not None and taken[0].suffix == ".o"
    np.testing.assert_allclose(exe(x, w), _expected(scales, x, w), rtol=2e-5, atol=2e-5)
    ahead = serialize.WrapperObject("xlac", "main", exe.signature, pieces.LIBRARY_ORIGIN)
    other = (ahead.sources[0], ahead.sources[1] + "\n")
    assert ahead.object_for(other) is None and ahead.object_for(ahead.sources) is not None


def test_a_program_in_pieces_serializes_and_loads(small_is_big, tmp_path):
    scales = [0.5, 0.25]
    x, w = _inputs()
    exe = _compile(_layers(scales))
    again = xlac.deserialize(exe.serialize())
    np.testing.assert_array_equal(again(x, w), exe(x, w))
    from xlac.aot import compile_library
    library = tmp_path / "liblayers.so"
    compile_library(_layers(scales).encode(), "layers.mlir", library,
                    options=Options.from_env().replace(cache_dir=None, progress="off"))
    np.testing.assert_array_equal(xlac.load(library)(x, w), exe(x, w))


def test_a_changed_layer_recompiles_only_its_pieces(small_is_big, compiled_pieces, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    scales = [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625]
    first = _compile(_layers(scales), cache_dir=cache)
    everything = list(compiled_pieces)
    assert len(everything) >= 3
    from xlac import cache as cache_module
    cache_module.flush()
    compiled_pieces.clear()
    changed = [*scales[:-1], 0.75]                      # the last layer's constant only
    second = _compile(_layers(changed), cache_dir=cache)
    assert 1 <= len(compiled_pieces) < len(everything), (compiled_pieces, everything)
    x, w = _inputs()
    np.testing.assert_allclose(second(x, w), _expected(changed, x, w), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(first(x, w), _expected(scales, x, w), rtol=2e-5, atol=2e-5)
    assert CompilationCache.open(cache) is not None


def test_small_programs_take_one_jit(compiled_pieces):
    exe = _compile(_layers([0.5]))
    assert type(exe.function).__name__ == "CpuFunction" and not compiled_pieces


def test_a_worker_that_dies_is_a_compile_error(small_is_big):
    exe_text = _layers([0.5, 0.25])
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.target import whole_pipeline
    module = parse_module(new_context(), exe_text.encode(), "layers.mlir")
    run_passes(module, whole_pipeline())
    piece = pieces.split(module, "main", 2, pieces.function_texts(module, "main"))[1]
    worker = pieces._Worker()
    worker.process.kill()
    worker.process.wait()
    with pytest.raises(CompileError, match="the process compiling piece1 of the program died"):
        worker.compile(piece, 3)


def test_a_worker_without_numpy_makes_the_objects_this_process_makes(small_is_big):
    """Workers keep numpy out (a third of their start-up); the code is the same."""
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.piece_worker import compile_piece
    from xlac.targets.cpu.target import whole_pipeline
    module = parse_module(new_context(), _layers([0.5, 0.25]).encode(), "layers.mlir")
    run_passes(module, whole_pipeline())
    worker = pieces._Worker()
    try:
        for piece in pieces.split(module, "main", 2, pieces.function_texts(module, "main")):
            assert worker.compile(piece, 3)[0] == compile_piece(piece.bytecode, piece.external, 3)
    finally:
        worker.close()


def test_a_module_with_a_mutable_global_stays_whole():
    from xlac.context import new_context
    from xlac.mlir import ir
    with new_context() as context:
        module = ir.Module.parse("""
          llvm.mlir.global internal @counter(0 : i64) : i64
          llvm.func @main() { llvm.return }
          llvm.func @other() { llvm.return }""", context)
        assert pieces.function_texts(module, "main") is None


def test_worker_warm_up_makes_an_object():
    """A worker compiles a tiny module before its first request (its imports
    and LLVM's set-up overlap the passes); the serve loop swallows a failure
    there, so it is checked here."""
    from xlac.targets.cpu import piece_worker
    piece_worker._warm_up()


def _transpose_dot_chain(pairs: int) -> str:
    """x = x^T @ w, ``pairs`` times: its kernels shared, its entry thousands of ops long."""
    t = "tensor<16x16xf32>"
    lines = [f"func.func public @main(%x0: {t}, %w: {t}) -> {t} {{"]
    for k in range(pairs):
        lines += [f"  %t{k} = stablehlo.transpose %x{k}, dims = [1, 0] : ({t}) -> {t}",
                  f"  %x{k + 1} = stablehlo.dot_general %t{k}, %w, contracting_dims = [1] x [0]"
                  f" : ({t}, {t}) -> {t}"]
    return "\n".join(lines + [f"  return %x{pairs} : {t}", "}"])


@pytest.mark.heavy            # ~45 s on 2 cores (720 ops compiled); lit's xla-split-long-blocks test is the quick one
def test_a_long_entry_is_compiled_in_parts_and_is_right():
    """xla-split-long-blocks cuts the entry of 720 transposes and dots into
    functions compiled apart (in parallel, in pieces); the result is the same.
    360 pairs: at x86-64-v3 (AVX2) each transpose is a call of its own and 300
    pairs made an entry of ~7,850 ops, under the pass's 8,000: no parts."""
    pairs = 360
    exe = _compile(_transpose_dot_chain(pairs))
    assert exe.as_text("llvm").count("llvm.func @xla_part_") >= 2
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 16)).astype(np.float32)
    w = (np.eye(16) + 0.01 * rng.standard_normal((16, 16))).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(pairs):
        want = want.T @ w
    np.testing.assert_allclose(exe(x, w), want, rtol=1e-3, atol=1e-3)


def _masks_chain(lanes: int) -> str:
    """An LLVM entry comparing and selecting ``lanes`` one-lane vectors, with
    f32 work on both sides: a vector<1xi1> per lane between them."""
    f, m = "vector<1xf32>", "vector<1xi1>"
    lines = ['llvm.func @main(%p: !llvm.ptr) attributes {target_cpu = "x86-64-v4", '
             'target_features = #llvm.target_features<[FEATURES]>} {']
    for i in range(lanes):
        lines += [f"  %x{i} = llvm.load %p : !llvm.ptr -> {f}",
                  f"  %a{i} = llvm.fmul %x{i}, %x{i} : {f}",
                  f"  %m{i} = llvm.fcmp \"olt\" %a{i}, %x{i} : {f}"]
    for i in range(lanes):
        lines += [f"  %s{i} = llvm.select %m{i}, %a{i}, %x{i} : {m}, {f}",
                  f"  %b{i} = llvm.fadd %s{i}, %s{i} : {f}",
                  f"  llvm.store %b{i}, %p : {f}, !llvm.ptr"]
    return "\n".join(lines + ["  llvm.return", "}"])


_SPLIT_AND_JIT = """
import sys
from xlac.mlir import ExecutionEngine, bare_context, ir
from xlac.pipeline.pass_manager import run_passes
with bare_context():
    module = ir.Module.parse(sys.stdin.read())
    run_passes(module, ["xla-split-long-blocks{max-ops=16 longer-than=16}"])
    assert "llvm.func @xla_part_" in str(module)
    engine = ExecutionEngine(module, opt_level=3)
    assert engine.raw_lookup("main")
"""


def test_parts_take_no_mask_vectors_an_avx512_target_would_abort_on():
    """Compiled (not run) for AVX-512 on any x86 host, in a process of its own:
    passing vector<1xi1> values to a part aborted LLVM ("Cannot emit physreg
    copy instruction") on a CNN training step's entry."""
    features = ", ".join(f'"+{f}"' for f in ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                                             "avx512dq", "avx512vl"))
    done = subprocess.run([sys.executable, "-c", _SPLIT_AND_JIT], text=True,
                          input=_masks_chain(24).replace("FEATURES", features),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


_INTERNAL_SHARED = """
llvm.func internal @dispatch(%f: !llvm.ptr) attributes {no_inline} {
  llvm.call %f() : !llvm.ptr, () -> ()
  llvm.return
}
llvm.func internal @k0_chunk() attributes {no_inline} {
  llvm.return
}
llvm.func internal @k1_chunk() attributes {no_inline} {
  llvm.return
}
llvm.func @k0() {
  %f = llvm.mlir.addressof @k0_chunk : !llvm.ptr
  llvm.call @dispatch(%f) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @k1() {
  %f = llvm.mlir.addressof @k1_chunk : !llvm.ptr
  llvm.call @dispatch(%f) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @main() {
  llvm.call @k0() : () -> ()
  llvm.call @k1() : () -> ()
  llvm.return
}
"""


def test_internal_functions_go_with_every_piece_that_uses_them():
    """The shared parallel dispatcher and the loop bodies are internal: a piece
    cannot declare them, so each piece that uses one defines its own copy, and no
    piece is made of internal functions alone (it would export nothing)."""
    from xlac.context import new_context
    from xlac.mlir import ir
    context = new_context()
    module = ir.Module.parse(_INTERNAL_SHARED, context)
    texts = {pieces._name(op.operation): str(op) for op in module.body.operations}
    for piece in pieces.split(module, "main", 4, texts):
        text = str(ir.Module.parse(piece.bytecode, context))
        exported = [name for name in ("main", "k0", "k1") if f"llvm.func @{name}() {{" in text]
        assert exported, text
        for kernel in ("k0", "k1"):
            if f"llvm.func @{kernel}() {{" in text:
                assert "llvm.func internal @dispatch" in text and f"llvm.func internal @{kernel}_chunk" in text
        assert "dispatch" not in piece.external and not any("chunk" in name for name in piece.external)
