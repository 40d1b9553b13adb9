"""Kernels formed around collectives, on one device (no MPI): compiled and
run against the parallel reference interpreter."""

from __future__ import annotations

import numpy as np
import spmd_programs

import xlac
from xlac.reference.parallel import run_reference_parallel


def test_a_gradient_all_reduced_and_summed_compiles_and_matches_the_interpreter():
    program = spmd_programs.gradient_and_bias_step_program(partitions=1)
    text, devices = program.text(), program.inputs()
    exe = xlac.compile(text)
    fused = exe.as_text("fused")
    assert '{kind = "multi_output"}' in fused     # the decay sum and the update: one kernel
    # the zero the sums start from stays outside every kernel (each has its own copy)
    assert fused.index("stablehlo.constant dense<0.000000e+00>") < fused.index('"xla.fusion"')
    got = exe.run(*devices[0])
    want = run_reference_parallel(text.encode(), devices)[0]
    assert len(got) == len(want) == len(program.names())
    for name, g, w in zip(program.names(), got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6, err_msg=name)
