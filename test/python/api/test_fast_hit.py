"""A cache hit without MLIR: the input's bytes key the cache before any parse,
``import xlac`` loads nothing heavy, and the build identity is memoized."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import subprocess
import sys

import numpy as np
import pytest

import xlac
from xlac import cache, checksum
from xlac.cache import identity
from xlac.options import Options
from xlac.signature import TensorSpec

PROGRAM = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
HEAVY = ("torch_mlir", "numpy", "jax", "scipy", "ml_dtypes", "importlib.metadata", "tqdm")
# Standard modules a hit used to import and no longer does (docs/compile-time.md):
# dataclasses (it imports inspect), typing, hashlib (OpenSSL), platform, threading...
STDLIB = ("dataclasses", "inspect", "typing", "hashlib", "_hashlib", "platform", "threading",
          "copy", "concurrent.futures", "tempfile", "logging")
# xlac modules only a miss, an SPMD program or a JAX source needs
XLAC = ("xlac.frontend.pytrees", "xlac.spmd.grid", "xlac.pipeline.text", "xlac.debug.dump")


def fresh_process(code: str, cache_dir, watched=HEAVY) -> list[str]:
    """Run ``code`` in a new interpreter; the ``watched`` modules it ended with loaded."""
    check = f"import sys\n{code}\nprint([m for m in {tuple(watched)!r} if m in sys.modules])"
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


def test_a_cuda_hit_in_a_fresh_process_is_not_parsed(tmp_path):
    """A cuda program's code (PTX and its host schedule) loads from the input's key too."""
    source = tmp_path / "p.mlir"
    source.write_text(PROGRAM)
    cache_dir = tmp_path / "cache"
    compile_it = (f"import xlac, xlac.cache\nexe = xlac.compile({str(source)!r}, 'cuda')\n"
                  "xlac.cache.flush()\nassert exe.target == 'cuda'")
    parsing = ("xlac.frontend.isolation",)
    assert fresh_process(compile_it, cache_dir, parsing) == ["xlac.frontend.isolation"]
    assert fresh_process(compile_it, cache_dir, parsing + HEAVY) == []   # nor MLIR, nor numpy


def test_a_hit_imports_no_standard_module_it_can_do_without(tmp_path):
    source = tmp_path / "p.mlir"
    source.write_text(PROGRAM)
    cache_dir = tmp_path / "cache"
    compile_it = f"import xlac, xlac.cache\nexe = xlac.compile({str(source)!r})\nxlac.cache.flush()"
    fresh_process(compile_it, cache_dir)                                 # the miss stores it
    at_start = fresh_process("pass", cache_dir, STDLIB + XLAC)           # a site hook's own
    loaded = fresh_process(compile_it, cache_dir, STDLIB + XLAC)
    assert [m for m in loaded if m not in at_start] == []


def test_records_still_work_with_dataclasses_functions():
    options = Options(cache_dir="")
    assert options.cache_dir is None and Options().cache_dir is not None   # __post_init__, factory
    assert dataclasses.is_dataclass(options) and Options.cpu == "host"
    assert [f.name for f in dataclasses.fields(Options)][:2] == ["dump_to", "timing"]
    assert dataclasses.replace(options, cpu="x86-64-v3") == options.replace(cpu="x86-64-v3")
    assert options.replace(num_threads=3) != options and hash(options) == hash(Options(cache_dir=""))
    spec = TensorSpec((2, None), "f32")
    assert repr(spec) == "TensorSpec(shape=(2, None), element_type='f32')"
    assert dataclasses.asdict(spec) == {"shape": (2, None), "element_type": "f32"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.shape = (1,)
    with pytest.raises(TypeError):
        TensorSpec((1,))


@pytest.mark.parametrize("size", [0, 1000, checksum.SMALL + 1])
def test_both_sha256_implementations_agree(size):
    data = bytes(range(256)) * (size // 256 + 1)
    hasher = checksum.sha256(len(data))
    hasher.update(data)
    assert hasher.hexdigest() == hashlib.sha256(data).hexdigest()


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
