"""Large constants leave the code (xla-constants-to-arguments,
xla-constant-arguments-to-globals, xla-constant-table, xlac.targets.cpu.constants):
the compiled function owns their bytes, LLVM never sees them, a library xlac
loads carries them beside its code, and the program computes what it computes
with the same values passed as arguments, bit for bit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xlac
from xlac.artifact import container
from xlac.options import Options
from xlac.reference.server import shared_server
from xlac.targets.cpu import constant_data, pieces

BIN = Path(sys.executable).parent
RNG = np.random.default_rng(7)
# name -> (value, how the program holds it); each is over the 4 kB threshold
WEIGHTS = {
    "w": (RNG.standard_normal((64, 32)).astype(np.float32), "dense"),
    "bias": (RNG.standard_normal((32, 32)).astype(np.float32), "resource"),
    "scale": (RNG.standard_normal((64, 32)).astype(ml_dtypes.bfloat16), "dense"),
    "table": (RNG.integers(-128, 128, (64, 64)).astype(np.int8), "resource"),
}
_ELEMENT = {"float32": "f32", "bfloat16": "bf16", "int8": "i8"}


def _type(value: np.ndarray) -> str:
    return f"tensor<{'x'.join(map(str, value.shape))}x{_ELEMENT[value.dtype.name]}>"


def _program(as_constants: bool, weights=WEIGHTS) -> str:
    """x [8, 64] through the weights: a dot, a loop, a branch, a reduce whose
    body holds a large constant of its own (it stays one)."""
    lines, params, resources = [], ["%x: tensor<8x64xf32>", "%p: tensor<i1>"], []
    for name, (value, form) in weights.items():
        if not as_constants:
            params.append(f"%{name}: {_type(value)}")
        elif form == "dense":
            lines.append(f'%{name} = stablehlo.constant dense<"0x{value.tobytes().hex()}"> '
                         f": {_type(value)}")
        else:
            lines.append(f"%{name} = stablehlo.constant dense_resource<{name}> : {_type(value)}")
            resources.append(f'{name}: "0x{_blob(value)}"')
    body = "\n  ".join(lines + [
        "%s = stablehlo.convert %scale : (tensor<64x32xbf16>) -> tensor<64x32xf32>",
        "%ws = stablehlo.multiply %w, %s : tensor<64x32xf32>",
        "%h = stablehlo.dot_general %x, %ws, contracting_dims = [1] x [0]"
        " : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>",
        "%zero = stablehlo.constant dense<0> : tensor<i32>",
        "%loop:2 = stablehlo.while(%i = %zero, %acc = %h) : tensor<i32>, tensor<8x32xf32>",
        "  cond {",
        "    %n = stablehlo.constant dense<3> : tensor<i32>",
        "    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>",
        "    stablehlo.return %c : tensor<i1>",
        "  } do {",
        "    %one = stablehlo.constant dense<1> : tensor<i32>",
        "    %j = stablehlo.add %i, %one : tensor<i32>",
        "    %b = stablehlo.slice %bias [0:8, 0:32] : (tensor<32x32xf32>) -> tensor<8x32xf32>",
        "    %next = stablehlo.add %acc, %b : tensor<8x32xf32>",
        "    stablehlo.return %j, %next : tensor<i32>, tensor<8x32xf32>",
        "  }",
        "%picked = \"stablehlo.if\"(%p) ({",
        "  %t = stablehlo.convert %table : (tensor<64x64xi8>) -> tensor<64x64xi32>",
        "  stablehlo.return %t : tensor<64x64xi32>",
        "}, {",
        "  %t = stablehlo.convert %table : (tensor<64x64xi8>) -> tensor<64x64xi32>",
        "  %u = stablehlo.negate %t : tensor<64x64xi32>",
        "  stablehlo.return %u : tensor<64x64xi32>",
        "}) : (tensor<i1>) -> tensor<64x64xi32>",
        "%zf = stablehlo.constant dense<0.0> : tensor<f32>",
        "%rows = stablehlo.reduce(%loop#1 init: %zf) across dimensions = [1]"
        " : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>",
        "  reducer(%a: tensor<f32>, %b: tensor<f32>) {",
        f"    %big = stablehlo.constant dense<\"0x{_KEPT.tobytes().hex()}\"> : tensor<2048xf32>",
        "    %first = stablehlo.slice %big [5:6] : (tensor<2048xf32>) -> tensor<1xf32>",
        "    %k = stablehlo.reshape %first : (tensor<1xf32>) -> tensor<f32>",
        "    %sum = stablehlo.add %a, %b : tensor<f32>",
        "    %r = stablehlo.add %sum, %k : tensor<f32>",
        "    stablehlo.return %r : tensor<f32>",
        "  }",
        "return %loop#1, %picked, %rows : tensor<8x32xf32>, tensor<64x64xi32>, tensor<8xf32>",
    ])
    text = (f"func.func public @main({', '.join(params)}) -> (tensor<8x32xf32>, "
            f"tensor<64x64xi32>, tensor<8xf32>) {{\n  {body}\n}}\n")
    if resources:
        text += "{-#\n  dialect_resources: {\n    builtin: {\n      " + \
            ",\n      ".join(resources) + "\n    }\n  }\n#-}\n"
    return text


_KEPT = np.arange(2048, dtype=np.float32) / 1024


def _blob(value: np.ndarray) -> str:
    """A resource blob's hex: its alignment (4 bytes, little-endian), its bytes."""
    return (16).to_bytes(4, "little").hex() + value.tobytes().hex()


