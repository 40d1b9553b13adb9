"""xla-cpu-pipeline and xla-cuda-pipeline are the compiler's stages in a row:
the same Options, the same stage functions, so no option can drift apart."""

from __future__ import annotations

import pytest

from xlac.context import new_context
from xlac.options import Options
from xlac.pipeline.pass_manager import build_pass_manager, named_steps
from xlac.pipeline.text import PipelineSyntaxError, parse_pipeline
from xlac.targets import get_target

LEVELS = ("x86-64-v2", "x86-64-v3", "x86-64-v4", "host")
# (the pipeline's options, the Options fields a compile would have)
CPU_OPTIONS = [
    ("", {}),
    ("threads=3", {"num_threads": 3}),
    ("threads=1 micro-kernels=false", {"num_threads": 1, "micro_kernels": False}),
    ("micro-kernels=true remarks=true", {"micro_kernels": True, "fusion_remarks": True}),
    ("remarks=1 profile=true split-copy-bytes=0",
     {"fusion_remarks": True, "profile": True, "split_copy_bytes": 0}),
    ("overlap-collectives=always collective-bucket-bytes=4096",
     {"overlap_collectives": "always", "collective_bucket_bytes": 4096}),
]


def steps(text: str, disabled=frozenset()) -> list[str]:
    return named_steps(parse_pipeline(text)[0], disabled)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("given, fields", CPU_OPTIONS)
def test_cpu_pipeline_is_the_compilers_stages(level, given, fields):
    """Pass for pass, options included, whatever the level (nothing here runs code)."""
    text = f"xla-cpu-pipeline{{entry=f cpu={level} {given}}}"
    staged = get_target("cpu").stage_steps("f", Options(cpu=level, **fields))
    assert steps(text) == [step for stage in staged.values() for step in stage]


def test_the_level_reaches_every_stage():
    """What each level derives (the argmax rows' AVX2 pairs once drifted): the
    one-pass pipeline has it because it is the staged pipeline."""
    v3, v4 = steps("xla-cpu-pipeline{cpu=x86-64-v3}"), steps("xla-cpu-pipeline{cpu=x86-64-v4}")
    assert "xla-lane-arg-reductions{row-pairs=2}" in v3 and "xla-lane-arg-reductions" in v4
    assert "xla-merge-select-branches" in v3 and "xla-target-cpu{cpu=x86-64-v4}" in v4
    assert any("vector-bytes=32" in step for step in v3) and any("vector-bytes=64" in step for step in v4)
    assert "xla-horner-fma" not in steps("xla-cpu-pipeline{cpu=x86-64-v2}")


def test_the_default_is_a_default_compile():
    assert steps("xla-cpu-pipeline") == get_target("cpu").pipeline("main", Options())


def test_disabled_passes_reach_the_stages():
    """As XLAC_DISABLE_PASSES: the pass is left out and the steps that depend on it change."""
    disabled = frozenset({"xla-i1-memory-as-i8"})
    staged = get_target("cpu").pipeline("main", Options(cpu="x86-64-v4", disable_passes=tuple(disabled)))
    assert steps("xla-cpu-pipeline{cpu=x86-64-v4}", disabled) == staged
    assert "xla-lane-arg-reductions{i1-vectors=false}" in staged


@pytest.mark.parametrize("given, fields", [
    ("", {}), ("remarks=true", {"fusion_remarks": True}),
    ("cuda-contractions=cublaslt matmul-precision=tensorfloat32",
     {"cuda_contractions": "cublaslt", "matmul_precision": "tensorfloat32"}),
    ("cuda-contractions=generated", {"cuda_contractions": "generated"})])
def test_cuda_pipeline_is_the_compilers_stages(given, fields):
    assert steps(f"xla-cuda-pipeline{{{given}}}") == get_target("cuda").pipeline("main", Options(**fields))


@pytest.mark.parametrize("text, message", [
    ("xla-cpu-pipeline{cpu=x86-64-v9}", "unknown CPU 'x86-64-v9'"),
    ("xla-cpu-pipeline{vector-bytes=64}", "has no option 'vector_bytes'"),
])
def test_bad_options_are_pipeline_errors(text, message):
    with pytest.raises(PipelineSyntaxError, match=message):
        build_pass_manager(new_context(), f"builtin.module({text})")
