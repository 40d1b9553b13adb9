"""Reading a program: MLIR text (pretty or generic), MLIR bytecode, a
StableHLO portable artifact (VHLO), a path to any of them, or an object
with ``.as_text()`` such as ``jax.jit(f).lower(x)``.
"""

from __future__ import annotations

import re

from xlac.errors import (
    UNKNOWN,
    CompileError,
    Diagnostic,
    collect_diagnostics,
    compile_error_from,
    error,
    format_location,
)
from xlac.frontend import jax_export, shardy_text
from xlac.frontend.source import source_to_bytes  # noqa: F401 - re-exported
from xlac.frontend.spmd import to_per_device
from xlac.mlir import ir, passmanager, stablehlo

_BYTECODE_MAGIC = b"ML\xefR"
_PARSE_HINT = "check that the input is StableHLO as MLIR text, bytecode or a portable artifact"


def parse_module(ctx: ir.Context, data: bytes, source_name: str) -> ir.Module:
    """Parse ``data`` into a module in ``ctx``; VHLO is upgraded to StableHLO.

    SPMD programs come out as the program one device runs
    (``xlac.frontend.spmd``); a ``jax.export`` artifact as the program in it.
    """
    module = read_module(ctx, data, source_name)
    if any(marker in data for marker in _SPMD_MARKERS):
        with ctx:
            to_per_device(module, source_name)
    return module


def read_module(ctx: ir.Context, data: bytes, source_name: str) -> ir.Module:
    """``data`` parsed and verified (VHLO upgraded), as given: what the
    isolated parser runs (``xlac.frontend.isolation``)."""
    data = jax_export.embedded_program(data) or data
    with ctx, collect_diagnostics(ctx) as diags:
        try:
            module = _parse_bytes(ctx, data, source_name, diags)
            _upgrade_vhlo(module)
            _check_names(module, source_name)
        except (ir.MLIRError, ValueError, RuntimeError, OverflowError, UnicodeError,
                RecursionError, MemoryError) as exc:
            raise _parse_error(exc, diags, data, source_name) from None
        return module


# Byte strings only SPMD or sharding-annotated programs contain (in text and bytecode).
_SPMD_MARKERS = (b"sdy.", b"sdy<", b"mhlo.sharding", b"SPMDFullToShardShape")


def _parse_bytes(ctx: ir.Context, data: bytes, source_name: str, diags) -> ir.Module:
    if data.startswith(_BYTECODE_MAGIC) and b"StableHLO" in data[:64]:
        try:
            return stablehlo.deserialize_portable_artifact(ctx, data)
        except ValueError:
            if not any(jax_export.is_shardy_bytecode_error(str(d)) for d in diags):
                raise
            del diags[:]
            diags.records.clear()
            text = jax_export.shardy_bytecode_as_text(data, source_name)
            return _parse_text(text.encode(), source_name)
    if data.startswith(_BYTECODE_MAGIC):
        return ir.Module.parse(data)
    return _parse_text(data, source_name)


def _parse_text(data: bytes, source_name: str) -> ir.Module:
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise CompileError(error("input is neither UTF-8 text nor MLIR bytecode", source_name),
                           _PARSE_HINT) from None
    text = _shardy_as_generic(text, source_name)
    try:
        op = ir.Operation.parse(text, source_name=source_name)
    except ir.MLIRError as exc:
        if "single top-level operation" not in str(exc):
            raise
        # Several top-level functions: wrap them as mlir-opt does. The prefix
        # goes on the line of the last attribute or type alias before them
        # (line 1 if none: aliases cannot be inside the module), so line
        # numbers in diagnostics stay right.
        at = _aliases_end(text)
        op = ir.Operation.parse(text[:at] + "module {" + text[at:] + "\n}",
                                source_name=source_name)
    if op.name != "builtin.module":   # a lone func.func gets an implicit module, as in mlir-opt
        module = ir.Module.create(op.location)
        module.body.append(op)
        return module
    return _as_module(op)


_ALIAS = re.compile(r"[#!][\w.$-]+\s*=")


def _aliases_end(text: str) -> int:
    """Where the alias definitions (``#map = ...``, ``!t = ...``) at the top of
    ``text`` end: the end of the last one's line, or 0."""
    end, offset = 0, 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if _ALIAS.match(stripped):
            end = offset + len(line.rstrip("\r\n"))
        elif stripped and not stripped.startswith("//"):
            break
        offset += len(line)
    return end


