"""top_k as exporters write it, through xlac.compile, against the reference interpreter and XLA.

jax.export writes `stablehlo.composite "chlo.top_k"` (its decomposition a
full stable sort), jax.jit(...).lower `chlo.top_k`, jnp.sort/argsort a sort
and a slice of its head, torch-mlir aten.topk a sort (FLOAT compare, i64
iota) and a slice, XLA's HLO translated a `custom_call @mhlo.topk`. Each must
become the one-pass top-k (no sort left) and give the interpreter's results
bit for bit, ties included (the earlier element first), and XLA's (the same
text compiled by jaxlib) with NaNs and signed zeros too: the interpreter
compares TOTALORDER as FLOAT (-0 == +0, NaN unordered), XLA in total order.
"""

import numpy as np
import pytest

import xlac
from xlac.reference.server import shared_server

jax = pytest.importorskip("jax", reason="the programs are exported with jax: pip install -e '.[bench]'")
jnp = pytest.importorskip("jax.numpy")
ml_dtypes = pytest.importorskip("ml_dtypes")

from jax import export, lax  # noqa: E402  (after the skip)

_DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "i32": np.int32}


def _xla(text: str, inputs) -> list[np.ndarray]:
    """XLA's results for ``text``: jaxlib's CPU client, as bench/backends.py calls it."""
    from jax._src import compiler
    from jax._src.lib import xla_client
    from jax.extend.backend import get_backend
    backend = get_backend("cpu")
    device = backend.local_devices()[0]
    options = compiler.get_compile_options(num_replicas=1, num_partitions=1, backend=backend)
    exe = backend.compile_and_load(text, xla_client.DeviceList((device,)), options)
    return [np.asarray(out) for out in exe.execute([jax.device_put(x, device) for x in inputs])]


def _rows(shape, element: str) -> np.ndarray:
    """Few distinct values (many ties); for floats NaNs of both signs and
    payloads, infinities and both zeros in the first rows."""
    x = np.random.default_rng(1).integers(-3, 4, shape).astype(np.float32)
    if element != "i32":
        payload = np.array([0x7FC00001], np.uint32).view(np.float32)[0]
        x[0, :8] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, payload, -0.0]
        x[1, ::3] = np.nan
        x[2, 1::2] = -0.0
    return x.astype(_DTYPES[element])


def _exported(fn, *args) -> str:
    return export.export(jax.jit(fn))(*args).mlir_module()


def _without_specials(x: np.ndarray) -> np.ndarray:
    """``x`` with NaNs as 2.5 and -0 as +0: where the interpreter's order is XLA's."""
    if x.dtype.kind == "i":
        return x
    clean = np.where(np.isnan(x.astype(np.float32)), 2.5, x.astype(np.float32)) + 0.0
    return clean.astype(x.dtype)


def _same(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g).view(np.uint8), w.view(np.uint8))


def _check(text: str, x: np.ndarray, reference_text: str | None = None, stable: bool = True):
    """With no sort left, xlac's results equal the interpreter's and XLA's bit
    for bit; if the sort is not ``stable``, which of equal elements (ties,
    or -0 and +0 when they compare equal) comes first is its choice: then
    only the values must be equal, and the indices must point at them."""
    exe = xlac.compile(text, cache=False)
    assert "stablehlo.sort" not in exe.as_text("stablehlo")
    assert "xla.top_k" in exe.as_text("stablehlo")
    reference = reference_text or text

    def run(inputs):
        got = exe(*inputs)
        return list(got) if isinstance(got, (list, tuple)) else [got]

    clean = _without_specials(x)
    _compare(run([clean]), shared_server().run(reference.encode(), [clean]), clean, stable)
    _compare(run([x]), _xla(reference, [x]), x, stable)


def _compare(got, want, x: np.ndarray, stable: bool) -> None:
    if stable:
        _same(got, want)
    else:
        _same_up_to_ties(x, got, want)


def _same_up_to_ties(x: np.ndarray, got, want) -> None:
    (values, indices), (want_values, _) = got, want
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_array_equal(np.take_along_axis(x, indices, -1).view(np.uint8),
                                  np.asarray(values).view(np.uint8))


@pytest.mark.parametrize("element", ["f32", "bf16", "i32"])
@pytest.mark.parametrize("k", [1, 5, 40])
@pytest.mark.parametrize("form", ["export", "jit"])
def test_lax_top_k_as_jax_writes_it(form, k, element):
    """k = 1, a few, and k = n (40)."""
    x = _rows((6, 40), element)
    fn = lambda x: lax.top_k(x, k)  # noqa: E731
    text = _exported(fn, x) if form == "export" else jax.jit(fn).lower(x).as_text()
    assert ("stablehlo.composite" in text) == (form == "export")
    _check(text, x)


