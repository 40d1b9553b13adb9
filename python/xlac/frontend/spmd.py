"""SPMD programs as JAX writes them -> the program one device runs.

xlac runs one process per device, each the same per-device program, so the
frontend turns what JAX exports into that program:

* **Shardy** (``sdy.mesh``, one ``sdy.manual_computation`` per entry, from
  ``jax.shard_map``): the manual computation's region, whose arguments have
  the local shard shapes, becomes the function; every mesh axis must be
  manual (an automatic axis needs XLA's SPMD partitioner).
* **GSPMD** (``custom_call @Sharding``, ``@SPMDFullToShardShape``, a call of
  the body, ``@SPMDShardToFullShape``): the called body becomes the function.
* **Already per-device** (collectives, no annotations): kept as it is.
* **Annotations only** (``jax.jit`` with ``NamedSharding``): on one device
  they are dropped; on several the program is refused, since XLA's
  partitioner would have to split it and add the collectives.

``mhlo.num_replicas``/``mhlo.num_partitions`` stay on the module: the
collective lowering and the runtime read the device grid from them.
"""

from __future__ import annotations

import re

from xlac.errors import CompileError, error, format_location
from xlac.mlir import ir
from xlac.spmd.grid import declared_grid, spmd_ops

_GSPMD_CALLS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")
_ANNOTATION_ATTRS = ("mhlo.sharding",)
_FORWARDING_SDY_OPS = ("sdy.sharding_constraint", "sdy.reshard")
_PARTITION_HINT = ("write the program with jax.shard_map (per-device code with explicit "
                   "collectives), or partition it first; docs/distributed.md")


def to_per_device(module: ir.Module, source_name: str) -> None:
    """Rewrite ``module`` in place into the program each device runs."""
    top = module.operation
    funcs = _functions(module)
    manual = [op for op in _all_ops(top) if op.name == "sdy.manual_computation"]
    gspmd = [op for op in _all_ops(top) if _custom_call_target(op) in _GSPMD_CALLS[1:]]
    annotated = _has_annotations(module)
    if manual:
        owners = []                                   # found before any is rewritten
        for op in manual:
            owner = _enclosing_func(op)
            if owner is not None and not any(owner == known for known in owners):
                owners.append(owner)
        for func in owners:
            _inline_manual_computation(module, func, _mesh_axes(module))
    elif gspmd:
        _replace_gspmd_entries(module, funcs, source_name)
    elif annotated:
        _drop_single_device_annotations(module, source_name)
    _erase_shardy(module, source_name)


# ---------------------------------------------------------------- Shardy

def _mesh_axes(module: ir.Module) -> dict[str, int]:
    axes = {}
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            text = str(op.operation.attributes["mesh"])
            axes.update({name: int(size) for name, size in re.findall(r'"([^"]+)"=(\d+)', text)})
    return axes


def _inline_manual_computation(module: ir.Module, func: ir.Operation, mesh: dict) -> None:
    """``func`` becomes its manual computation's region: local shapes in and out."""
    body = func.regions[0].blocks[0]
    ops = [op.operation for op in body.operations]
    where = format_location(func.location)
    computation = ops[0] if ops else None
    if len(ops) != 2 or computation.name != "sdy.manual_computation":
        raise CompileError(error("only a function whose body is one sdy.manual_computation "
                                 "(one jax.shard_map) can run: the ops around it need XLA's "
                                 "SPMD partitioner", where),
                           "jit the shard_map'ed function itself; " + _PARTITION_HINT)
    if list(ops[1].operands) != list(computation.results):
        raise CompileError(error("the function must return the manual computation's results "
                                 "in order", where), _PARTITION_HINT)
    manual_axes = set(re.findall(r'"([^"]+)"', str(computation.attributes["manual_axes"])))
    automatic = {axis for axis, size in mesh.items() if axis not in manual_axes and size > 1}
    if automatic:
        raise CompileError(error(f"shard_map over axes {sorted(manual_axes)} leaves mesh axes "
                                 f"{sorted(automatic)} automatic; those need XLA's SPMD "
                                 "partitioner", where),
                           "make every mesh axis manual (shard_map over the whole mesh)")
    _replace_body(func, computation, ops[1])


