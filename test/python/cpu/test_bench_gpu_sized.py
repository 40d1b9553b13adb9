"""The GPU-sized benchmark (bench/export_gpu_sized.py, run.py --target cuda --gpu-sized) at
1/256 of its sizes: every program exports and compiles for cuda (PTX through ptxas where it is
installed), the resident-input worker runs them on the fake driver and SIMT emulator, the
harness's table comes out without a GPU, and the roofline arithmetic from fake timings."""

from __future__ import annotations

import datetime
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import programs  # noqa: E402
import report  # noqa: E402
from gpu import roofline, sized_report  # noqa: E402
from gpu.sized import SizedProgram, sized_programs  # noqa: E402

TINY = "1/256"
KERNELS = ("gelu", "bias_add", "transpose", "row_sum", "column_sum", "softmax", "layernorm",
           "matmul_f32_4096", "matmul_bf16_4096", "matmul_f16_4096", "matmul_f32_8192",
           "matmul_bf16_8192", "matmul_f16_8192", "attention_bf16_s2048", "attention_bf16_s8192")
MODELS = ("bert_base", "gpt2_small", "vit_b16", "resnet50", "resnet18_train_step")
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="the benchmark exports with jax: pip install -e '.[bench]'")
MODEL_PACKAGES = ("flax", "optax", "transformers")
needs_model_packages = pytest.mark.skipif(
    any(importlib.util.find_spec(p) is None for p in MODEL_PACKAGES),
    reason="the models come from transformers' Flax models: pip install -e '.[gpu-bench]'")


def _export(folder: Path, names) -> None:
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "export_gpu_sized.py"), "--scale", TINY,
                           "--out", str(folder), "--only", ",".join(names)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """Every kernel program at 1/256."""
    if importlib.util.find_spec("jax") is None:
        pytest.skip("the benchmark exports with jax: pip install -e '.[bench]'")
    folder = tmp_path_factory.mktemp("gpu_sized")
    _export(folder, KERNELS)
    return folder


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> Path:
    """The models at 1/256 (exporting them from transformers takes half a minute: heavy tests)."""
    folder = tmp_path_factory.mktemp("gpu_sized_models")
    _export(folder, MODELS)
    return folder


def _case(name: str):
    marks = [needs_model_packages, pytest.mark.heavy] if name in MODELS else []
    return pytest.param(name, marks=marks, id=name)


@needs_jax
def test_the_export_says_how_to_draw_every_argument(tiny):
    found = {p.name: p for p in sized_programs(tiny)}
    assert set(KERNELS) <= set(found)
    assert [p.name for p in sized_programs(tiny)][:len(KERNELS)] == list(KERNELS)    # the script's order
    gelu = found["gelu"]
    assert gelu.inputs[0].shape == (32, 32) and gelu.peak == "hbm" and gelu.scale == 1 / 256
    matmul = found["matmul_bf16_8192"]
    assert matmul.flops == 2 * 32 ** 3 and matmul.peak == "bf16" and matmul.inputs[0].dtype == "bfloat16"
    attention = json.loads((tiny / "attention_bf16_s2048.json").read_text())
    b, h, s, d = attention["inputs"][0]["shape"]
    assert attention["flops"] == 4 * b * h * s * s * d
    inputs = programs.make_inputs(gelu, seed=0)
    again = programs.make_inputs(gelu, seed=0)
    assert inputs[0].dtype == np.float32 and np.array_equal(inputs[0], again[0])      # seeded
    assert abs(float(inputs[0].std()) - 1.0) < 0.2


@pytest.mark.heavy
@needs_jax
@needs_model_packages
def test_a_models_weights_keep_their_spread_and_its_token_ids_their_range(tiny_models):
    bert = next(p for p in sized_programs(tiny_models) if p.name == "bert_base")
    meta = json.loads((tiny_models / "bert_base.json").read_text())
    ids, mask = meta["inputs"][-2:]
    assert ids["dtype"] == "int32" and ids["low"] == 0 and ids["high"] > 1 and (mask["low"], mask["high"]) == (1, 2)
    assert any(r.get("mean") == 1.0 and r.get("std") == 0.0 for r in meta["inputs"])    # a layer-norm scale
    arrays = programs.make_inputs(bert, seed=0)
    assert len(arrays) == len(bert.inputs)
    assert arrays[-2].min() >= 0 and arrays[-2].max() < ids["high"] and np.all(arrays[-1] == 1)
    weight = max(range(len(arrays) - 2), key=lambda i: arrays[i].size)
    assert 0.0 < float(arrays[weight].std()) < 0.1          # BERT's initialiser: normal(0, 0.02)
    assert meta["mlir_bytes"] < 200_000                     # weights are arguments, not constants


