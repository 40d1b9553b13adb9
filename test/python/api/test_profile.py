"""exe.profile(): per-kernel times of a profiled copy, as a table and a Chrome trace."""

from __future__ import annotations

import json

import numpy as np
import pytest

import xlac

# two kernels: a tanh before a dot is a kernel of its own (after it, it would be
# the dot's epilogue, one kernel named after its last line)
PROGRAM = """func.func @main(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.tanh %x : tensor<256x256xf32>
  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}"""


def test_profile_names_each_kernel_by_its_source_line(tmp_path):
    exe = xlac.compile(PROGRAM, cache=False)
    x = np.ones((256, 256), np.float32) / 256
    profile = exe.profile(x, x, runs=3)
    kernels = profile.kernels()
    assert {k.name.split()[0] for k in kernels} >= {"<input>:2:8", "<input>:3:8"}
    assert all(k.calls == 3 for k in kernels) and abs(sum(k.share for k in kernels) - 1) < 1e-6
    assert "ms/call" in profile.table()
    profile.write_trace(tmp_path / "trace.json")
    spans = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(spans) == 3 * len(kernels) and all(e["dur"] >= 0 for e in spans)
    np.testing.assert_allclose(exe(x, x), np.tanh(x) @ x, rtol=1e-5)   # the executable is untouched


def test_loaded_code_cannot_be_profiled():
    exe = xlac.deserialize(xlac.compile(PROGRAM, cache=False).serialize())
    with pytest.raises(xlac.CompileError, match="cannot profile"):
        exe.profile(np.ones((256, 256), np.float32), np.ones((256, 256), np.float32))


DOT_THEN_TANH = """func.func @main(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.tanh %0 : tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}"""


def test_a_kernel_is_named_after_its_fusion_in_the_report():
    # x86-64-v3 (runs on AVX2 and AVX-512 hosts): its plan applies the epilogue in
    # the matmul's tiles (AVX-512's keeps it a pass of its own, a second kernel)
    exe = xlac.compile(DOT_THEN_TANH, cache=False, cpu="x86-64-v3")
    x = np.ones((256, 256), np.float32) / 256
    names = [k.name for k in exe.profile(x, x, runs=2).kernels()]
    # one kernel, the outlined call of the dot with its epilogue: named as the
    # report's fusion at its location, not "func.call"
    assert names == ["<input>:3:8 fusion 0: dot_general, tanh"]
    assert "fusion 0   output       dot_general, tanh" in exe.fusion_report()
