"""Micro-kernels a compile calls built ahead on an idle piece worker
(xlac.targets.cpu.kernel_builds): the same bytes the compiling process would
build, the same results; a piece waits for the worker out on that job; the
stage runner's cuts that only look."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_pieces import _compile, small_is_big  # noqa: F401 - a fixture

from xlac.context import new_context
from xlac.cpu_model import cpu_model
from xlac.mlir import ir
from xlac.targets.cpu import kernel_builds, micro_kernels, piece_worker, pieces
from xlac.targets.cpu.piece_modules import Piece

_A, _B, _C = "tensor<64x128xf32>", "tensor<128x64xf32>", "tensor<64x64xf32>"


def _scaled_dots(count: int) -> str:
    """The sum of (a * 2^-k) @ b over k: 64 x 128 x 64 matmuls, which call a micro-kernel."""
    lines = [f"func.func public @main(%a: {_A}, %b: {_B}) -> {_C} {{"]
    for k in range(count):
        lines += [f"  %s{k} = stablehlo.constant dense<{0.5 ** k}> : {_A}",
                  f"  %m{k} = stablehlo.multiply %a, %s{k} : {_A}",
                  f"  %d{k} = stablehlo.dot_general %m{k}, %b, contracting_dims = [1] x [0]"
                  f" : ({_A}, {_B}) -> {_C}"]
        if k:
            lines.append(f"  %d{k}s = stablehlo.add %d{k - 1}{'s' if k > 1 else ''}, %d{k} : {_C}")
    lines += [f"  return %d{count - 1}{'s' if count > 1 else ''} : {_C}", "}"]
    return "\n".join(lines)


def _checked(cache_dir) -> None:
    """The program compiled in pieces at x86-64-v3 into ``cache_dir``, run against numpy."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 128), np.float32), rng.standard_normal((128, 64), np.float32)
    exe = _compile(_scaled_dots(3), cache_dir=cache_dir, cpu="x86-64-v3")
    assert type(exe.function).__name__ == "PiecesFunction"
    expected = sum((a * np.float32(0.5 ** k)) @ b for k in range(3))
    np.testing.assert_allclose(exe(a, b), expected, rtol=1e-4, atol=1e-4)


@pytest.fixture
def built_here(monkeypatch):
    """The micro-kernels the compiling process compiles itself."""
    names: list[str] = []
    real = micro_kernels.compiled
    monkeypatch.setattr(micro_kernels, "compiled",
                        lambda text, name, level: names.append(name) or real(text, name, level))
    return names


@pytest.fixture
def sent(monkeypatch):
    """The micro-kernels each compile sent to a worker."""
    names: list[list[str]] = []
    real = kernel_builds.build_ahead
    monkeypatch.setattr(kernel_builds, "build_ahead",
                        lambda *args: names.append(real(*args)) or names[-1])
    from xlac.targets.cpu import compile as cpu_compile
    monkeypatch.setattr(cpu_compile, "build_ahead", kernel_builds.build_ahead)
    return names


@pytest.mark.usefixtures("small_is_big")
def test_an_empty_cache_has_its_micro_kernels_built_on_a_worker(tmp_path, built_here, sent):
    _checked(tmp_path)
    assert sent and sent[0], "no micro-kernel was sent to a worker"
    assert built_here == []                          # none was built in this process
    features = cpu_model("x86-64-v3").features
    for name in sent[0]:
        kept = micro_kernels.kept_path(name, features, tmp_path)
        assert kept.read_bytes() == micro_kernels.compiled(
            micro_kernels.kernel_text(name, "x86-64-v3"), name, "x86-64-v3")   # the same object
        assert name in micro_kernels.BUILT
    assert pieces._OUT_FOR_JOBS == [0]               # the worker came back


@pytest.mark.usefixtures("small_is_big")
def test_without_an_idle_worker_the_link_builds_them(tmp_path, built_here, sent, monkeypatch):
    monkeypatch.setattr(pieces, "lend_for_job", lambda: None)
    _checked(tmp_path)
    assert sent == [[]] and built_here                # built here, at the link, as before


