"""A cache hit without MLIR: the input's bytes key the cache before any parse,
``import xlac`` loads nothing heavy, and the build identity is memoized."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac import cache
from xlac.artifact import identity

PROGRAM = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
HEAVY = ("torch_mlir", "numpy", "jax", "scipy", "ml_dtypes", "importlib.metadata", "tqdm")


def fresh_process(code: str, cache_dir) -> list[str]:
    """Run ``code`` in a new interpreter; the heavy modules it ended with loaded."""
    check = f"import sys\n{code}\nprint([m for m in {HEAVY!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=300, env={"XLAC_CACHE_DIR": str(cache_dir),
                                            "PATH": "/usr/bin:/bin", "HOME": str(cache_dir)})
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1])  # noqa: S307 - our own list of names


def test_import_loads_nothing_heavy(tmp_path):
    assert fresh_process("import xlac", tmp_path) == []


def test_a_hit_in_a_fresh_process_needs_no_mlir(tmp_path):
    source = tmp_path / "p.mlir"
    source.write_text(PROGRAM)
    cache_dir = tmp_path / "cache"
    compile_it = f"import xlac, xlac.cache\nexe = xlac.compile({str(source)!r})\nxlac.cache.flush()"
    assert "torch_mlir" in fresh_process(compile_it, cache_dir)          # the miss parses
    assert fresh_process(compile_it, cache_dir) == []                    # the hit does not
    run_it = compile_it + "\nimport numpy as np\nprint(exe(np.zeros(4, np.float32)))"
    assert "torch_mlir" not in fresh_process(run_it, cache_dir)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("XLAC_CACHE_DIR", str(directory))
    return directory


def test_equal_programs_share_an_entry_and_then_hit_by_their_bytes(cache_dir, caplog,
                                                                     monkeypatch):
    xlac.compile(PROGRAM)
    cache.flush()
    moved = "// the same program, moved\n\n" + PROGRAM
    with caplog.at_level(logging.INFO, logger="xlac.cache"):
        xlac.compile(moved)                            # the parsed key hits; one line logged
        cache.flush()
    assert [r.getMessage().split()[2] for r in caplog.records] == ["hit"]
    from xlac.frontend import parse
    monkeypatch.setattr(parse, "parse_module", lambda *a: pytest.fail("a hit parsed"))
    exe = xlac.compile(moved)                          # now stored under its own bytes too
    np.testing.assert_allclose(exe(np.ones(4, np.float32)), np.exp(np.ones(4)), rtol=1e-6)
    assert exe.signature.inputs[0].shape == (4,)


def test_options_still_change_the_input_key(cache_dir, caplog):
    xlac.compile(PROGRAM)
    cache.flush()
    with caplog.at_level(logging.INFO, logger="xlac.cache"):
        xlac.compile(PROGRAM, disable_passes=("cse",))
    assert "miss" in caplog.records[0].getMessage()


def test_identity_is_memoized_under_a_fingerprint(tmp_path, monkeypatch):
    monkeypatch.setattr(identity, "_IDENTITY", None)
    first = identity.build_identity(tmp_path)
    memo = json.loads((tmp_path / "build-identity.json").read_text())
    assert memo["identity"] == first and first["xlac_build"] == identity.source_digest()
    memo["identity"]["xlac_build"] = "remembered"
    (tmp_path / "build-identity.json").write_text(json.dumps(memo))
    monkeypatch.setattr(identity, "_IDENTITY", None)
    assert identity.build_identity(tmp_path)["xlac_build"] == "remembered"   # not recomputed
    monkeypatch.setattr(identity, "_IDENTITY", None)
    monkeypatch.setattr(identity, "_fingerprint", lambda: "a source file changed")
    assert identity.build_identity(tmp_path)["xlac_build"] == identity.source_digest()
