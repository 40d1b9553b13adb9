"""Targets are data: every stage of every target reachable through
``exe.as_text`` and ``xla-opt``, capabilities instead of names, and the
reference interpreter behind the same ``Executable``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import xlac
from conftest import REPO
from xlac.artifact import container
from xlac.options import Options
from xlac.targets import TARGETS, get_target
from xlac.tools.xla_opt import main as xla_opt

SOFTMAX = (REPO / "examples" / "softmax.mlir").read_text()
STAGES = [(name, stage) for name in TARGETS for stage in get_target(name).stage_names()]


@pytest.fixture(scope="module")
def executables():
    return {name: xlac.compile(SOFTMAX, target=name, cache=False) for name in TARGETS}


@pytest.mark.parametrize(("target", "stage"), STAGES, ids=[f"{t}-{s}" for t, s in STAGES])
def test_every_stage_of_every_target_in_as_text(executables, target, stage):
    text = executables[target].as_text(stage)
    if get_target(target).stage(stage).code:
        assert ".target sm_90" in text                    # the only code stage: cuda's ptx
    else:
        assert "func.func" in text or "llvm.func" in text


@pytest.mark.parametrize(("target", "stage"), STAGES, ids=[f"{t}-{s}" for t, s in STAGES])
def test_every_stage_of_every_target_in_xla_opt(executables, target, stage, tmp_path, capsys):
    source = tmp_path / "softmax.mlir"
    source.write_text(SOFTMAX)
    assert xla_opt([str(source), f"--target={target}", f"--xla-stage={stage}"]) == 0
    assert capsys.readouterr().out.strip() == executables[target].as_text(stage).strip()


def test_stage_names_and_pipelines_come_from_the_tables(executables):
    for name in TARGETS:
        target = get_target(name)
        assert executables[name].stages == target.stage_names()
        assert target.stage_names()[:2] == ["input", "stablehlo"]
        steps = target.pipeline("main", Options())
        assert steps == [s for stage in target.pass_stages() for s in stage.steps("main", Options())]
    cuda = get_target("cuda")
    assert cuda.stage_names()[2:4] == get_target("cpu").stage_names()[2:4] == ["fused", "linalg"]
    assert "xla-check-support{target=cuda}" in cuda.stage_steps("main", Options())["stablehlo"]


def test_an_unknown_stage_names_the_targets_stages(executables):
    with pytest.raises(xlac.CompileError, match="no stage 'gpu' on target cpu") as info:
        executables["cpu"].as_text("gpu")
    assert "bufferized, llvm" in info.value.hint
    with pytest.raises(xlac.CompileError, match="no stage 'llvm' on target cuda"):
        executables["cuda"].as_text("llvm")


def test_the_default_stage_is_the_targets_last(executables):
    assert executables["cpu"].as_text() == executables["cpu"].as_text("llvm")
    assert executables["cuda"].as_text() == executables["cuda"].as_text("ptx")


def test_the_reference_target_runs_the_interpreter_behind_an_executable(executables):
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    want = executables["cpu"](x)
    got = executables["reference"](x)
    assert got.dtype == np.float32 and got.shape == (4, 8)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    assert repr(executables["reference"]) == "<xlac.Executable target=reference (f32[4,8]) -> (f32[4,8])>"


def test_the_reference_target_is_exact_where_xlac_approximates():
    program = """func.func @main(%x: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xi1>) {
      %e = stablehlo.exponential %x : tensor<3xf64>
      %t = stablehlo.constant dense<true> : tensor<3xi1>
      %s = stablehlo.add %t, %t : tensor<3xi1>
      return %e, %s : tensor<3xf64>, tensor<3xi1>
    }"""
    exe = xlac.compile(program, target="reference")
    e, s = exe(np.array([0.0, 1.0, -2.0]))
    np.testing.assert_array_equal(e, np.exp([0.0, 1.0, -2.0]))
    assert s.tolist() == [True, True, True]            # boolean add is logical or


def test_reference_executables_serialize_and_load(executables):
    blob = executables["reference"].serialize()
    again = xlac.deserialize(blob, target="reference")
    x = np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(again(x), executables["reference"](x))
    assert again.stages == ["stablehlo"]
    with pytest.raises(xlac.ArtifactError, match="built for target 'reference'"):
        xlac.deserialize(blob, target="cpu")


def test_capabilities_decide_not_names(executables):
    assert get_target("cpu").aot and not get_target("cuda").aot
    with pytest.raises(xlac.CompileError, match="cannot profile this reference executable"):
        executables["reference"].profile(np.ones((4, 8), np.float32))
    assert not get_target("reference").in_process and get_target("reference").device_kind == "interpreter"
    assert get_target("cuda").device_kind == "gpu"


def test_a_loaded_cuda_program_keeps_its_kernels_and_ptx(executables):
    again = xlac.deserialize(executables["cuda"].serialize(), target="cuda")
    assert again.stages == ["kernels", "gpu", "ptx"]
    assert again.as_text("ptx") == executables["cuda"].as_text("ptx")
    with pytest.raises(xlac.CompileError, match="was loaded"):
        again.as_text("linalg")


def test_a_cuda_artifact_is_checked_like_any_other(executables):
    blob = executables["cuda"].serialize()
    damaged = bytearray(blob)
    damaged[10] ^= 1
    with pytest.raises(xlac.ArtifactError, match="checksum mismatch"):
        xlac.deserialize(bytes(damaged), target="cuda")
    with pytest.raises(xlac.ArtifactError, match="no entry 'other'"):
        xlac.deserialize(blob, entry="other", target="cuda")
    code, metadata = container.unpack(blob)
    wrong = container.pack(json.dumps({"format": "xlac-cuda-0"}).encode(), metadata)
    with pytest.raises(xlac.ArtifactError, match="format 'xlac-cuda-0'"):
        xlac.deserialize(wrong, target="cuda")


def test_an_entry_symbol_the_library_lacks_is_an_artifact_error(executables):
    library, metadata = container.unpack(executables["cpu"].serialize())
    metadata["entries"]["main"]["symbol"] = "no_such_symbol"
    with pytest.raises(xlac.ArtifactError, match="names entry symbol 'no_such_symbol', which its "
                                                 "library lacks"):
        xlac.deserialize(container.pack(library, metadata))


def test_an_unknown_target_is_named():
    with pytest.raises(xlac.CompileError, match="unknown target 'tpu'") as info:
        xlac.compile(SOFTMAX, target="tpu")
    assert info.value.hint == "targets: cpu, cuda, reference"