X = RNG.standard_normal((8, 64)).astype(np.float32)
ARGUMENTS = [value for value, _ in WEIGHTS.values()]


def _options(**changes) -> Options:
    return Options.from_env().replace(**{"cache_dir": None, "progress": "off", **changes})


def _compile(text: str, **changes) -> xlac.Executable:
    return xlac.compile(text, options=_options(**changes), cache=False)


def _same(got, want) -> None:
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@pytest.fixture(scope="module")
def with_arguments():
    """The program with its weights passed in, and its results for both predicates."""
    exe = _compile(_program(as_constants=False))
    return {p: exe(X, np.array(p), *ARGUMENTS) for p in (True, False)}


@pytest.fixture(scope="module")
def with_constants() -> xlac.Executable:
    return _compile(_program(as_constants=True))


def test_constants_give_the_bits_the_arguments_give(with_constants, with_arguments):
    assert len(with_constants.signature.inputs) == 2          # x and p: the weights are its own
    for p in (True, False):
        _same(with_constants(X, np.array(p)), with_arguments[p])


def test_constants_agree_with_the_interpreter(with_constants):
    """The interpreter is given the weights as arguments (its parser predates
    the resource syntax this MLIR writes)."""
    for p in (True, False):
        got = with_constants(X, np.array(p))
        want = shared_server().run(_program(as_constants=False).encode(),
                                   [X, np.array(p), *ARGUMENTS])
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        _same(got[1:2], want[1:2])
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-4)


def test_the_weights_never_reach_llvm(with_constants):
    """The LLVM dialect reads external globals; the values stay in the module's
    attribute (and its resources), which LLVM never sees. The reduce body's
    constant was hoisted out of it by the ingest's canonicalize: its body reads
    the entry's argument, and lowers."""
    stablehlo = with_constants.as_text("stablehlo")
    assert stablehlo.count("xla.constant = ") == len(WEIGHTS) + 1
    text = with_constants.as_text("llvm")
    lines = text[:text.find("{-#")].splitlines()       # the resources' blobs: the attribute's
    head = next(line for line in lines if line.startswith("module attributes {"))
    assert "xla.constant_arguments" in head
    code = "\n".join(line for line in lines if line is not head)
    assert "__xlac_constant_" in code
    for value in [*ARGUMENTS, _KEPT]:                # the values: in the attribute, not the code
        assert value.tobytes()[:32].hex().upper() not in code.upper()
    for stage in with_constants.stages:                    # every stage still prints
        assert with_constants.as_text(stage)


_MATMUL = ("contracting_dims = [1] x [0] : (tensor<32x32xf32>, tensor<32x32xf32>) "
           "-> tensor<32x32xf32>")