def test_kept_kernels_are_not_sent(tmp_path):
    features = cpu_model("x86-64-v3").features
    name = micro_kernels.symbol(4, 16)
    micro_kernels.object_path(name, features, tmp_path)           # built and kept
    module = ir.Module.parse(f"func.func private @{name}(i64)\nfunc.func private @other(i64)\n",
                             new_context())
    assert kernel_builds.called_kernels(module) == [name]
    assert kernel_builds.build_ahead(module, features, tmp_path) == []


def _tiny_piece() -> Piece:
    with new_context() as context:
        buffer = io.BytesIO()
        ir.Module.parse(piece_worker._WARM_UP, context).operation.write_bytecode(buffer)
    return Piece("piece0", buffer.getvalue(), "key", ())


def test_a_piece_waits_for_the_worker_out_on_a_job(monkeypatch):
    pieces.start_workers(1)
    lent = pieces.lend_for_job()
    assert lent is not None
    with pieces._IDLE_LOCK:
        others = list(pieces._IDLE)
        pieces._IDLE.clear()                       # the lent one is the only worker
    monkeypatch.setattr(pieces, "_Worker", lambda *a, **k: pytest.fail("a new worker was started"))
    done: list = []
    thread = threading.Thread(target=lambda: done.append(pieces._compile_on_worker(_tiny_piece(), 3)))
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive() and not done            # waiting, not starting another worker
    pieces.returned(lent)
    thread.join(60)
    assert done and done[0][0]                       # compiled by the worker that came back
    assert pieces._OUT_FOR_JOBS == [0] and lent in pieces._IDLE
    with pieces._IDLE_LOCK:
        pieces._IDLE.extend(others)


def test_a_cut_that_only_looks_lets_the_stage_go_on():
    from xlac.options import Options
    from xlac.pipeline.runner import StageRunner
    module = ir.Module.parse("func.func private @unused()\nfunc.func @main() {\n  return\n}\n",
                             new_context())
    seen = []

    def look(module, rest):
        seen.append(("look", rest))
        return False

    def take(module, rest):
        seen.append(("take", rest))
        return True
    runner = StageRunner(Options.from_env().replace(progress="off", verify_each=False))
    runner.run(module, "test", ["canonicalize", "cse", "symbol-dce"], [("canonicalize", look), ("cse", take)])
    assert seen == [("look", ["cse", "symbol-dce"]), ("take", ["symbol-dce"])]
    assert "@unused" in str(module)                  # taken: symbol-dce did not run here
    runner.run(module, "test", ["canonicalize", "cse", "symbol-dce"], [("cse", look)])
    assert "@unused" not in str(module)              # looked at only: the stage ran whole


def test_a_failed_build_on_the_worker_leaves_the_kernel_to_the_link(tmp_path):
    pieces.start_workers(1)
    features = cpu_model("x86-64-v3").features
    name = micro_kernels.symbol(3, 16)
    module = ir.Module.parse(f"func.func private @{name}(i64)\n", new_context())
    real = micro_kernels.kernel_text
    try:
        micro_kernels.kernel_text = lambda *args: "not mlir"
        assert kernel_builds.build_ahead(module, features, tmp_path) == [name]
    finally:
        micro_kernels.kernel_text = real
    path = micro_kernels.object_path(name, features, tmp_path)   # waits, then builds it here
    assert Path(path).read_bytes() == micro_kernels.compiled(real(name, "x86-64-v3"), name, "x86-64-v3")
    assert pieces._OUT_FOR_JOBS == [0]


@pytest.fixture
def started(monkeypatch):
    """The worker counts each compile asked ``pieces.start_workers`` for."""
    counts: list[int] = []
    real = pieces.start_workers
    monkeypatch.setattr(pieces, "start_workers", lambda count: counts.append(count) or real(count))
    return counts


def _cores(monkeypatch, busy: bool) -> None:
    """Whether other processes keep the cores busy, as the compile sees it (not the machine's load)."""
    from xlac.targets.cpu import compile as cpu_compile
    monkeypatch.setattr(cpu_compile, "cores_busy_elsewhere", lambda: busy)