@pytest.mark.parametrize("name", [_case(n) for n in KERNELS + MODELS])
def test_each_program_compiles_for_cuda(request, name):
    pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")
    import xlac
    from xlac.targets.cuda.ptx import ptxas, wheel_file
    folder = request.getfixturevalue("tiny_models" if name in MODELS else "tiny")
    exe = xlac.compile((folder / f"{name}.mlir").read_text(), target="cuda", cache=False)
    ptx = exe.as_text("ptx")
    assert ".entry" in ptx
    if wheel_file("bin/ptxas") is not None:
        ptxas(ptx)


def _resident_on_fake(monkeypatch):
    """gpu/worker.py's resident handlers, compiling for cuda onto an executing fake driver
    (kernels in the SIMT emulator) that is also xlac.device_put's."""
    pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")
    sys.path.insert(0, str(REPO / "test" / "support"))
    from gpu import worker

    import xlac
    from xlac.targets.cuda import driver
    from xlac_emulator.fake_cuda import FakeDriver

    class OnFake:
        def compile(self, source, **options):
            exe = xlac.compile(source, target="cuda", **options)
            fake = FakeDriver(execute=True, kernels=exe.function.kernels)
            exe.function._driver = fake
            monkeypatch.setattr(driver, "_DRIVERS", {(0, False): fake})
            return exe

    return OnFake(), worker.RESIDENT


@pytest.mark.parametrize("name", ["gelu", "row_sum", "column_sum", "softmax", "bias_add"])
def test_the_resident_worker_keeps_inputs_on_the_device_and_agrees_with_xla(tiny, monkeypatch, name):
    compiler, handlers = _resident_on_fake(monkeypatch)
    from xlac.targets.cuda.device_array import DeviceArray
    program = next(p for p in sized_programs(tiny) if p.name == name)
    state: dict = {}
    assert handlers["load"](compiler, state, program, 0) >= 0
    assert all(isinstance(a, DeviceArray) for a in state["inputs"])
    outputs, seconds = handlers["outputs"](compiler, state)
    assert seconds > 0 and len(handlers["time"](compiler, state, 2)) == 2
    import jax
    reference = jax.jit(_jax_function(name))(*programs.make_inputs(program, seed=0))
    np.testing.assert_allclose(outputs[0], np.asarray(reference), rtol=2e-5, atol=2e-5)
    profile = handlers["profile"](compiler, state, 2, 3, None)       # --profile: the slowest kernels
    assert profile.kernels >= 1 and 1 <= len(profile.top) <= 3 and profile.runs == 2
    assert all(ms >= 0 and 0 <= share <= 1 for _, ms, share in profile.top)


def _jax_function(name: str):
    sys.path.insert(0, str(REPO / "bench"))
    from zoo.gpu_sized import CASES, Scale
    return CASES[name](Scale(1 / 256)).function


@needs_jax
def test_the_harness_without_a_gpu_says_why_for_each_program(tiny, tmp_path):
    out = tmp_path / "sized.md"
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--gpu-sized", "--gpu-sized-dir",
                           str(tiny), "--quick", "--only", "gelu,matmul_bf16_4096", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert text.startswith("## GPU-sized programs (") and "| program | peak | xlac ms | XLA ms |" in text
    rows = [line for line in text.splitlines() if line.startswith(("| gelu |", "| matmul_bf16_4096 |"))]
    assert len(rows) == 2 and "| hbm |" in rows[0] and "| bf16 |" in rows[1]
    failures = sum(row.count("FAIL [") for row in rows)
    notes = [line for line in text.splitlines() if line.startswith("[")]
    assert len(notes) == failures, proc.stdout
    assert "- hbm: 4.8 TB/s" in text and "- bf16: 989.5 TFLOP/s" in text


def test_an_empty_folder_says_how_to_export(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "run.py"), "--gpu-sized", "--gpu-sized-dir",
                           str(tmp_path), "--quick"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "bench/export_gpu_sized.py" in proc.stderr


