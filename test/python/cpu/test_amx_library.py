"""A library xla-compile makes with the AMX kernel asks Linux for the tile
state itself: its C wrapper requests it before an entry's first run, so a C
program that never heard of AMX calls it without dying of SIGILL."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from xlac.artifact import csrc
from xlac.cpu_model import cpu_model, host_features
from xlac.options import Options
from xlac.signature import Signature, TensorSpec
from xlac.targets.cpu import amx_kernels
from xlac.targets.cpu.pipeline import uses_amx

BIN = Path(sys.executable).parent
N = 128                 # 128^3 = 2^21 multiply-adds: over xla-amx-contractions' min-work
_DOT = (f"func.func @main(%a: tensor<{N}x{N}xbf16>, %b: tensor<{N}x{N}xbf16>) -> tensor<{N}x{N}xf32> {{\n"
        f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
        f"(tensor<{N}x{N}xbf16>, tensor<{N}x{N}xbf16>) -> tensor<{N}x{N}xf32>\n"
        f"  return %0 : tensor<{N}x{N}xf32>\n}}")


def test_the_wrapper_of_an_amx_library_asks_for_the_tile_state():
    """On any host: the generated C asks (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)
    before running the code, and only where the library has the kernel."""
    spec = TensorSpec((N, N), "bf16")
    entries = {"main": Signature((spec, spec), (TensorSpec((N, N), "f32"),))}
    amx = csrc.wrapper("model", entries, "model.h", amx=True)
    assert "syscall(SYS_arch_prctl, 0x1023, 18)" in amx
    assert amx.index("xlac_amx_ready") < amx.rindex("return 2;")
    assert "arch_prctl" not in csrc.wrapper("model", entries, "model.h")
    assert "AMX" in csrc.header("model", entries, "model.mlir", "0", amx=True)


@pytest.mark.skipif(not amx_kernels.has_amx(host_features()), reason="this host has no AMX")
def test_a_c_program_calls_an_amx_library_without_asking(tmp_path):
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    if not uses_amx(cpu_model("host"), Options.from_env().micro_kernels):
        pytest.skip("the micro-kernels are off, or Linux refused the tile state")
    (tmp_path / "model.mlir").write_text(_DOT)
    done = subprocess.run([str(BIN / "xla-compile"), str(tmp_path / "model.mlir"), "-o",
                           str(tmp_path / "libmodel.so"), "--header", str(tmp_path / "model.h")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert amx_kernels.SYMBOL.encode() in (tmp_path / "libmodel.so").read_bytes()
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((N, N)).astype(ml_dtypes.bfloat16) for _ in range(2))
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    (tmp_path / "call.c").write_text(_C_CALLER)
    subprocess.run([compiler, "-o", str(tmp_path / "call"), str(tmp_path / "call.c"), f"-I{tmp_path}",
                    f"-L{tmp_path}", "-lmodel", f"-Wl,-rpath,{tmp_path}"], check=True, timeout=120)
    run = subprocess.run([str(tmp_path / "call")], cwd=tmp_path, capture_output=True, timeout=60)
    assert run.returncode == 0, run
    got = np.fromfile(tmp_path / "c.bin", np.float32).reshape(N, N)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    bound = N * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    assert np.all(np.abs(got - a64 @ b64) <= bound + 1e-30)


_C_CALLER = r"""
#include <stdio.h>
#include "model.h"

int main(void) {
  static unsigned short a[128 * 128], b[128 * 128];
  static float c[128 * 128];
  FILE *f = fopen("a.bin", "rb");
  if (!f || fread(a, sizeof a, 1, f) != 1) return 5;
  fclose(f);
  f = fopen("b.bin", "rb");
  if (!f || fread(b, sizeof b, 1, f) != 1) return 5;
  fclose(f);
  const void *inputs[] = {a, b};
  void *outputs[] = {c};
  int status = model_main(inputs, outputs);
  if (status != 0) return 10 + status;
  f = fopen("c.bin", "wb"); fwrite(c, sizeof c, 1, f); fclose(f);
  return 0;
}
"""