def _replace_body(func: ir.Operation, computation: ir.Operation, old_return: ir.Operation) -> None:
    """Make ``func``'s body the manual computation's: its region (ending in
    sdy.return), or the function holding it (``xla.body``, from shardy_text)."""
    block = func.regions[0].blocks[0]
    body = _body_function(func, computation)
    region_block = (body or computation).regions[0].blocks[0]
    old_count = len(block.arguments)
    for arg in region_block.arguments:
        arg.replace_all_uses_with(block.add_argument(arg.type, arg.location))
    inner = [op.operation for op in region_block.operations]
    with old_return.location, ir.InsertionPoint(old_return):
        ret = ir.Operation.create("func.return", operands=list(inner[-1].operands))
    for op in inner[:-1]:
        op.move_before(ret)
    old_return.erase()
    computation.erase()
    if body is not None:
        body.erase()
    for _ in range(old_count):
        block.erase_argument(0)
    _set_function_type(func, [a.type for a in block.arguments], [v.type for v in ret.operands])


def _body_function(func: ir.Operation, computation: ir.Operation) -> ir.Operation | None:
    if "xla.body" not in computation.attributes:
        return None
    name = ir.FlatSymbolRefAttr(computation.attributes["xla.body"]).value
    module_body = func.parent.regions[0].blocks[0]
    return next(op.operation for op in module_body.operations
                if op.operation.name == "func.func" and _symbol(op.operation) == name)


def _set_function_type(func: ir.Operation, inputs, results) -> None:
    old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
    for name, count, before in (("arg_attrs", len(inputs), len(old.inputs)),
                                ("res_attrs", len(results), len(old.results))):
        if name in func.attributes and count != before:
            del func.attributes[name]


# ---------------------------------------------------------------- GSPMD

