"""A big program's pieces handed to the workers as they are made (largest
first), so the workers compile the first while the compiling process makes
the rest: the same pieces, the same linked code, in any order they are made
(xlac.targets.cpu.early_pieces.made_largest_first, pieces.compile_pieces)."""

from __future__ import annotations

import hashlib
import threading

import numpy as np
import pytest
from test_pieces import _compile, _expected, _inputs, _layers, small_is_big  # noqa: F401 - a fixture

from xlac.targets.cpu import early_pieces, pieces

_SCALES = [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625]


def _linked_code(exe) -> str:
    assert type(exe.function).__name__ == "PiecesFunction"
    return hashlib.sha256(exe.function._object).hexdigest()


@pytest.mark.usefixtures("small_is_big")
def test_a_worker_gets_the_first_piece_before_the_last_is_made(monkeypatch):
    """Each piece after the first is made only once a worker has the first
    (they wait up to 5 s for it): made all before any is handed out, the
    first would reach a worker only after that wait."""
    first_handed = threading.Event()
    waited: list[bool] = []
    real_make, real_compile = early_pieces.make_piece, pieces._compile_on_worker

    def make(*args, **kwargs):
        if waited or first_handed.is_set() or not _is_first_call(make):
            waited.append(first_handed.wait(timeout=5))
        return real_make(*args, **kwargs)

    def compile_on_worker(piece, level):
        first_handed.set()
        return real_compile(piece, level)
    monkeypatch.setattr(early_pieces, "make_piece", make)
    monkeypatch.setattr(pieces, "_compile_on_worker", compile_on_worker)
    x, w = _inputs()
    exe = _compile(_layers(_SCALES), cpu="x86-64-v3")
    assert waited and all(waited)
    np.testing.assert_allclose(exe(x, w), _expected(_SCALES, x, w), rtol=2e-5, atol=1e-6)


def _is_first_call(function) -> bool:
    """True on ``function``'s first call only."""
    first = not getattr(function, "called", False)
    function.called = True
    return first


@pytest.mark.usefixtures("small_is_big")
def test_the_order_pieces_are_made_in_leaves_the_code_as_it_is(monkeypatch):
    """Smallest first or largest first: the same pieces, linked in the same
    order (by name), the same bytes."""
    made: list[str] = []
    real_make = early_pieces.make_piece
    monkeypatch.setattr(early_pieces, "make_piece",
                        lambda *a, **k: made.append(a[4]) or real_make(*a, **k))
    largest_first = _linked_code(_compile(_layers(_SCALES), cpu="x86-64-v3"))
    in_order = list(made)
    real_order = pieces.largest_first
    monkeypatch.setattr(pieces, "largest_first", lambda groups, texts:
                        list(reversed(real_order(groups, texts))))
    made.clear()
    smallest_first = _linked_code(_compile(_layers(_SCALES), cpu="x86-64-v3"))
    assert len(in_order) > 2 and made == list(reversed(in_order))
    assert smallest_first == largest_first


def test_groups_are_made_largest_first_by_their_functions_text():
    groups = [["main"], ["a", "b"], ["c"], ["d"]]
    texts = {"main": "x" * 10, "a": "x" * 5, "b": "x" * 7, "c": "x" * 30, "d": "x" * 10}
    assert pieces.largest_first(groups, texts) == [2, 1, 0, 3]   # ties: in their order


def test_a_list_of_pieces_is_handed_out_largest_first(monkeypatch, tmp_path):
    """The split of the LLVM dialect is a list: handed out by bytecode size,
    linked by name."""
    handed: list[str] = []
    monkeypatch.setattr(pieces, "_compile_on_worker",
                        lambda piece, level: handed.append(piece.name) or (b"", ()))
    monkeypatch.setattr(pieces, "_link_relocatable",
                        lambda paths, output: handed.append([p.rsplit("/", 1)[1] for p in paths]))
    found = [pieces.Piece(f"piece{i}", b"x" * size, f"key{i}", ()) for i, size in
             enumerate([3, 9, 1, 5])]
    pieces.compile_pieces(found, tmp_path, workers=1)
    assert handed == ["piece1", "piece3", "piece0", "piece2",
                      ["piece0.o", "piece1.o", "piece2.o", "piece3.o"]]