def _check_names(module: ir.Module, source_name: str) -> None:
    """Every op is one a loaded dialect defines, named in UTF-8.

    The context accepts unregistered ops (Shardy's are read that way), so a
    corrupted name (``"stablehao.add"``) parses, and passes then crash on it.
    A name that is not UTF-8 parses too, but aborts the process later, where
    the bindings turn it into a str inside a C++ walk; read here, outside any
    walk, it raises instead."""
    registered = module.context.is_registered_operation
    pending = [module.operation]                  # a stack, not recursion: nesting may be deep
    while pending:
        op = pending.pop()
        try:
            name = op.operation.name
            [getattr(named, "name", named) for named in op.attributes]
            pending.extend(inner for region in op.regions for block in region.blocks
                           for inner in block.operations)
        except Exception:  # noqa: BLE001 - the bindings' conversion error (no one class)
            raise CompileError(error("the program has an op or attribute name that is not "
                                     "UTF-8", source_name), "names must be UTF-8") from None
        if not registered(name) and not name.startswith(_READ_UNREGISTERED):
            shown = name if len(name) <= 80 else name[:80] + "..."
            raise CompileError(error(f"'{shown}' is not an op of any dialect xlac knows",
                                     _where(op, source_name)), _PARSE_HINT)


# Dialects read as unregistered ops on purpose: Shardy's (frontend/spmd.py), and
# xlac's own, defined with IRDL (which the registry does not list).
_READ_UNREGISTERED = ("sdy.", "xla.")


def _where(op, source_name: str) -> str:
    location = format_location(op.location)
    return location if location != UNKNOWN else source_name


def _shardy_as_generic(text: str, source_name: str) -> str:
    """Shardy ops in generic form, parsed as ops of an unregistered dialect."""
    if "sdy." not in text and "sdy<" not in text:
        return text
    try:
        text = shardy_text.to_generic(text) if shardy_text.has_pretty_shardy(text) else text
    except shardy_text.ShardyTextError as exc:
        raise CompileError(error(str(exc), source_name), _PARSE_HINT) from None
    ir.Context.current.allow_unregistered_dialects = True
    return text


def _as_module(op: ir.Operation) -> ir.Module:
    """Move a parsed builtin.module into an ``ir.Module``.

    ``Operation.parse`` keeps the file name in locations (``Module.parse``
    takes none), but the ExecutionEngine wants an ``ir.Module``.
    """
    module = ir.Module.create(op.location)
    for named in op.attributes:
        name = named if isinstance(named, str) else named.name
        module.operation.attributes[name] = op.attributes[name]
    for inner in list(op.regions[0].blocks[0].operations):
        module.body.append(inner)
    return module


def _upgrade_vhlo(module: ir.Module) -> None:
    if any(op.operation.name.startswith("vhlo.") for op in module.body.operations):
        passmanager.PassManager.parse("builtin.module(vhlo-legalize-to-stablehlo)").run(
            module.operation)


def _parse_error(exc, diags, data: bytes, source_name: str) -> CompileError:
    if isinstance(exc, CompileError):
        return exc
    if not data.strip():
        return CompileError(error("the input is empty", source_name), _PARSE_HINT)
    hint = _PARSE_HINT
    failure = compile_error_from(exc, diags, hint)
    if _error_at_end(exc, data) or any("remain" in r.message for r in failure.records):
        hint = "the input ends early: is the file truncated?"
    return CompileError([_name_unknown(r, source_name) for r in failure.records], hint)


def _name_unknown(record: Diagnostic, source_name: str) -> Diagnostic:
    """Bytecode diagnostics have no position; name the file at least."""
    if record.location in ("-:0:0", UNKNOWN, ""):
        return Diagnostic(source_name, record.severity, record.message, record.notes)
    return record


def _error_at_end(exc, data: bytes) -> bool:
    """Did the parser stop on the last line of the input?"""
    last_line = data.rstrip().count(b"\n") + 1
    for diag in getattr(exc, "error_diagnostics", []) or []:
        match = re.search(r":(\d+):\d+", str(diag.location))
        if match and int(match.group(1)) >= last_line:
            return True
    return False
