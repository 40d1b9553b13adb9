"""Piece workers forked by a warmed-up worker (xlac.targets.cpu.piece_siblings):
the same object code, each its own process (one's death is its piece's
diagnostic, the other goes on), and a seed that cannot fork leaves the
compiling process to start a worker itself."""

from __future__ import annotations

import os
import signal

import pytest

from xlac.errors import CompileError
from xlac.targets.cpu import pieces
from xlac.targets.cpu.piece_siblings import SiblingPipes

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"),
                                reason="siblings are watched through pidfds (Linux)")

_PROGRAM = """func.func public @main(%x: tensor<16x32xf32>, %w: tensor<32x32xf32>) -> tensor<16x32xf32> {
  %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %t = stablehlo.tanh %h : tensor<16x32xf32>
  %e = stablehlo.exponential %t : tensor<16x32xf32>
  return %e : tensor<16x32xf32>
}"""


@pytest.fixture(scope="module")
def split_pieces():
    """The pieces of a small program, split as a big one is."""
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.target import whole_pipeline
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, whole_pipeline())
    old = pieces.PIECES_MIN_BYTES
    pieces.PIECES_MIN_BYTES = 0                   # small as it is, split it
    try:
        texts = pieces.function_texts(module, "main")
    finally:
        pieces.PIECES_MIN_BYTES = old
    return pieces.split(module, "main", 2, texts)


@pytest.fixture
def seed():
    worker = pieces._Worker(siblings=1)
    yield worker
    for one in (worker, *worker.siblings):
        one.end_requests()
    for one in (worker, *worker.siblings):
        one.close()


def test_a_sibling_makes_the_objects_this_process_makes(split_pieces, seed):
    from xlac.targets.cpu.piece_worker import compile_piece
    sibling, = seed.siblings
    assert sibling.started() and sibling.process.pid != seed.process.pid
    # a session of its own, as a started worker has: in its seed's, Linux's
    # autogroups made the two share one core's time
    assert os.getsid(sibling.process.pid) == sibling.process.pid
    for piece in split_pieces:
        expected = compile_piece(piece.bytecode, piece.external, 3)
        assert sibling.compile(piece, 3)[0] == expected
        assert seed.compile(piece, 3)[0] == expected


def test_a_sibling_that_dies_is_its_pieces_error_and_the_seed_goes_on(split_pieces, seed):
    sibling, = seed.siblings
    assert sibling.started()
    sibling.process.kill()
    assert not sibling.alive()
    with pytest.raises(CompileError, match="the process compiling piece1 of the program died"):
        sibling.compile(split_pieces[1], 3)
    assert seed.compile(split_pieces[1], 3)


def test_a_seed_that_dies_leaves_its_sibling_working(split_pieces, seed):
    sibling, = seed.siblings
    assert sibling.started()
    seed.process.kill()
    seed.process.wait()
    assert sibling.alive() and sibling.compile(split_pieces[1], 3)


def test_workers_closed_together_end_cleanly(seed):
    """Every input closes first, so a seed is not killed waiting for its sibling
    (whose CPU is then counted with this process's children, as the seed's)."""
    sibling, = seed.siblings
    assert sibling.started()
    pid = sibling.process.pid
    pieces._IDLE.extend([seed, sibling])
    pieces._close_workers()
    assert seed.process.returncode == 0           # it exited, having reaped its sibling
    assert not os.path.exists(f"/proc/{pid}")


def test_a_sibling_never_forked_is_replaced(split_pieces, monkeypatch):
    """A seed of several threads closes its siblings' pipes unforked: the
    compiling process then starts a worker of its own for the piece."""
    pipes_of = SiblingPipes()
    pipes_of.close_theirs()                       # as a seed that did not fork leaves them
    unforked = pieces._Worker._of(pipes_of.sibling(), pipes_of.errors)
    assert not unforked.started() and not unforked.alive()
    monkeypatch.setattr(pieces, "_IDLE", [unforked])
    try:
        assert pieces._compile_on_worker(split_pieces[1], 3)
        assert unforked not in pieces._IDLE and len(pieces._IDLE) == 1
    finally:
        pieces._close_workers()


def test_a_seed_of_several_threads_forks_no_sibling(monkeypatch):
    """It closes the siblings' pipes instead, which the compiling process sees."""
    from xlac.targets.cpu import piece_worker
    monkeypatch.setattr(piece_worker, "_threads", lambda: 2)
    pipes_of = SiblingPipes()
    handed = [os.dup(fd) for fd in pipes_of.theirs()]      # the seed's copies
    pipes_of.close_theirs()
    assert piece_worker._fork_siblings([tuple(handed)], answers=None) is None
    for fd in handed:
        with pytest.raises(OSError):
            os.fstat(fd)                                   # closed
    assert not pipes_of.sibling().started()


_COMPILING_PROCESS = """
import os, time
from xlac.targets.cpu import pieces
seed = pieces._Worker(siblings=1)
sibling, = seed.siblings
assert sibling.started()
holder = os.fork()                  # holds the sibling's pipes open: no end of requests
if holder == 0:
    time.sleep(60)
    os._exit(0)
print(sibling.process.pid, holder, flush=True)
time.sleep(60)
"""


def test_a_sibling_ends_with_the_compiling_process():
    """As a started worker does (its seed dies with its parent), though its own
    parent is the seed: killed, the compiling process leaves no worker behind."""
    import subprocess
    import sys
    import time
    process = subprocess.Popen([sys.executable, "-c", _COMPILING_PROCESS], stdout=subprocess.PIPE)
    try:
        pid, holder = map(int, process.stdout.readline().split())
    finally:
        process.kill()
        process.wait()
    try:
        deadline = time.monotonic() + 10
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running(pid)
    finally:
        os.kill(holder, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