def test_kernels_over_different_weights_are_one_function():
    """Two layers alike but for their weights: one kernel function, as with
    the weights as arguments (each weight is passed in, not copied in)."""
    weights = [RNG.standard_normal((32, 32)).astype(np.float32) for _ in range(2)]

    def layers(as_constants: bool) -> str:
        reads = [f"%w{k} = stablehlo.constant dense_resource<w{k}> : tensor<32x32xf32>"
                 for k in range(2)] if as_constants else []
        params = "%x: tensor<32x32xf32>" + ("" if as_constants else
                                             ", %w0: tensor<32x32xf32>, %w1: tensor<32x32xf32>")
        text = (f"func.func public @main({params}) -> tensor<32x32xf32> {{\n  "
                + "\n  ".join(reads + [
                    f"%a = stablehlo.dot_general %x, %w0, {_MATMUL}",
                    "%t = stablehlo.tanh %a : tensor<32x32xf32>",
                    f"%b = stablehlo.dot_general %t, %w1, {_MATMUL}",
                    "%u = stablehlo.tanh %b : tensor<32x32xf32>",
                    "return %u : tensor<32x32xf32>"]) + "\n}\n")
        if as_constants:
            text += "{-#\n  dialect_resources: {\n    builtin: {\n      " + ",\n      ".join(
                f'w{k}: "0x{_blob(w)}"' for k, w in enumerate(weights)) + "\n    }\n  }\n#-}\n"
        return text

    x = RNG.standard_normal((32, 32)).astype(np.float32)
    kept, passed = _compile(layers(True)), _compile(layers(False))
    _same(kept(x), passed(x, *weights))
    functions = [exe.as_text("llvm").split("{-#")[0].count("llvm.func @xla_kernel")
                 for exe in (kept, passed)]
    assert functions[0] == functions[1]


def _weights_in(data: bytes) -> list[bool]:
    return [value.tobytes() in data for value in ARGUMENTS]


def test_pieces_carry_the_constants_beside_their_library(monkeypatch, with_arguments):
    """The library a program in pieces runs from links no weight byte (its
    table of their addresses is filled at load); its artifact carries them
    after the library, where a load finds them again."""
    monkeypatch.setattr(pieces, "PIECES_MIN_BYTES", 0)
    exe = _compile(_program(as_constants=True))
    assert isinstance(exe.function, pieces.PiecesFunction)
    _same(exe(X, np.array(False)), with_arguments[False])
    blob = exe.serialize()
    body, metadata = container.unpack(blob)
    code = constant_data.code_of(memoryview(body), metadata)
    assert _weights_in(bytes(code)) == [False] * len(ARGUMENTS)
    assert _weights_in(body[len(code):]) == [True] * len(ARGUMENTS)
    again = xlac.deserialize(blob)
    _same(again(X, np.array(True)), with_arguments[True])
    _same(again(X, np.array(False)), with_arguments[False])


def test_a_jit_executable_serializes_its_constants_beside_its_code(with_constants,
                                                                   with_arguments):
    body, metadata = container.unpack(with_constants.serialize())
    code = constant_data.code_of(memoryview(body), metadata)
    assert len(metadata[constant_data.KEY]["entries"]["main"]) == len(WEIGHTS) + 1
    assert _weights_in(bytes(code)) == [False] * len(ARGUMENTS)


def test_an_artifact_placing_a_constant_outside_it_is_refused(with_constants):
    body, metadata = container.unpack(with_constants.serialize())
    spans = metadata[constant_data.KEY]["entries"]["main"]
    spans[-1] = [spans[-1][0], len(body)]                     # past its end
    with pytest.raises(container.ArtifactError, match="places a constant outside it"):
        xlac.deserialize(container.pack(body, metadata))


_HIT = """
import sys, numpy as np, xlac, xlac.cache
from xlac.targets.cpu import pieces
if sys.argv[1] == "pieces":
    pieces.PIECES_MIN_BYTES = 0
exe = xlac.compile(sys.argv[2])
x = np.load(sys.argv[3])
for p in (True, False):
    for k, out in enumerate(exe(x, np.array(p))):
        np.save(f"{sys.argv[4]}_{p}_{k}.npy", out)
xlac.cache.flush()
print(type(exe.function).__name__)
"""


