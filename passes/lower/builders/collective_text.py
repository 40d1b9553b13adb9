"""The text of xla-lower-collectives' helpers: each collective as buffer moves.

A ``Transfer`` is one buffer-to-buffer call of a collective: what it sends
(``send_shape``), what it receives (``recv_shape``), and how the operand is
cut into blocks before (``split_from``: that dimension is split into one
block per group member, the blocks first) and the received blocks are put
together after (``gather_into``: the blocks are concatenated along that
dimension). With blocks first, every member's part is contiguous, which is
what MPI's and NCCL's block collectives expect.
"""

from __future__ import annotations

from xlac.dtypes import tensor_type
from xlac.mlir import ir
from xlac.passes.lower.builders.ssa_text import SsaText
from xlac.record import factory, record


@record(mutable=True)
class Transfer:
    kind: str
    element: str                       # the StableHLO element type (ui32, bf16, i1, ...)
    send_shape: list[int] | None       # None: nothing is sent (replica_id, partition_id)
    recv_shape: list[int]
    groups: list[list[int]] = factory(list)
    pairs: list[list[int]] = factory(list)
    reduction: str = ""
    split_from: int | None = None
    gather_into: int | None = None
    callee: str = ""

    @property
    def group_size(self) -> int:
        return len(self.groups[0]) if self.groups else 1

    @property
    def buffer_element(self) -> str:
        """The element type in memory: unsigned integers as signless (as after
        stablehlo-convert-to-signless)."""
        return "i" + self.element[2:] if self.element.startswith("ui") else self.element

    def declaration(self, name: str) -> str:
        memrefs = ([_memref(self.send_shape, self.buffer_element)] if self.send_shape is not None else []) \
            + [_memref(self.recv_shape, self.buffer_element)]
        attrs = [f'xla.collective = "{self.kind}"', f'xla.element_type = "{self.element}"']
        if self.groups:
            attrs.append(f"xla.groups = {_table(self.groups, self.group_size)}")
        if self.kind == "collective_permute":
            attrs.append(f"xla.pairs = {_table(self.pairs, 2)}")
        if self.reduction:
            attrs.append(f'xla.reduction = "{self.reduction}"')
        return (f"func.func private @{name}({', '.join(memrefs)}) "
                f"attributes {{{', '.join(attrs)}}}")


def helper_text(name: str, op: ir.Operation, transfers: list[Transfer]) -> str:
    """``@name``: the op's operands in, its results out, one call per transfer."""
    lines = SsaText()
    results = []
    for index, transfer in enumerate(transfers):
        results.append(_transfer_lines(lines, f"%a{index}", transfer, op.results[index].type))
    args = ", ".join(f"%a{i}: {v.type}" for i, v in enumerate(op.operands))
    types = ", ".join(str(r.type) for r in op.results)
    return (f"func.func private @{name}({args}) -> ({types}) {{\n{lines.text()}"
            f"  return {', '.join(results)} : {types}\n}}\n")


def _transfer_lines(lines: SsaText, value: str, transfer: Transfer, result_type) -> str:
    element, memory = transfer.element, transfer.buffer_element
    send = None
    if transfer.send_shape is not None:
        shape = list(transfer.send_shape)
        if memory != element:
            value = _convert(lines, value, shape, element, memory)
        if transfer.split_from is not None:
            value, shape = _blocks_first(lines, value, shape, transfer.split_from,
                                         transfer.group_size, memory)
        send = lines.add(f"bufferization.to_buffer {value} read_only : "
                         f"{tensor_type(shape, memory)} to {_memref(shape, memory)}")
        transfer.send_shape = shape
    if transfer.kind == "all_to_all":
        transfer.recv_shape = list(transfer.send_shape)
    recv_type = _memref(transfer.recv_shape, memory)
    recv = lines.add(f"memref.alloc() {{alignment = 64 : i64}} : {recv_type}")
    operands = [v for v in (send, recv) if v is not None]
    types = ([_memref(transfer.send_shape, memory)] if send else []) + [recv_type]
    lines.plain(f"func.call @{transfer.callee}({', '.join(operands)}) : ({', '.join(types)}) -> ()")
    shape = list(transfer.recv_shape)
    value = lines.add(f"bufferization.to_tensor {recv} restrict writable : {recv_type} to "
                      f"{tensor_type(shape, memory)}")
    if transfer.gather_into is not None:
        value, shape = _blocks_into(lines, value, shape, transfer.gather_into, memory)
    if memory != element:
        value = _convert(lines, value, shape, memory, element)
    final = ir.RankedTensorType(result_type)
    assert list(final.shape) == shape, (list(final.shape), shape)
    return value


def _convert(lines: SsaText, value: str, shape, source: str, target: str) -> str:
    return lines.add(f"stablehlo.bitcast_convert {value} : ({tensor_type(shape, source)}) -> "
                     f"{tensor_type(shape, target)}")


def _blocks_first(lines, value, shape, dim, count, element):
    """Split ``dim`` into ``count`` blocks and put the block index first."""
    split = shape[:dim] + [count, shape[dim] // count] + shape[dim + 1:]
    value = _reshape(lines, value, shape, split, element)
    order = [dim] + [i for i in range(len(split)) if i != dim]
    return _transpose(lines, value, split, order, element)


def _blocks_into(lines, value, shape, dim, element):
    """Blocks [n, S...] -> their concatenation along ``dim`` of S."""
    order = list(range(1, dim + 1)) + [0] + list(range(dim + 1, len(shape)))
    value, moved = _transpose(lines, value, shape, order, element)
    merged = moved[:dim] + [moved[dim] * moved[dim + 1]] + moved[dim + 2:]
    return _reshape(lines, value, moved, merged, element), merged


def _reshape(lines, value, shape, new_shape, element) -> str:
    return lines.add(f"stablehlo.reshape {value} : ({tensor_type(shape, element)}) -> "
                     f"{tensor_type(new_shape, element)}")


def _transpose(lines, value, shape, order, element):
    moved = [shape[i] for i in order]
    if order == sorted(order):
        return value, moved
    return lines.add(f"stablehlo.transpose {value}, dims = {order} : "
                     f"({tensor_type(shape, element)}) -> {tensor_type(moved, element)}"), moved


def _memref(shape, element: str) -> str:
    return "memref<" + "".join(f"{d}x" for d in shape) + element + ">"


def _table(rows: list[list[int]], width: int) -> str:
    body = str([[int(x) for x in row] for row in rows]) if rows else ""
    return f"dense<{body}> : tensor<{len(rows)}x{width}xi64>"
