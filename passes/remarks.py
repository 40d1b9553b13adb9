"""Emit MLIR remarks from a Python pass.

The bindings can only emit errors (``Location.emit_error``). Remarks come
from upstream's ``transform.debug.emit_remark_at``, run by the
``transform-interpreter`` pass: each op to remark on gets a temporary
``xla.remark_id`` attribute, a transform script matches it and emits the
message at the op's location. The remark then reaches the context's
diagnostic handlers like any other (``--verify-diagnostics`` sees it).
"""

from __future__ import annotations

import json

from xlac.mlir import ir, passmanager

_TAG = "xla.remark_id"


def emit_remarks(module: ir.Operation, remarks: list[tuple[ir.Operation, str]]) -> None:
    """Emit each ``(op, message)`` as a remark at ``op``'s location, in order."""
    if not remarks:
        return
    tagged: list[ir.Operation] = []          # not a dict: an op's hash changes with its attributes
    tags = []
    for op, _ in remarks:
        if op not in tagged:
            tagged.append(op)
        tags.append(tagged.index(op))
    for tag, op in enumerate(tagged):
        op.attributes[_TAG] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), tag)
    script = ir.Operation.parse(_script([(tag, message) for tag, (_, message) in zip(tags, remarks)]))
    ir.InsertionPoint(module.regions[0].blocks[0]).insert(script)
    try:
        passmanager.PassManager.parse("builtin.module(transform-interpreter)").run(module)
    finally:
        script.erase()
        for op in tagged:
            del op.attributes[_TAG]


def _script(remarks: list[tuple[int, str]]) -> str:
    lines = ["module attributes {transform.with_named_sequence} {",
             "  transform.named_sequence @__transform_main("
             "%root: !transform.any_op {transform.readonly}) {"]
    for k, (tag, message) in enumerate(remarks):
        lines.append(f"    %m{k} = transform.structured.match attributes "
                     f"{{{_TAG} = {tag} : i64}} in %root : (!transform.any_op) -> !transform.any_op")
        lines.append(f"    transform.debug.emit_remark_at %m{k}, {json.dumps(message)} "
                     ": !transform.any_op")
    lines += ["    transform.yield", "  }", "}"]
    return "\n".join(lines)