def _replace_gspmd_entries(module: ir.Module, funcs: list[ir.Operation], source_name: str) -> None:
    """Each function that wraps a body in SPMDFullToShardShape/ShardToFullShape
    is replaced by that body."""
    by_name = {_symbol(f): f for f in funcs}
    for func in funcs:
        ops = [op.operation for op in func.regions[0].blocks[0].operations] if func.regions[0].blocks else []
        if not any(_custom_call_target(op) in _GSPMD_CALLS[1:] for op in ops):
            continue
        call = _gspmd_body_call(func, ops)
        body = by_name[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
        name, visibility = _symbol(func), func.attributes["sym_visibility"] \
            if "sym_visibility" in func.attributes else None
        func.erase()
        body.attributes["sym_name"] = ir.StringAttr.get(name)
        if visibility is not None:
            body.attributes["sym_visibility"] = visibility
        else:
            del body.attributes["sym_visibility"]


def _gspmd_body_call(func: ir.Operation, ops: list[ir.Operation]) -> ir.Operation:
    """The one call whose operands come from the function's arguments through
    FullToShard and whose results are returned through ShardToFull, in order."""
    where = format_location(func.location)
    calls = [op for op in ops if op.name == "func.call"]
    others = [op for op in ops if op.name not in ("func.call", "func.return")
              and _custom_call_target(op) not in _GSPMD_CALLS]
    if len(calls) != 1 or others:
        raise CompileError(error("a GSPMD program must be one shard_map body between "
                                 "SPMDFullToShardShape and SPMDShardToFullShape; other ops "
                                 "need XLA's SPMD partitioner", where), _PARTITION_HINT)
    call, block = calls[0], func.regions[0].blocks[0]
    sources = [_through_annotations(v) for v in call.operands]
    returned = [_through_annotations(v) for v in ops[-1].operands]
    if sources != list(block.arguments) or returned != list(call.results):
        raise CompileError(error("the shard_map body must take the function's arguments "
                                 "and return its results, in order", where), _PARTITION_HINT)
    return call


def _through_annotations(value: ir.Value) -> ir.Value:
    """``value`` before any Sharding/FullToShard/ShardToFull custom calls."""
    while not isinstance(value.owner, ir.Block) and \
            _custom_call_target(value.owner.operation) in _GSPMD_CALLS:
        value = value.owner.operation.operands[0]
    return value


# ---------------------------------------------------------------- annotations

def _has_annotations(module: ir.Module) -> bool:
    for op in _all_ops(module.operation):
        if op.name.startswith("sdy.") or _custom_call_target(op) == "Sharding":
            return True
        if op.name == "func.func" and any(n in str(op.attributes[a]) for a in ("arg_attrs", "res_attrs")
                                          if a in op.attributes for n in ("sdy.", "mhlo.sharding")):
            return True
        if any(_attr_name(a).startswith("sdy.") or _attr_name(a) in _ANNOTATION_ATTRS
               for a in op.attributes):
            return True
    return False


def _drop_single_device_annotations(module: ir.Module, source_name: str) -> None:
    """Sharding annotations without collectives: fine on one device, refused on more."""
    grid = declared_grid(module.operation)
    if grid.size > 1 and not spmd_ops(module.operation):
        raise CompileError(error(f"the program is annotated for {grid.size} devices "
                                 "(sharding annotations) but has no collectives: XLA's SPMD "
                                 "partitioner would split it and add them; xlac does not "
                                 "partition programs", source_name), _PARTITION_HINT)
    devices = 1
    for size in _mesh_axes(module).values():
        devices *= size
    if grid.size == 1 and devices > 1:
        raise CompileError(error(f"the program's mesh has {devices} devices but it is compiled "
                                 "for one (mhlo.num_partitions = 1)", source_name), _PARTITION_HINT)


def _erase_shardy(module: ir.Module, source_name: str) -> None:
    """Drop what only annotates: meshes, sharding constraints, sharding attributes."""
    for op in reversed(_all_ops(module.operation)):
        if op.name in _FORWARDING_SDY_OPS or _custom_call_target(op) == "Sharding":
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
        elif op.name == "sdy.mesh":
            op.erase()
    left = sorted({op.name for op in _all_ops(module.operation)
                   if op.name.startswith("sdy.") or _custom_call_target(op) in _GSPMD_CALLS})
    if left:
        raise CompileError(error(f"cannot run {', '.join(left)} here: xlac runs per-device "
                                 "programs", source_name), _PARTITION_HINT)
    for op in _all_ops(module.operation):
        for name in [_attr_name(a) for a in op.attributes]:
            if name.startswith("sdy.") or name in _ANNOTATION_ATTRS:
                del op.attributes[name]
        if op.name == "func.func":
            _strip_argument_annotations(op)


def _strip_argument_annotations(func: ir.Operation) -> None:
    for name in ("arg_attrs", "res_attrs"):
        if name not in func.attributes:
            continue
        kept = [ir.DictAttr.get({_attr_name(a): a.attr for a in ir.DictAttr(d)
                                 if not _attr_name(a).startswith("sdy.")
                                 and _attr_name(a) not in _ANNOTATION_ATTRS})
                for d in ir.ArrayAttr(func.attributes[name])]
        func.attributes[name] = ir.ArrayAttr.get(kept)


# ---------------------------------------------------------------- helpers

def _all_ops(top: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        found.append(op.operation)
        return ir.WalkResult.ADVANCE

    top.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[1:]


def _functions(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def _enclosing_func(op: ir.Operation) -> ir.Operation | None:
    while op is not None and op.name != "func.func":
        op = op.parent.operation if op.parent is not None else None
    return op


def _symbol(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _custom_call_target(op: ir.Operation) -> str | None:
    if op.name != "stablehlo.custom_call":
        return None
    return ir.StringAttr(op.attributes["call_target_name"]).value


def _attr_name(named) -> str:
    return named if isinstance(named, str) else named.name
