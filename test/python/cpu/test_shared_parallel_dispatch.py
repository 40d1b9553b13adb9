"""A program's parallel kernels share one OpenMP region (xla-shared-parallel-dispatch):
each kernel calls it with its loop's body as a function; the loops still run on the
threads, with the same results."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlac
from conftest import runnable_levels

TWO_THREADS = xlac.Options().replace(num_threads=2)
# a transpose-add and a row sum: two kernels whose rows are split among the threads
TWO_PARALLEL_KERNELS = """func.func @main(%x: tensor<512x512xf32>, %y: tensor<512x512xf32>)
    -> (tensor<512x512xf32>, tensor<512xf32>) {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<512x512xf32>) -> tensor<512x512xf32>
  %a = stablehlo.add %t, %y : tensor<512x512xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [1]
      : (tensor<512x512xf32>, tensor<f32>) -> tensor<512xf32>
  return %a, %r : tensor<512x512xf32>, tensor<512xf32>
}"""


def _inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((512, 512)).astype(np.float32) for _ in range(2)]


@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])
def test_parallel_kernels_share_one_openmp_region(cpu):
    exe = xlac.compile(TWO_PARALLEL_KERNELS, cpu=cpu, cache=False, options=TWO_THREADS)
    llvm = exe.as_text("llvm")
    assert llvm.count("omp.parallel") == 1
    assert llvm.count("llvm.call @xla_parallel_for") == 2
    if cpu in runnable_levels(cpu):
        x, y = _inputs()
        added, summed = exe(x, y)
        np.testing.assert_array_equal(added, x.T + y)
        np.testing.assert_allclose(summed, x.sum(axis=1), rtol=1e-5, atol=1e-4)


def test_the_shared_region_still_runs_on_the_threads():
    """OpenMP starts its worker threads at the first region a call forks: the
    process has more threads after the first call than after the compile."""
    script = textwrap.dedent("""
        import os, sys, numpy as np, xlac
        exe = xlac.compile(sys.argv[1], cpu="x86-64-v3", cache=False,
                           options=xlac.Options().replace(num_threads=2))
        x = np.ones((512, 512), np.float32)
        before = len(os.listdir("/proc/self/task"))
        exe(x, x)
        print(before, len(os.listdir("/proc/self/task")))
    """)
    found = subprocess.run([sys.executable, "-c", script, TWO_PARALLEL_KERNELS],
                           capture_output=True, text=True, check=True)
    before, after = map(int, found.stdout.split()[-2:])
    assert after > before, found.stdout
