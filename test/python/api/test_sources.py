"""What users hand ``xlac.compile`` (issue 14, stumbles 4 and 5): paths as
str or any os.PathLike, a JAX Lowered called with its pytree, a Compiled or
HLO text refused with what to do; loaded executables keep their fusion report."""

from __future__ import annotations

import numpy as np
import pytest

import xlac

PROGRAM = """func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.exponential %a : tensor<2x3xf32>
  %1 = stablehlo.add %0, %a : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
"""
X = np.arange(6, dtype=np.float32).reshape(2, 3) / 6


@pytest.fixture
def model(tmp_path, monkeypatch):
    (tmp_path / "model.mlir").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "model.mlir"


class FsPath:
    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return str(self.path)


def test_a_file_name_in_a_str_is_read(model):
    want = np.exp(X) + X
    for source in ("model.mlir", str(model), FsPath(model), model):
        np.testing.assert_allclose(xlac.compile(source)(X), want, rtol=1e-6)


def test_a_missing_file_is_reported_as_missing(model):
    with pytest.raises(xlac.CompileError, match="nope.mlir: error: cannot read file"):
        xlac.compile("nope.mlir")
    with pytest.raises(xlac.CompileError, match="cannot read file"):
        xlac.compile(FsPath(model.parent / "missing.mlir"))


def test_hlo_text_is_refused_with_what_to_do():
    with pytest.raises(xlac.CompileError, match="HLO text .* not StableHLO") as failure:
        xlac.compile("HloModule jit_f, entry_computation_layout={(f32[2])->f32[2]}\n\nENTRY main {}")
    assert "jax.jit(f).lower(x)" in str(failure.value)


def test_loaded_and_deserialized_executables_keep_their_fusion_report(model, tmp_path):
    exe = xlac.compile(model)
    report = exe.fusion_report()
    assert report.startswith("1 fusion(s)")
    assert xlac.deserialize(exe.serialize()).fusion_report() == report
    library = tmp_path / "libmodel.so"
    from xlac.tools.xla_compile import main
    assert main([str(model), "-o", str(library)]) == 0
    assert xlac.load(library).fusion_report() == report


jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'xlac[bench]')")
jnp = jax.numpy


def test_a_jax_lowering_is_called_with_its_pytree():
    def f(params, xs, unused):
        return {"y": jnp.tanh(params["w"] * xs[0] + xs[1])}, xs[0].sum()
    params, xs = {"w": X}, [X, 2 * X]
    exe = xlac.compile(jax.jit(f).lower(params, xs, X))
    got, want = exe(params, xs, X), jax.jit(f)(params, xs, X)
    assert set(got[0]) == {"y"}
    np.testing.assert_allclose(got[0]["y"], want[0]["y"], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    assert len(exe.run(X, X, 2 * X)) == 2                      # the flat leaves still work
    with pytest.raises(xlac.InputError, match="lowered for"):
        exe([X], X)


def test_a_jax_compiled_is_refused_with_what_to_do():
    compiled = jax.jit(jnp.sin).lower(X).compile()
    assert compiled.as_text().startswith("HloModule")           # XLA's HLO, not StableHLO
    with pytest.raises(xlac.CompileError, match="jax Compiled") as failure:
        xlac.compile(compiled)
    assert "before .compile()" in str(failure.value)
