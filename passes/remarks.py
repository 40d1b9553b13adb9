"""Emit MLIR remarks from a Python pass.

The bindings can only emit errors (``Location.emit_error``). Remarks come
from upstream's ``transform.debug.emit_remark_at``, run by the
``transform-interpreter`` pass: each op to remark on gets a temporary
``xla.remark`` attribute, a transform script matches them and emits each
message at its op's location. The remark then reaches the context's
diagnostic handlers like any other (``--verify-diagnostics`` sees it).
Inside ``collected_remarks()`` they go into a list instead.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager

from xlac.errors import Diagnostic, format_location
from xlac.mlir import ir, passmanager
from xlac.passes.base import post_order_positions

_TAG = "xla.remark"
# The expensive checks test every live handle at each transform: one handle
# per remarked op made them quadratic. The script is generated and only reads.
_INTERPRETER = "builtin.module(transform-interpreter{disable-expensive-checks=true})"


_SINKS = threading.local()            # this thread's collected_remarks() lists, innermost last


@contextmanager
def collected_remarks(into: list | None = None):
    """The remarks the Python passes run inside make, as ``Diagnostic``
    records in a list (``into``, or a new one), instead of MLIR diagnostics.

    Why: MLIR attaches to each remark on an op a note that prints the op,
    and printing an op numbers every value of its function, so thousands of
    remarks in one function are quadratic (a 10,000-op chain's fusion report:
    64 s). A caller that only reads the remarks (``exe.fusion_report()``)
    takes them here, and so does ``xla-opt``, into the list its diagnostic
    handler fills (so the order stays), dropping only that note."""
    found: list[Diagnostic] = [] if into is None else into
    stack = getattr(_SINKS, "stack", None) or []
    _SINKS.stack = [*stack, found]
    try:
        yield found
    finally:
        _SINKS.stack = stack


def emit_remarks(module: ir.Operation, remarks: list[tuple[ir.Operation, str]]) -> None:
    """Emit each ``(op, message)`` as a remark at ``op``'s location, in order.

    One match of the tag, split into a handle per op, serves every remark: a
    match per remark walked the whole module each time, and finding an op in
    a list of the ones tagged scanned it, both quadratic. What stays
    quadratic is MLIR's: each remark's note prints its op;
    ``collected_remarks()`` avoids it where no MLIR diagnostic is needed."""
    if not remarks:
        return
    sinks = getattr(_SINKS, "stack", None)
    if sinks:
        sinks[-1].extend(Diagnostic(format_location(op.location), "remark", message)
                         for op, message in remarks)
        return
    distinct: dict[ir.Operation, int] = {}      # filled before tagging: an op's hash
    for op, _ in remarks:                       # changes with its attributes
        distinct.setdefault(op.operation, len(distinct))
    position = post_order_positions(module, distinct)   # the match's order
    # an op outside ``module`` gets no remark (a match would not find it either)
    said = [(position[distinct[op.operation]], message) for op, message in remarks
            if position[distinct[op.operation]] >= 0]
    tagged = [op for op, index in distinct.items() if position[index] >= 0]
    if not tagged:
        return
    for op in tagged:
        op.attributes[_TAG] = ir.UnitAttr.get()
    script = ir.Operation.parse(_script(len(tagged), said))
    ir.InsertionPoint(module.regions[0].blocks[0]).insert(script)
    try:
        passmanager.PassManager.parse(_INTERPRETER).run(module)
    finally:
        script.erase()
        for op in tagged:
            del op.attributes[_TAG]


def _script(count: int, said: list[tuple[int, str]]) -> str:
    """Match the ``count`` tagged ops once; emit each (handle, message) of ``said``."""
    any_op = "!transform.any_op"
    lines = ["module attributes {transform.with_named_sequence} {",
             "  transform.named_sequence @__transform_main("
             f"%root: {any_op} {{transform.readonly}}) {{",
             f"    %all = transform.structured.match attributes {{{_TAG}}} in %root"
             f" : ({any_op}) -> {any_op}",
             f"    %op:{count} = transform.split_handle %all : ({any_op})"
             f" -> ({', '.join([any_op] * count)})"]
    for handle, message in said:
        lines.append(f"    transform.debug.emit_remark_at %op#{handle}, {json.dumps(message)} "
                     f": {any_op}")
    lines += ["    transform.yield", "  }", "}"]
    return "\n".join(lines)
