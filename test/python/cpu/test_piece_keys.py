"""A piece's key holds the text of each op copied into it (declarations of
other pieces' kernels, globals), printed alone (``piece_modules._local_text``):
the same text the printer gave in the piece's scope, so the same keys, without
walking the whole piece for each small op."""

from __future__ import annotations

from test_early_pieces import _texts, outlined_layers

from xlac.targets.cpu import early_pieces, piece_modules


def test_copies_print_alone_as_in_their_piece(monkeypatch):
    seen: list[str] = []
    real = piece_modules._local_text

    def same_as_in_scope(op):
        text = real(op)
        assert text == op.get_asm(enable_debug_info=False, assume_verified=True)
        seen.append(op.name)
        return text

    monkeypatch.setattr(piece_modules, "_local_text", same_as_in_scope)
    module, rest = outlined_layers()
    found = early_pieces.split(module, "main", 4, _texts(module), rest, 0)
    again = early_pieces.split(module, "main", 4, _texts(module), rest, 0)
    assert len(found) >= 2 and "func.func" in seen           # the entry declares the kernels
    assert [p.key for p in found] == [p.key for p in again]
    assert len({p.key for p in found}) == len(found)
