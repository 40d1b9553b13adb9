"""A fresh MLIR context with every dialect xlac meets: StableHLO, CHLO and
xlac's own (``xla.fusion``, ``xla.yield``; dialects/README.md)."""

from __future__ import annotations

from xlac.dialects.xla import register_xla_dialect
from xlac.mlir import bare_context, ir


def new_context() -> ir.Context:
    ctx = bare_context()
    register_xla_dialect(ctx)
    return ctx