@pytest.mark.parametrize("how", ["jit", "pieces"])
def test_a_cache_hit_in_a_fresh_process_reads_the_constants(tmp_path, how, with_arguments):
    """A miss and then a hit, each in a process of its own: the hit's library
    (from the cache entry) reads the constants the entry carries beside it."""
    source = tmp_path / "model.mlir"
    source.write_text(_program(as_constants=True))
    np.save(tmp_path / "x.npy", X)
    env = {"XLAC_CACHE_DIR": str(tmp_path / "cache"), "XLAC_PROGRESS": "off",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    kinds = []
    for run in ("miss", "hit"):
        done = subprocess.run([sys.executable, "-c", _HIT, how, str(source), str(tmp_path / "x.npy"),
                               str(tmp_path / run)], capture_output=True, text=True, timeout=600,
                              env=env)
        assert done.returncode == 0, done.stderr
        kinds.append(done.stdout.split()[-1])
        for p in (True, False):
            got = [np.load(tmp_path / f"{run}_{p}_{k}.npy") for k in range(3)]
            _same(got, with_arguments[p])
    assert kinds[0] == ("PiecesFunction" if how == "pieces" else "CpuFunction")
    assert kinds[1] == "LibraryFunction"                   # the entry's library: a hit


def test_a_serialized_executable_carries_its_constants(with_constants, with_arguments):
    again = xlac.deserialize(with_constants.serialize())
    _same(again(X, np.array(True)), with_arguments[True])


def test_a_changed_constant_is_a_cache_miss(tmp_path, with_arguments):
    options = _options(cache_dir=str(tmp_path))
    first = xlac.compile(_program(as_constants=True), options=options)
    changed = dict(WEIGHTS, bias=(WEIGHTS["bias"][0] + 1, "resource"))
    second = xlac.compile(_program(True, changed), options=options)
    _same(first(X, np.array(True)), with_arguments[True])
    got = second(X, np.array(True))
    assert not np.array_equal(got[0], with_arguments[True][0])
    np.testing.assert_allclose(got[0], with_arguments[True][0] + 3, rtol=1e-5, atol=1e-5)


def test_a_c_program_calls_a_library_with_constants(tmp_path, with_arguments):
    """xla-compile's library holds the constants in read-only data, and the
    table of their addresses the code reads: C passes x and p only."""
    compiler = shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    (tmp_path / "model.mlir").write_text(_program(as_constants=True))
    done = subprocess.run([str(BIN / "xla-compile"), str(tmp_path / "model.mlir"), "-o",
                           str(tmp_path / "libmodel.so"), "--header", str(tmp_path / "model.h")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    X.tofile(tmp_path / "x.bin")
    (tmp_path / "call.c").write_text(_C_CALLER)
    subprocess.run([compiler, "-o", str(tmp_path / "call"), str(tmp_path / "call.c"),
                    f"-I{tmp_path}", f"-L{tmp_path}", "-lmodel", f"-Wl,-rpath,{tmp_path}"],
                   check=True, timeout=120)
    run = subprocess.run([str(tmp_path / "call")], cwd=tmp_path, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    want = with_arguments[True]
    assert (tmp_path / "out0.bin").read_bytes() == want[0].tobytes()
    assert (tmp_path / "out1.bin").read_bytes() == want[1].tobytes()
    loaded = xlac.load(tmp_path / "libmodel.so")
    _same(loaded(X, np.array(True)), want)
    body, metadata = container.read(tmp_path / "libmodel.so")
    assert constant_data.KEY not in metadata and _weights_in(body) == [True] * len(ARGUMENTS)


_C_CALLER = r"""
#include <stdio.h>
#include "model.h"

int main(void) {
  static float x[8 * 64], out0[8 * 32], out2[8];
  static int out1[64 * 64];
  unsigned char p = 1;
  FILE *f = fopen("x.bin", "rb");
  if (!f || fread(x, sizeof x, 1, f) != 1) return 2;
  fclose(f);
  const void *inputs[] = {x, &p};
  void *outputs[] = {out0, out1, out2};
  if (model_main(inputs, outputs) != 0) return 3;
  f = fopen("out0.bin", "wb"); fwrite(out0, sizeof out0, 1, f); fclose(f);
  f = fopen("out1.bin", "wb"); fwrite(out1, sizeof out1, 1, f); fclose(f);
  return 0;
}
"""
