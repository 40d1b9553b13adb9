"""xla-check-masked-transfers (passes/cpu/check_masked_transfers.py): the
masked reads convert-vector-to-scf lowers wrong are refused, just before it."""

import pytest

from xlac.mlir import ir
from xlac.options import Options
from xlac.passes.cpu.check_masked_transfers import mislowered_map
from xlac.targets import get_target


@pytest.mark.parametrize("results,wrong", [
    ("d3, d1", True),          # transposes, skips d2: the mask read along the wrong dim
    ("d2, d0", True),
    ("d3, d2", False),         # a permutation of the minor dims
    ("d1, d3", False),         # in order
    ("d3", False),             # one vector dim
    ("0, d3", False),          # a broadcast beside a minor dim
    ("d3, 0, d1", True),       # a broadcast does not hide the skip
])
def test_mislowered_maps(results, wrong):
    with ir.Context():
        text = f"affine_map<(d0, d1, d2, d3) -> ({results})>"
        permutation = ir.AffineMapAttr(ir.Attribute.parse(text)).value
        assert mislowered_map(permutation) == wrong


@pytest.mark.parametrize("cpu", ["x86-64-v3", "host"])
def test_check_runs_just_before_convert_vector_to_scf(cpu):
    options = Options.from_env().replace(cpu=cpu)
    steps = [s for stage in get_target("cpu").pass_stages() for s in stage.steps("main", options)]
    at = next(i for i, s in enumerate(steps) if "convert-vector-to-scf" in s)
    assert steps[at - 1] == "xla-check-masked-transfers"
