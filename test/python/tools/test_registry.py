"""The pass registry, the pipeline parser and the named stages."""

from __future__ import annotations

import pytest

from conftest import REPO
from xlac.options import Options
from xlac.passes.base import ModulePass
from xlac.passes.registry import get_pass_class, pass_module, pass_names
from xlac.pipeline import pipelines
from xlac.pipeline.text import PipelineSyntaxError, parse_options, parse_pipeline
from xlac.targets import get_target

TESTS = REPO / "test"


@pytest.mark.parametrize("name", pass_names())
def test_registry_key_is_the_pass_name(name):
    pass_class = get_pass_class(name)
    assert issubclass(pass_class, ModulePass)
    assert pass_class.name == name and name.startswith("xla-")
    assert pass_class.summary(), f"{name} needs a docstring"


@pytest.mark.parametrize("name", pass_names())
def test_every_pass_has_a_lit_test_named_after_it(name):
    """Lit tests mirror the passes' folders: passes/<phase>/x.py -> test/passes/<phase>/xla-x.mlir."""
    phase = pass_module(name).split(".")[0]
    assert (TESTS / "passes" / phase / f"{name}.mlir").exists()


@pytest.mark.parametrize("name", pass_names())
def test_every_pass_lives_in_a_file_named_after_it(name):
    module = pass_module(name).split(".")[-1]
    assert module == name.removeprefix("xla-").replace("-", "_")


@pytest.mark.parametrize("name", pipelines.NAMED_PIPELINES)
def test_every_named_pipeline_has_a_lit_test(name):
    assert (TESTS / "pipelines" / f"{name}.mlir").exists()


def test_pipeline_parser_keeps_nesting_and_options():
    elements = parse_pipeline("builtin.module(func.func(cse,canonicalize{max-iterations=3}),"
                              "xla-select-entry{entry=f})")
    assert [e.name for e in elements] == ["func.func", "xla-select-entry"]
    assert elements[0].children[1].options == "max-iterations=3"
    assert elements[0].text() == "func.func(cse,canonicalize{max-iterations=3})"
    assert parse_options(elements[1].options) == {"entry": "f"}


def test_pipeline_parser_accepts_a_bare_list():
    assert [e.name for e in parse_pipeline("cse, canonicalize")] == ["cse", "canonicalize"]


@pytest.mark.parametrize("text", ["builtin.module(cse", "cse{a=1", "cse)", ",cse"])
def test_pipeline_parser_reports_the_column(text):
    with pytest.raises(PipelineSyntaxError, match=r"pass pipeline:1:\d+: error:"):
        parse_pipeline(text)


def test_options_are_typed():
    from xlac.passes.ingest.check_support import CheckSupport
    assert CheckSupport.from_options({"target": "cuda"}).target == "cuda"
    with pytest.raises(ValueError, match="has no option 'x'"):
        CheckSupport.from_options({"x": "1"})


def test_stages_run_in_order():
    """(xla-cpu-pipeline is these stages in a row: test_whole_pipelines.py)"""
    cpu = get_target("cpu")
    assert cpu.stage_names() == ["input", "stablehlo", "fused", "linalg", "bufferized", "llvm"]
    options = Options()
    assert cpu.steps_until("input", "main", options) == []
    assert cpu.steps_until("linalg", "main", options) == [
        step for name in ("stablehlo", "fused", "linalg") for step in cpu.stage(name).steps("main", options)]
    assert cpu.pipeline("main", options) == cpu.steps_until("llvm", "main", options)


# torch-mlir's FX importer is PyTorch's frontend for the benchmark's exports, not xlac's bindings
FRONTEND_USES = {"bench/zoo/torch_models.py"}


def test_mlir_is_imported_in_one_module_only():
    repo = TESTS.parent
    offenders = []
    for folder in ("python", "passes", "dialects", "tools", "bench"):
        for path in (repo / folder).rglob("*.py"):
            if path.name == "mlir.py" and path.parent.name == "xlac" or \
                    str(path.relative_to(repo)) in FRONTEND_USES:
                continue
            for line in path.read_text().splitlines():
                if line.strip().startswith(("import torch_mlir", "from torch_mlir")):
                    offenders.append(f"{path.relative_to(repo)}: {line.strip()}")
    assert not offenders, "import MLIR through xlac.mlir:\n" + "\n".join(offenders)


@pytest.mark.parametrize("name", pass_names())
def test_the_table_of_ops_a_pass_acts_on_is_its_class(name):
    """A pass manager takes a pass of ``acts_on_table`` without importing it
    (``xlac.passes.deferred``): the table must say what the class says."""
    from xlac.passes.acts_on_table import ACTS_ON
    assert ACTS_ON.get(name, frozenset()) == get_pass_class(name).acts_on


def test_a_deferred_pass_takes_only_its_bool_flags():
    """``acts_on_table.FLAGS`` lets a deferred pass take options checked without
    its class: each must be a bool field of the class; anything else (another
    option, a value not true/false) makes the pass imported and checked now."""
    from xlac import record
    from xlac.passes.acts_on_table import ACTS_ON, FLAGS
    from xlac.passes.deferred import DeferredPass, deferred
    for name, flags in FLAGS.items():
        assert name in ACTS_ON
        cls = get_pass_class(name)
        for flag in flags:
            assert record.annotation(cls, flag.replace("-", "_")) in (bool, "bool"), (name, flag)
    assert isinstance(deferred("xla-lower-fft", {"kernels": "true"}), DeferredPass)
    assert deferred("xla-lower-fft", {"kernels": "maybe"}) is None
    assert deferred("xla-lower-fft", {"kernelz": "true"}) is None
    made = deferred("xla-lower-fft", {"kernels": "true"})
    assert get_pass_class("xla-lower-fft").from_options(made.options).kernels is True
