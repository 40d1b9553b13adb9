"""The shape of an artifact's metadata, checked before anything is taken from it.

The metadata says which symbol to call with which shapes: a value of the
wrong type there would surface later as a traceback (or a call with the
wrong buffers), so every field the loader reads is checked here first.
"""

from __future__ import annotations

import re

from xlac.dtypes import is_element_type

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")
_MAX_ELEMENTS = 1 << 48                 # more than any memory holds: a forged shape
_FIELDS = {"format": int, "xlac": str, "xlac_build": str, "torch-mlir": str, "machine": str,
           "target": str, "cpu_features": list, "entries": dict}


def check_metadata(metadata) -> None:
    """ValueError saying what is wrong with ``metadata`` (an artifact's JSON)."""
    if not isinstance(metadata, dict):
        raise ValueError(f"a JSON {type(metadata).__name__}, not an object")
    for field, kind in _FIELDS.items():
        if not isinstance(metadata.get(field), kind) or isinstance(metadata.get(field), bool):
            raise ValueError(f"'{field}' is {_shown(metadata.get(field))}, "
                             f"not a {kind.__name__}")
    if not all(isinstance(feature, str) for feature in metadata["cpu_features"]):
        raise ValueError("'cpu_features' holds something other than names")
    for name, entry in metadata["entries"].items():
        _check_entry(name, entry)
    reports = metadata.get("fusion_reports", {})
    if not isinstance(reports, dict) or not all(isinstance(r, str) for r in reports.values()):
        raise ValueError("'fusion_reports' is not a table of texts")


def _check_entry(name: str, entry) -> None:
    where = f"entry '{name}'"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is {_shown(entry)}, not an object")
    if not isinstance(entry.get("symbol"), str) or not _IDENTIFIER.fullmatch(entry["symbol"]):
        raise ValueError(f"{where} has symbol {_shown(entry.get('symbol'))}, "
                         "not a C identifier")
    for side in ("inputs", "outputs"):
        specs = entry.get(side)
        if not isinstance(specs, list):
            raise ValueError(f"{where} '{side}' is {_shown(specs)}, not a list")
        for index, spec in enumerate(specs):
            _check_spec(spec, f"{where} {side}[{index}]")
    grid = entry.get("spmd", [1, 1])
    if not (isinstance(grid, list) and len(grid) == 2 and all(_count(n, 1) for n in grid)):
        raise ValueError(f"{where} has device grid {_shown(grid)}")


def _check_spec(spec, where: str) -> None:
    if not isinstance(spec, dict) or not isinstance(spec.get("shape"), list):
        raise ValueError(f"{where} is {_shown(spec)}, not {{'shape': [...], 'type': ...}}")
    elements = 1
    for dim in spec["shape"]:
        if not _count(dim, 0):
            raise ValueError(f"{where} has dimension {_shown(dim)}")
        elements *= dim
    if elements > _MAX_ELEMENTS or len(spec["shape"]) > 64:
        raise ValueError(f"{where} has shape {spec['shape']}: more than any memory holds")
    if not is_element_type(spec.get("type") if isinstance(spec.get("type"), str) else ""):
        raise ValueError(f"{where} has element type {_shown(spec.get('type'))}")


def _count(value, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and least <= value < 1 << 40


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
