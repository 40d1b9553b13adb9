"""What users hand ``xlac.compile``, as bytes: MLIR text, bytes, a path, or
an object with ``.as_text()`` (``jax.jit(f).lower(x)``, a ``jax.export``
artifact). No MLIR here: the bytes key the cache before anything is parsed.
"""

from __future__ import annotations

import os
from pathlib import Path

from xlac.errors import CompileError, error

_PROGRAM_SUFFIXES = (".mlir", ".mlirbc", ".bc", ".stablehlo", ".vhlo")
_NOT_STABLEHLO = "xlac reads StableHLO: pass jax.jit(f).lower(x) (the Lowered, before .compile())"


def source_to_bytes(source) -> tuple[bytes, str]:
    """The raw program and the name its diagnostics should carry."""
    if callable(getattr(source, "mlir_module", None)):        # jax.export.Exported
        return source.mlir_module().encode(), "<jax-exported>"
    if hasattr(source, "as_text") and not isinstance(source, (str, bytes)):
        _refuse_compiled(source)
        return _checked_text(_text_of_staged(source), "<jax-lowered>").encode(), "<jax-lowered>"
    if isinstance(source, os.PathLike):
        return _read_file(Path(source)), str(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<bytes>"
    if isinstance(source, str):
        if _names_a_file(source):
            return _read_file(Path(source).expanduser()), source
        return _checked_text(source, "<input>").encode(), "<input>"
    raise CompileError(error(f"cannot compile an object of type "
                       f"{type(source).__name__}"),
                       "pass MLIR text, bytes, a path or an object with .as_text() "
                       "such as jax.jit(f).lower(x)")


def _names_a_file(text: str) -> bool:
    """Is ``text`` a path rather than a program? A program has braces or
    parentheses; a file name on one line that exists, or that ends like a
    program file, is a path (a missing one is reported as such)."""
    if "\n" in text or len(text) > 4096 or not text.strip():
        return False
    path = Path(text).expanduser()
    try:
        if path.is_file():
            return True
    except OSError:
        return False
    return text.endswith(_PROGRAM_SUFFIXES) or not any(c in text for c in "{}()")


def _refuse_compiled(source) -> None:
    """A jax ``Compiled`` holds XLA's optimized HLO, not the StableHLO xlac reads."""
    if type(source).__name__ == "Compiled" and type(source).__module__.startswith("jax"):
        raise CompileError(error("this is a jax Compiled: XLA has already compiled it, and its "
                                 "text (Compiled.as_text()) is XLA's optimized HLO, not StableHLO"),
                           _NOT_STABLEHLO)


def _checked_text(text: str, source_name: str) -> str:
    if text.lstrip().startswith(("HloModule", "ENTRY ")):
        raise CompileError(error("this is HLO text (from Compiled.as_text() or an XLA dump), "
                                 "not StableHLO", source_name), _NOT_STABLEHLO + ", or its "
                           ".as_text(), or a file JAX_DUMP_IR_TO=DIR wrote")
    return text


def _text_of_staged(source) -> str:
    try:
        return source.as_text(dialect="stablehlo")
    except TypeError:
        return source.as_text()


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CompileError(error(f"cannot read file: {exc.strerror}", str(path)),
                           "check the path; a program given as a str must be MLIR text or "
                           "the path of an existing file") from None
