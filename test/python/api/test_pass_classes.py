"""Passes without options are plain subclasses of ModulePass, not dataclasses
of their own (each @dataclass cost a first compile ~0.4 ms), and behave as
the frozen dataclasses they were: no fields, equal and hashed alike, frozen."""

from __future__ import annotations

import dataclasses

import pytest

from xlac.passes.base import ModulePass
from xlac.passes.registry import get_pass_class, pass_names


def _python_passes() -> list[type]:
    classes = [get_pass_class(name) for name in pass_names()]
    return [cls for cls in classes if isinstance(cls, type) and issubclass(cls, ModulePass)]


def test_a_pass_without_options_is_not_made_a_dataclass_again():
    remade = [cls.__name__ for cls in _python_passes()
              if not dataclasses.fields(cls) and "__dataclass_params__" in cls.__dict__]
    assert remade == []


def test_a_pass_with_options_is_still_a_frozen_dataclass_of_its_own():
    with_options = [cls for cls in _python_passes() if dataclasses.fields(cls)]
    assert with_options
    for cls in with_options:
        assert cls.__dataclass_params__.frozen, cls.__name__
        assert "__dataclass_params__" in cls.__dict__, cls.__name__


def test_a_pass_without_options_behaves_as_its_dataclass_did():
    cls = get_pass_class("xla-approximate-math")
    assert "__dataclass_params__" not in cls.__dict__
    made = cls.from_options({})
    assert dataclasses.is_dataclass(made) and dataclasses.fields(made) == ()
    assert made == cls() and hash(made) == hash(cls()) and repr(made) == f"{cls.__qualname__}()"
    assert made != get_pass_class("xla-fuse")()
    assert made.options_text() == ""
    with pytest.raises(ValueError, match="has no option"):
        cls.from_options({"remarks": "true"})


@pytest.mark.parametrize("name", ["xla-approximate-math", "xla-fuse"])
def test_every_pass_stays_frozen(name):
    made = get_pass_class(name)()
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.anything = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        del made.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        ModulePass().anything = 1


def test_the_pass_modules_plain_frozen_records_are_records():
    """The frozen records of plain fields in the pass modules are ``xlac.record``
    records (no ``dataclasses`` exec per class at import), equal, hashed and
    frozen as the dataclasses they were."""
    from xlac.passes.cpu.amx_contractions import KINDS, Kind
    from xlac.passes.cpu.plans.schedule_plan import LoopNest
    from xlac.passes.fusion.plan import Rejection
    from xlac.passes.lower.builders.convolution_text import Conv
    from xlac.passes.lower.normalize_contractions import Contraction
    from xlac.pipeline.text import Element
    from xlac.targets.cpu.piece_modules import Piece
    for cls in (Kind, LoopNest, Rejection, Conv, Contraction, Element, Piece):
        assert "__record_fields__" in cls.__dict__ and "__dataclass_params__" not in cls.__dict__, cls
    piece = Piece("piece0", b"code", "key", ())
    assert piece == Piece("piece0", b"code", "key", ()) and hash(piece) == hash(Piece("piece0", b"code", "key", ()))
    assert piece != Piece("piece1", b"code", "key", ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        piece.name = "other"
    assert [f.name for f in dataclasses.fields(Piece)][:2] == ["name", "bytecode"]
    assert isinstance(KINDS["bf16"], Kind)
