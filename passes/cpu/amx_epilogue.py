"""The elementwise consumer of an AMX matmul (a ReLU, a rounding to bf16, a
bias) applied to each chunk of C right after its kernel call, while the chunk
is in cache: no kernel of its own, no second pass over C.

xla-amx-contractions marks the consumer (`xla.amx_epilogue`: the schedules
leave it); xla-amx-calls finds it after bufferization and puts its body, as
16-lane vector ops (the same ops in the same order the elementwise schedule
runs), into the chunk loop."""

from __future__ import annotations

from xlac.mlir import ir

EPILOGUE = "xla.amx_epilogue"
LANES = 16


def mark_epilogues(matmuls: list[ir.Operation]) -> None:
    """Mark the one consumer of each of ``matmuls``' results (tensors) that
    the chunk loop can apply: an all-parallel generic with identity maps
    reading the result alone, whose body is scalar arith ops and constants."""
    for op in matmuls:
        uses = list(op.results[0].uses)
        if len(uses) == 1 and _elementwise(uses[0].owner, op.results[0]):
            uses[0].owner.attributes[EPILOGUE] = ir.UnitAttr.get()


def _elementwise(user, result: ir.Value) -> bool:
    op = user.operation if isinstance(user, ir.OpView) else user
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1 \
            or op.operands[0] != result:
        return False
    iterators = [str(t) for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    dims = ", ".join(f"d{i}" for i in range(len(iterators)))
    if any(t != "#linalg.iterator_type<parallel>" for t in iterators) or any(
            str(m) != f"affine_map<({dims}) -> ({dims})>" for m in ir.ArrayAttr(op.attributes["indexing_maps"])):
        return False
    block = op.regions[0].blocks[0]
    if any(True for _ in block.arguments[1].uses):
        return False
    inner = [o.operation for o in block.operations][:-1]
    local = {r for o in inner for r in o.results} | {block.arguments[0]}
    for o in inner:
        if not o.name.startswith("arith.") or len(o.regions) or len(o.results) != 1 \
                or any(isinstance(v.type, (ir.ShapedType, ir.IndexType)) for v in [*o.operands, *o.results]):
            return False
        if any(v not in local and not _constant(v) for v in o.operands):
            return False
    return True


def _constant(value: ir.Value) -> bool:
    return isinstance(value.owner, ir.OpView) and value.owner.operation.name == "arith.constant"


def find_epilogue(matmul: ir.Operation) -> tuple[ir.Operation | None, bool]:
    """(The marked consumer reading ``matmul``'s C (memrefs), where only
    allocations lie between them, or None; whether it may run in the
    matmul's chunks: not where its output is A or B, which other chunks
    still read (bufferization reuses buffers: x = relu(x @ w)); then it runs
    after them.)"""
    after = _following(matmul)
    while after and after[0].name in ("memref.alloc", "memref.alloca"):
        after.pop(0)
    if not after or after[0].name != "linalg.generic" or EPILOGUE not in after[0].attributes \
            or after[0].operands[0] != matmul.operands[2]:
        return None, False
    output = _root(after[0].operands[1])
    return after[0], output not in (_root(matmul.operands[0]), _root(matmul.operands[1]))


_VIEWS = ("memref.subview", "memref.cast", "memref.expand_shape", "memref.collapse_shape",
          "memref.reinterpret_cast", "memref.view")


def _root(value: ir.Value) -> ir.Value:
    """The buffer ``value`` is a view of."""
    while isinstance(value.owner, ir.OpView) and value.owner.operation.name in _VIEWS:
        value = value.owner.operation.operands[0]
    return value


def _following(op: ir.Operation) -> list[ir.Operation]:
    """The ops after ``op`` in its block."""
    for region in op.parent.regions:
        for block in region.blocks:
            ops = [o.operation for o in block.operations]
            if op in ops:
                return ops[ops.index(op) + 1:]
    return []


def unmark_epilogues(module_ops) -> None:
    """Drop the mark of consumers left behind (their matmul did not fit)."""
    for op in module_ops:
        if op.name == "linalg.generic" and EPILOGUE in op.attributes:
            del op.attributes[EPILOGUE]


def _vector(type_: ir.Type) -> str:
    return f"vector<{LANES}x{type_}>"


def epilogue_text(generic: ir.Operation, indices: str, c_type: str, out_type: str,
                  tag: str = "", store: tuple[str, str, str] | None = None) -> tuple[list[str], list[str]]:
    """(constants hoisted before the loop, the ops over 16 columns at
    ``indices`` of ``%c`` into ``%o``, or into ``store``'s (memref, indices,
    type)); ``tag`` makes the names distinct."""
    block = generic.regions[0].blocks[0]
    inner = [o.operation for o in block.operations]
    names: dict = {}
    hoisted, body = [], [f"{' ' * 8}%e{tag}_in = vector.load %c[{indices}] : {c_type}, "
                         f"{_vector(block.arguments[0].type)}"]
    names[block.arguments[0]] = f"%e{tag}_in"

    def name_of(value: ir.Value) -> str:
        if value not in names:                     # a constant from outside the body
            _constant_line(value.owner.operation, f"%e{tag}_k{len(hoisted)}", hoisted)
            names[value] = f"%e{tag}_k{len(hoisted) - 1}"
        return names[value]

    for index, op in enumerate(inner[:-1]):
        if op.name == "arith.constant":
            _constant_line(op, f"%e{tag}_k{len(hoisted)}", hoisted)
            names[op.results[0]] = f"%e{tag}_k{len(hoisted) - 1}"
            continue
        operands = [name_of(v) for v in op.operands]
        attributes = ", ".join(f"{a} = {op.attributes[a]}" for a in op.attributes)
        body.append(f"{' ' * 8}%e{tag}_{index} = \"{op.name}\"({', '.join(operands)})"
                    f"{' {' + attributes + '}' if attributes else ''} : "
                    f"({', '.join(_vector(v.type) for v in op.operands)}) -> {_vector(op.results[0].type)}")
        names[op.results[0]] = f"%e{tag}_{index}"
    yielded = inner[-1].operands[0]
    out, at, type_ = store or ("%o", indices, out_type)
    body.append(f"{' ' * 8}vector.store {name_of(yielded)}, {out}[{at}] : {type_}, {_vector(yielded.type)}")
    return hoisted, body


def _constant_line(op: ir.Operation, name: str, lines: list[str]) -> None:
    value = str(op.attributes["value"]).rsplit(" : ", 1)[0]
    lines.append(f"  {name} = arith.constant dense<{value}> : {_vector(op.results[0].type)}")

