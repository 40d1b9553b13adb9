"""A piece worker frees its ExecutionEngines once idle, not as each piece ends
(an engine's destructor compiles the JIT platform's own module: 2.7-2.9 ms of
each piece's CPU), and its objects are the same either way."""

from __future__ import annotations

import os
import time

import pytest
from test_pieces import _layers, small_is_big  # noqa: F401 - the fixture, used by name

from xlac.targets.cpu import piece_worker, pieces


def _tiny_piece() -> bytes:
    import io

    from xlac.mlir import ir
    with piece_worker._context() as context:
        buffer = io.BytesIO()
        ir.Module.parse(piece_worker._WARM_UP, context).operation.write_bytecode(buffer)
    return buffer.getvalue()


@pytest.fixture
def retiring(monkeypatch):
    """This process's engines retired as a serving worker's are."""
    monkeypatch.setattr(piece_worker, "_RETIRED", [])
    return piece_worker._RETIRED


def test_engines_are_kept_while_requests_come_and_freed_when_idle(retiring):
    tiny = _tiny_piece()
    first = piece_worker.compile_piece(tiny, (), 3)
    assert piece_worker.compile_piece(tiny, (), 3) == first
    assert len(retiring) == 2
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"x")                      # the compile's next piece is waiting
        piece_worker._free_retired_when_idle(read_end)
        assert len(retiring) == 2
        os.read(read_end, 1)                           # nothing more comes within IDLE_S
        start = time.monotonic()
        piece_worker._free_retired_when_idle(read_end)
        assert not retiring
        assert time.monotonic() - start >= piece_worker.IDLE_S * 0.9
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_compile_keeps_at_most_retired_max_engines(retiring, monkeypatch):
    monkeypatch.setattr(piece_worker, "RETIRED_MAX", 1)
    tiny = _tiny_piece()
    piece_worker.compile_piece(tiny, (), 3)
    piece_worker.compile_piece(tiny, (), 3)
    assert len(retiring) == 1


def test_a_worker_makes_the_same_objects_before_and_after_it_idles(small_is_big):  # noqa: F811
    """Pieces answered back to back, then again once the worker has freed their
    engines: each object is the one this process makes."""
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.target import whole_pipeline
    module = parse_module(new_context(), _layers([0.5, 0.25]).encode(), "layers.mlir")
    run_passes(module, whole_pipeline())
    split = pieces.split(module, "main", 2, pieces.function_texts(module, "main"))
    expected = [piece_worker.compile_piece(p.bytecode, p.external, 3) for p in split]
    worker = pieces._Worker()
    try:
        for _ in range(2):
            assert [worker.compile(p, 3)[0] for p in split] == expected
            time.sleep(piece_worker.IDLE_S * 5)        # idle: its engines are freed
    finally:
        worker.close()