def _sized(name: str, peak: str, inputs, outputs, flops) -> SizedProgram:
    return SizedProgram(name, Path(f"{name}.mlir"), inputs, outputs, 0, flops=flops, in_suite=False,
                        group="gpu-sized", peak=peak)


def test_the_roofline_from_fake_timings():
    """gelu f32[8192,8192]: 2 x 256 MiB in 0.2 ms = 2.68 TB/s = 55.9% of 4.8 TB/s; a bf16
    8192^3 matmul, 1.10e12 FLOPs in 2 ms = 550 TFLOP/s = 55.6% of 989.5."""
    Result = report.BackendResult
    square = programs.TensorSpec((8192, 8192), "float32")
    half = programs.TensorSpec((8192, 8192), "bfloat16")
    gelu = _sized("gelu", "hbm", (square,), (square,), 1e9)
    matmul = _sized("matmul_bf16_8192", "bf16", (half, half), (half,), 2.0 * 8192 ** 3)
    results = [
        report.ProgramResult(gelu, {"xlac": Result(compile_s=0.5, times=[0.4e-3] * 5, check=0.0),
                                    "XLA": Result(compile_s=0.1, times=[0.2e-3] * 5)}, flops=1e9),
        report.ProgramResult(matmul, {"xlac": Result(error="xlac run: CudaError: boom"),
                                      "XLA": Result(times=[2e-3] * 5)}, flops=2.0 * 8192 ** 3),
    ]
    rate, percent = sized_report.reached(results[0], "XLA")
    assert rate == pytest.approx(2 * 8192 * 8192 * 4 / 0.2e-3) and percent == pytest.approx(55.92, abs=0.01)
    rate, percent = sized_report.reached(results[1], "XLA")
    assert rate == pytest.approx(549.76e12, rel=1e-4) and percent == pytest.approx(55.56, abs=0.01)
    assert sized_report.reached(results[1], "xlac") == (None, None)
    assert roofline.roofline_ms("hbm", gelu.nbytes, None) == pytest.approx(0.1118, abs=1e-4)
    args = SimpleNamespace(quick=False, warmup=2, pause_ms=20.0, seed=0, sized_programs=[gelu, matmul])
    text = sized_report.markdown(results, sized_report.method_lines(args), {"jax": "0.11.2"}, "NVIDIA H200",
                                 date=datetime.date(2026, 12, 5))
    lines = text.splitlines()
    assert lines[0] == "## GPU-sized programs (H200)" and "on 2026-12-05" in text
    row = next(line for line in lines if line.startswith("| gelu |")).split(" | ")
    assert row[1] == "hbm" and row[4:10] == ["2.00", "0.112", "1.34 TB/s", "28.0%", "2.68 TB/s", "55.9%"], row
    row = next(line for line in lines if line.startswith("| matmul_bf16_8192 |")).split(" | ")
    assert row[2] == "FAIL [1]" and row[6:10] == ["-", "-", "550 TFLOP/s", "55.6%"], row
    assert "[1] xlac on matmul_bf16_8192: xlac run: CudaError: boom" in lines
    assert "geometric mean xlac/XLA: 2.00 (over 1 of 2 programs; wrong outputs left out)" in lines


def test_programs_held_to_tf32_allow_for_xlas_tf32_dots_and_the_rest_keep_their_types_limit():
    Result, square = report.BackendResult, programs.TensorSpec((64, 64), "float32")
    f32 = _sized("matmul_f32_4096", "tf32", (square, square), (square,), 1.0)
    gelu = _sized("gelu", "hbm", (square,), (square,), 0.0)
    assert report.suspect_error(f32) == 5e-2 and report.suspect_error(gelu) == report.SUSPECT_ERROR
    off = {"xlac": Result(times=[1e-3], check=2e-2), "XLA": Result(times=[1e-3])}
    assert report.ProgramResult(f32, off).agrees("xlac") and not report.ProgramResult(gelu, off).agrees("xlac")


def test_every_program_names_a_peak_of_the_table():
    source = (REPO / "bench" / "zoo" / "gpu_sized.py").read_text()
    for peak in ("hbm", "bf16", "f16", "tf32"):
        assert f'"{peak}"' in source and peak in roofline.PEAKS
    assert roofline.is_memory_bound("hbm") and not roofline.is_memory_bound("bf16")
    assert all(p.source for p in roofline.PEAKS.values())