def test_a_small_programs_kernels_are_built_on_a_worker_of_their_own(tmp_path, built_here, sent, started,
                                                                    monkeypatch):
    """A program too small for pieces (one JIT) that calls a micro-kernel, on a
    cache that keeps none of its level, a core idle: one worker started at ingest builds it."""
    _cores(monkeypatch, busy=False)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 128), np.float32), rng.standard_normal((128, 64), np.float32)
    exe = _compile(_scaled_dots(1), cache_dir=tmp_path, cpu="x86-64-v3")
    assert type(exe.function).__name__ == "CpuFunction"          # not in pieces
    assert started == [1] and sent and sent[0]                    # one worker, the kernels sent
    assert built_here == []                                       # none built in this process
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-4, atol=1e-4)
    assert pieces._OUT_FOR_JOBS == [0]
    started.clear()
    sent.clear()
    exe = _compile(_scaled_dots(1), cache_dir=tmp_path, cpu="x86-64-v3")   # the library warm now
    assert started == [] and sent == [] and built_here == []
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_on_busy_cores_a_small_programs_kernels_are_built_by_the_jit(tmp_path, built_here, sent, started,
                                                                     monkeypatch):
    _cores(monkeypatch, busy=True)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 128), np.float32), rng.standard_normal((128, 64), np.float32)
    exe = _compile(_scaled_dots(1), cache_dir=tmp_path, cpu="x86-64-v3")
    assert started == [] and sent == [] and built_here                 # here, as before
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-4, atol=1e-4)


def test_the_library_is_cold_only_for_a_contraction_and_no_kernel_of_the_level(tmp_path):
    features = cpu_model("x86-64-v3").features
    dot = ir.Module.parse(_scaled_dots(1), new_context())
    add = ir.Module.parse(f"func.func @main(%a: {_A}) -> {_A} {{\n  %0 = stablehlo.add %a, %a : {_A}\n"
                          f"  return %0 : {_A}\n}}\n", new_context())
    assert kernel_builds.library_cold(dot, features, tmp_path)
    assert not kernel_builds.library_cold(add, features, tmp_path)               # no contraction
    micro_kernels.object_path(micro_kernels.symbol(2, 16), features, tmp_path)   # one kernel kept
    assert not kernel_builds.library_cold(dot, features, tmp_path)
    assert kernel_builds.library_cold(dot, features, tmp_path / "other")          # another cache


def _within(seconds: float, call):
    """``call()``'s value, failing (not hanging) if it has not ended within ``seconds``."""
    done: list = []
    thread = threading.Thread(target=lambda: done.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"not done within {seconds} s"
    return done[0]


def test_a_worker_started_at_ingest_serves_the_kernels_then_the_pieces(tmp_path, built_here, sent, started,
                                                                      monkeypatch):
    """A program small as StableHLO (``likely_big`` says no: no piece workers at
    ingest) that calls micro-kernels and turns out big at the machine code (as
    ``jnp.convolve`` of 5,120 by 1,280 points did, 247 MB of LLVM dialect): the
    worker started for the kernels at ingest builds them, then compiles pieces
    beside a worker the pieces start; the compile ends, right, the worker back."""
    _cores(monkeypatch, busy=False)
    monkeypatch.setattr(pieces, "likely_big", lambda module: False)
    monkeypatch.setattr(pieces, "PIECES_MIN_BYTES", 0)             # in pieces at the machine code
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((64, 128), np.float32), rng.standard_normal((128, 64), np.float32)
    exe = _within(240, lambda: _compile(_scaled_dots(3), cache_dir=tmp_path, cpu="x86-64-v3"))
    assert type(exe.function).__name__ == "PiecesFunction"
    assert started == [1] and sent and sent[0] and built_here == []
    np.testing.assert_allclose(exe(a, b), sum((a * np.float32(0.5 ** k)) @ b for k in range(3)),
                               rtol=1e-4, atol=1e-4)
    assert pieces._OUT_FOR_JOBS == [0]
