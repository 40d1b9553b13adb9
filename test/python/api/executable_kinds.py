"""One program as every kind of executable: JIT, loaded (``xla-compile`` then
``xlac.load``), deserialized, and dynamic-shape. Shared by the input and
thread tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import xlac
from xlac.aot import compile_library

KINDS = ("jit", "loaded", "deserialized", "dynamic")


def program(types: list[str], shape: str = "2x3") -> str:
    """``@main`` returning each argument plus itself (``or`` for i1)."""
    args = ", ".join(f"%a{i}: tensor<{shape}x{t}>" for i, t in enumerate(types))
    results = ", ".join(f"tensor<{shape}x{t}>" for t in types)
    body = "".join(f"  %r{i} = stablehlo.{'or' if t == 'i1' else 'add'} %a{i}, %a{i} : "
                   f"tensor<{shape}x{t}>\n" for i, t in enumerate(types))
    names = ", ".join(f"%r{i}" for i in range(len(types)))
    return f"func.func @main({args}) -> ({results}) {{\n{body}  return {names} : {results}\n}}\n"


def executables(types: list[str], directory: Path) -> dict[str, xlac.Executable]:
    """The four kinds, each of the same static program (dynamic: ``?x3``)."""
    text = program(types)
    jit = xlac.compile(text, cache=False)
    library = directory / "libkinds.so"
    compile_library(text.encode(), "kinds.mlir", library)
    return {"jit": jit, "loaded": xlac.load(library),
            "deserialized": xlac.deserialize(jit.serialize()),
            "dynamic": xlac.compile(program(types, "?x3"), cache=False)}


def expected(value, dtype: np.dtype) -> np.ndarray:
    """What the program returns for an accepted argument: doubled (``or``-ed)."""
    array = np.asarray(value).astype(dtype)
    return array | array if dtype == np.bool_ else array + array
