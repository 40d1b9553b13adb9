"""``jax.export`` artifacts (``Exported.serialize()``) and ``Exported`` objects,
with and without Shardy, read by xlac."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import xlac
from xlac.context import new_context
from xlac.frontend.parse import parse_module

jax = pytest.importorskip("jax", reason="JAX is not installed (pip install 'xlac[bench]')")
pytest.importorskip("flatbuffers", reason="jax.export serialization needs flatbuffers")
from jax import export  # noqa: E402

X = np.linspace(-2, 2, 32, dtype=np.float32).reshape(8, 4)


def f(x):
    return jax.numpy.sin(x) * 2


def test_a_serialized_export_runs():
    blob = export.export(jax.jit(f))(X).serialize()
    np.testing.assert_allclose(xlac.compile(bytes(blob))(X), np.sin(X) * 2, rtol=1e-6)


def test_an_exported_object_runs():
    exe = xlac.compile(export.export(jax.jit(f))(X))
    np.testing.assert_allclose(exe(X), np.sin(X) * 2, rtol=1e-6)


def test_a_serialized_export_with_a_one_device_mesh_runs():
    """Shardy attributes in bytecode: read through jaxlib, then dropped."""
    from jax.sharding import NamedSharding, PartitionSpec
    mesh = jax.make_mesh((1,), ("x",), devices=jax.devices()[:1])
    sharding = NamedSharding(mesh, PartitionSpec("x"))
    blob = export.export(jax.jit(f, in_shardings=sharding, out_shardings=sharding))(X).serialize()
    np.testing.assert_allclose(xlac.compile(bytes(blob))(X), np.sin(X) * 2, rtol=1e-6)


_SHARD_MAP_EXPORT = textwrap.dedent("""
    import os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    from functools import partial
    import jax, jax.numpy as jnp
    from jax import export
    from jax.sharding import NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((4,), ("x",))
    @partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P())
    def g(x):
        return jax.lax.psum(jnp.sin(x), "x")
    x = jax.device_put(jnp.ones((16, 8)), NamedSharding(mesh, P("x")))
    sys.stdout.buffer.write(export.export(jax.jit(g))(x).serialize())
""")


def test_a_serialized_shard_map_export_is_the_per_device_program():
    done = subprocess.run([sys.executable, "-c", _SHARD_MAP_EXPORT], capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    module = str(parse_module(new_context(), done.stdout, "<export>"))
    assert "func.func public @main(%arg0: tensor<4x8xf32>)" in module
    assert "stablehlo.all_reduce" in module and "sdy" not in module