@pytest.mark.parametrize("element", ["f32", "bf16", "i32"])
@pytest.mark.parametrize("k", [70, 300])
def test_lax_top_k_of_a_few_hundred_is_the_one_pass(k, element):
    """k beyond 64 (the old bound) up to 320 takes the one pass, not the sort
    (100x slower at k = 70 of 8000); ties, NaNs and zeros as before."""
    x = _rows((3, 700), element)
    _check(jax.jit(lambda x: lax.top_k(x, k)).lower(x).as_text(), x)


def test_composite_too_large_for_the_kernel_runs_its_decomposition():
    x = _rows((3, 400), "f32")
    text = _exported(lambda x: lax.top_k(x, 330), x)
    _same(xlac.compile(text, cache=False)(x), _xla(text, [x]))


_JNP_FORMS = {
    "sort": lambda x: jnp.sort(x, axis=-1)[:, :7],
    "sort_descending": lambda x: jnp.sort(x, axis=-1, descending=True)[:, :7],
    "argsort": lambda x: jnp.argsort(x, axis=-1)[:, :7],
    "argsort_descending": lambda x: jnp.argsort(x, axis=-1, descending=True)[:, :7],
    "argsort_axis0": lambda x: jnp.argsort(x.T, axis=0)[:3],
    "lax_sort_with_iota": lambda x: [a[:, :4] for a in lax.sort(
        (x, lax.broadcasted_iota(jnp.int32, x.shape, 1)), dimension=1, num_keys=1)],
}


@pytest.mark.parametrize("element", ["f32", "bf16"])
@pytest.mark.parametrize("form", sorted(_JNP_FORMS))
def test_head_of_a_jnp_sort_is_a_top_k(form, element):
    """jnp.sort's comparator: -0 == +0, every NaN one value after +inf; both directions."""
    x = _rows((6, 40), element)
    _check(_exported(_JNP_FORMS[form], x), x)


def _torch_mlir_top_k(direction: str, compare: str, stable: str, k: int,
                      index: str = "i64") -> str:
    """aten.topk as torch-mlir lowers it to StableHLO: aten.sort + slices."""
    return (f"""
func.func @main(%x: tensor<6x40xf32>) -> (tensor<6x{k}xf32>, tensor<6x{k}xi64>) {{
  %iota = stablehlo.iota dim = 1 : tensor<6x40xi64>
  %s:2 = "stablehlo.sort"(%x, %iota) <{{dimension = 1 : i64, is_stable = {stable}}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i64>, %d: tensor<i64>):
    %p = stablehlo.compare {direction}, %a, %b, {compare} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }}) : (tensor<6x40xf32>, tensor<6x40xi64>) -> (tensor<6x40xf32>, tensor<6x40xi64>)
  %v = stablehlo.slice %s#0 [0:6, 0:{k}] : (tensor<6x40xf32>) -> tensor<6x{k}xf32>
  %i = stablehlo.slice %s#1 [0:6, 0:{k}] : (tensor<6x40xi64>) -> tensor<6x{k}xi64>
  return %v, %i : tensor<6x{k}xf32>, tensor<6x{k}xi64>
}}""").replace("xi64>", f"x{index}>").replace("<i64>", f"<{index}>")


@pytest.mark.parametrize("direction", ["GT", "LT"])
@pytest.mark.parametrize("compare", ["FLOAT", "TOTALORDER"])
def test_torch_mlir_sort_and_slice_is_a_top_k(direction, compare):
    """A FLOAT compare defines no order for NaN: those rows have none here.
    XLA's unstable sort may order ties either way (the interpreter's keeps them)."""
    x = _rows((6, 40), "f32")
    if compare == "FLOAT":
        x[np.isnan(x)] = 2.5
    _check(_torch_mlir_top_k(direction, compare, "false", 9), x, stable=False)


def _mhlo_top_k(k: int, largest: str) -> str:
    return f"""
func.func @main(%x: tensor<6x40xf32>) -> (tensor<6x{k}xf32>, tensor<6x{k}xi32>) {{
  %r:2 = stablehlo.custom_call @mhlo.topk(%x) {{mhlo.attributes = {{k = {k} : i64, largest = {largest}}}, mhlo.version = 1 : i64}} : (tensor<6x40xf32>) -> (tensor<6x{k}xf32>, tensor<6x{k}xi32>)
  return %r#0, %r#1 : tensor<6x{k}xf32>, tensor<6x{k}xi32>
}}"""


@pytest.mark.parametrize("largest", ["true", "false"])
def test_mhlo_topk_custom_call_is_a_top_k(largest):
    """XLA's HLO translated to StableHLO; the reference is the sort it stands for."""
    x = _rows((6, 40), "f32")
    direction = "GT" if largest == "true" else "LT"
    reference = _torch_mlir_top_k(direction, "TOTALORDER", "true", 6, index="i32")
    _check(_mhlo_top_k(6, largest), x, reference)
