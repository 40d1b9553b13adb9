"""xla-run's ``--input`` grammar and result printing, as iree-run-module.

    --input=2x3xf32=1,2,3,4,5,6     shape x type = values (commas, spaces or [ ])
    --input=4xf32=0                 one value fills the whole tensor
    --input=f32=1.5                 a 0-d tensor
    --input=@x.npy                  a numpy file
"""

from __future__ import annotations

import re

import numpy as np

from xlac.dtypes import numpy_dtype
from xlac.errors import ToolError

_TYPE = re.compile(r"^((?:\d+x)*)([a-z][a-z0-9<>]*)$")


def parse_input(spec: str) -> np.ndarray:
    """One ``--input`` value as an array; ToolError says what is wrong."""
    if spec.startswith("@"):
        return _load_npy(spec[1:])
    type_text, sep, values = spec.partition("=")
    match = _TYPE.match(type_text.strip())
    if not match or not sep:
        raise ToolError(f"xla-run: error: bad --input '{spec}': expected SHAPExTYPE=VALUES "
                        "such as 2x3xf32=1,2,3,4,5,6, or @file.npy")
    shape = tuple(int(d) for d in match.group(1).split("x") if d)
    dtype = _dtype(match.group(2), spec)
    return _fill(shape, dtype, _values(values, spec), spec)


def _load_npy(path: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ToolError(f"xla-run: error: cannot read --input=@{path}: {exc}") from None


def _dtype(element: str, spec: str) -> np.dtype:
    try:
        return numpy_dtype(element)
    except ValueError:
        raise ToolError(f"xla-run: error: bad --input '{spec}': unknown element type "
                        f"'{element}' (try f32, i32, ui8, i1, bf16 ...)") from None


def _values(text: str, spec: str) -> list[str]:
    return [v for v in re.split(r"[\s,\[\]]+", text.strip()) if v]


def _fill(shape, dtype, values: list[str], spec: str) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 1
    try:
        if dtype == np.bool_:
            parsed = [v.lower() in ("1", "true") for v in values]
        else:
            parsed = [complex(v) if dtype.kind == "c" else float(v) if dtype.kind == "f"
                      or dtype.name == "bfloat16" or "float8" in dtype.name else int(v, 0)
                      for v in values]
    except ValueError as exc:
        raise ToolError(f"xla-run: error: bad value in --input '{spec}': {exc}") from None
    if len(parsed) == 1:
        return np.full(shape, parsed[0], dtype=dtype)
    if len(parsed) != count:
        raise ToolError(f"xla-run: error: --input '{spec}' has {len(parsed)} values for "
                        f"a shape of {count} elements")
    return np.array(parsed, dtype=dtype).reshape(shape)


def format_result(array: np.ndarray, element_type: str) -> str:
    """``2x3xf32=[1 2 3][4 5 6]``: iree-run-module's spelling."""
    shape = "x".join(str(d) for d in array.shape)
    prefix = f"{shape}x{element_type}" if shape else element_type
    return f"{prefix}={_nested(array)}"


def _nested(array: np.ndarray) -> str:
    if array.ndim == 0:
        return _scalar(array[()])
    if array.ndim == 1:
        return "[" + " ".join(_scalar(v) for v in array) + "]" if array.size else "[]"
    return "".join(_nested(sub) for sub in array)


def _scalar(value) -> str:
    if isinstance(value, (np.bool_, bool)):
        return "1" if value else "0"
    if isinstance(value, (np.complexfloating, complex)):
        return f"{value.real:g}{value.imag:+g}j"
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    return f"{float(value):g}"


def max_difference(got: np.ndarray, want: np.ndarray) -> str:
    """Largest absolute (and relative) difference, NaNs in the same places ignored."""
    if got.shape != want.shape:
        return f"shape mismatch {got.shape} vs {want.shape}"
    if got.dtype.kind in "biu":
        return str(int(np.max(np.abs(got.astype(np.int64) - want.astype(np.int64)), initial=0)))
    a, b = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64), \
        want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    diff = np.where(same, 0, np.abs(a - b))
    scale = np.where(same, 1, np.maximum(np.abs(b), np.finfo(np.float64).tiny))
    return f"{float(np.max(diff, initial=0)):.3g} (relative {float(np.max(diff / scale, initial=0)):.3g})"


def check_outputs(specs: list[str], results: int) -> None:
    """``--output`` goes one per result, in order (as iree-run-module's): a
    count that differs would save some results silently and drop others."""
    if not specs:
        return
    if len(specs) != results:
        raise ToolError(f"xla-run: error: the program has {results} result(s) but "
                        f"{len(specs)} --output was given: give one --output per result, in "
                        "order (@file.npy writes, +file.npy appends, --output= skips one)")
    for spec in specs:
        if spec and spec[0] not in "@+":
            raise ToolError(f"xla-run: error: bad --output '{spec}': expected @file.npy "
                            "(write), +file.npy (append) or nothing (skip)")


def save_outputs(outputs: list[np.ndarray], specs: list[str]) -> None:
    """Each result to its ``--output``: ``@`` writes a file, ``+`` appends to it."""
    for value, spec in zip(outputs, specs):
        if not spec:
            continue
        with open(spec[1:], "ab" if spec[0] == "+" else "wb") as handle:
            np.save(handle, value)


def check_input_count(inputs: list, specs, entry: str) -> None:
    """Too few or too many ``--input``: say what the entry takes, with an example."""
    if len(inputs) == len(specs):
        return
    example = " ".join(f"--input={example_input(spec)}" for spec in specs) or "no --input"
    raise ToolError(f"xla-run: error: @{entry} expected {len(specs)} argument(s) "
                    f"({', '.join(str(s) for s in specs)}), got {len(inputs)}: give one "
                    f"--input per argument, in order, e.g. {example}")


def example_input(spec) -> str:
    """``4x8xf32=0``: an ``--input`` of the spec's shape (``?`` dims as 1)."""
    dims = "".join(f"{1 if d is None else d}x" for d in spec.shape)
    return f"{dims}{spec.element_type}=0"
