"""Passes without options are plain subclasses of ModulePass, not dataclasses
of their own (each @dataclass cost a first compile ~0.4 ms), and behave as
the frozen dataclasses they were: no fields, equal and hashed alike, frozen.
Passes with options are frozen records (``xlac.record``), which behave alike."""

from __future__ import annotations

import dataclasses

import pytest

from xlac import record
from xlac.passes.base import ModulePass
from xlac.passes.registry import get_pass_class, pass_names


def _python_passes() -> list[type]:
    classes = [get_pass_class(name) for name in pass_names()]
    return [cls for cls in classes if isinstance(cls, type) and issubclass(cls, ModulePass)]


def test_a_pass_without_options_is_not_made_a_dataclass_again():
    remade = [cls.__name__ for cls in _python_passes()
              if not dataclasses.fields(cls) and "__dataclass_params__" in cls.__dict__]
    assert remade == []


def test_a_pass_with_options_is_a_frozen_record_of_its_own():
    """Passes with options are ``xlac.record`` records (no dataclass made per class
    as a pass module is first imported): their fields are their options, and
    ``dataclasses.fields`` still lists them (the dataclass is made when asked)."""
    with_options = [cls for cls in _python_passes() if record.fields(cls)]
    assert len(with_options) >= 30
    for cls in with_options:
        assert "__record_fields__" in cls.__dict__, cls.__name__
        assert [f.name for f in dataclasses.fields(cls)] == list(record.fields(cls)), cls.__name__
        assert cls.__dataclass_params__.frozen, cls.__name__
    made_as_dataclasses = [cls.__name__ for cls in _python_passes()
                           if "__record_fields__" not in cls.__dict__
                           and any(f.name for f in dataclasses.fields(cls))]
    assert made_as_dataclasses == []


def test_a_pass_with_options_behaves_as_its_dataclass_did():
    cls = get_pass_class("xla-apply-schedules")
    made = cls.from_options({"threads": "2", "share-kernels": "false"})
    assert made == cls(threads=2, share_kernels=False) and hash(made) == hash(cls(threads=2, share_kernels=False))
    assert made != cls(threads=3, share_kernels=False) and made != cls()
    assert repr(made) == ("ApplySchedules(threads=2, vector_bytes=0, l1d_bytes=0, "
                          "share_kernels=False, i1_vectors=True)")
    assert made.options_text() == "{threads=2 vector-bytes=0 l1d-bytes=0 share-kernels=false i1-vectors=true}"
    assert cls.from_options({"threads": "2", "share-kernels": "false"}) == made
    assert dataclasses.is_dataclass(made) and dataclasses.replace(made, threads=4).threads == 4
    assert get_pass_class("xla-verify-lowered").from_options({"dialects": "a, b"}).dialects == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.threads = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.anything = 3
    with pytest.raises(ValueError, match="expected an integer"):
        cls.from_options({"threads": "many"})
    with pytest.raises(ValueError, match="has no option 'nope'.*share-kernels"):
        cls.from_options({"nope": "1"})


def test_a_record_inherits_its_record_bases_fields_and_leaves_class_vars():
    from typing import ClassVar

    @record.record
    class Base(ModulePass):
        size: int = 1
        kind: ClassVar[str] = "not a field"

    @record.record
    class Derived(Base):
        name = "derived"
        flag: bool = False

    assert record.fields(Base) == ("size",) and record.fields(Derived) == ("size", "flag")
    assert Derived(size=2, flag=True) == Derived(2, True) and Derived(2, True) != Base(2)
    assert Derived.from_options({"size": "3", "flag": "true"}) == Derived(3, True)
    assert Derived(3).options_text() == "{size=3 flag=false}"
    with pytest.raises(dataclasses.FrozenInstanceError):
        Derived().size = 4

    @dataclasses.dataclass(frozen=True)
    class WithFields:
        size: int = 1

    with pytest.raises(TypeError, match="dataclass with fields"):
        @record.record
        class Bad(WithFields):
            other: int = 2


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


def test_a_mutable_record_is_what_dataclass_made():
    """``@record(mutable=True)`` (the fusion planner's graphs, the pipeline text's
    scanner...) is ``@dataclass``: fields assignable, equal by value, unhashable,
    a factory default made per instance; ``uncompared`` fields (a schedule
    ``Plan``'s members) are left out of equality and the hash."""
    from xlac.passes.cpu.plans.schedule_plan import Plan
    from xlac.pipeline.text import _Scanner

    one, two = _Scanner("a,b"), _Scanner("a,b")
    assert one == two and one.elements is not two.elements and one.__hash__ is None
    one.pos = 2
    assert one != two and repr(one) == "_Scanner(source='a,b', pos=2, elements=[])"
    assert [f.name for f in dataclasses.fields(one)] == ["source", "pos", "elements"]
    assert dataclasses.replace(one, pos=0) == two
    plan = Plan("xla_matmul", (8, 16), members=("a producer",))
    assert plan == Plan("xla_matmul", (8, 16)) and hash(plan) == hash(Plan("xla_matmul", (8, 16)))
    assert record.replace(plan, sequence="other").members == ("a producer",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.sequence = "other"


def test_a_compile_imports_no_dataclasses(tmp_path):
    """The pass modules' records, options and helpers are ``xlac.record`` records:
    a compile makes no dataclass and imports no ``dataclasses`` (with ``inspect``
    it was ~0.6 ms a class, 50 classes on a first compile)."""
    import os
    import subprocess
    import sys
    program = """
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8xf32> {
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %e = stablehlo.exponential %d : tensor<8x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}
"""
    code = ("import sys, xlac, numpy as np\n"
            f"exe = xlac.compile({program!r}, cache=False)\n"
            "out = exe(np.ones((8, 16), np.float32), np.ones((16, 4), np.float32))\n"
            "assert np.allclose(out, 4 * np.exp(16.0)), out\n"
            "print(sorted(m for m in ('dataclasses',) if m in sys.modules))\n")
    env = dict(os.environ, XLAC_CACHE_DIR=str(tmp_path), TMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
