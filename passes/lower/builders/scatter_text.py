"""The MLIR text of the helper function xla-lower-scatter calls for one scatter.

The helper walks the update scatter dimensions with an `scf.for` nest whose
iter_args carry the results. At each scatter index it computes the start of
the update window in the operand, skips the whole window when that start is
out of bounds (XLA's rule), and otherwise reads the operand window and the
update window as slices, combines them with the update computation, and
writes the window back with `tensor.insert_slice`:

    %r:N = scf.for %s0 = ... iter_args(%acc = %in0 ...) {   // one loop per scatter dim
      %x = tensor.extract %idx[%s0, %k] ; start offsets ; %ok = in bounds
      scf.if %ok { extract_slice, <update computation>, insert_slice } else { %acc }
    }

When the update computation is elementwise it runs on whole windows (its 0-d
tensor types widened to the window shape); otherwise a second loop nest runs
it on one element at a time.
"""

from __future__ import annotations

from xlac.passes.helper_calls import tensor_type
from xlac.passes.lower.builders.scatter_region import Region, paste_region
from xlac.record import record


@record
class ScatterDims:
    """Shapes, types and dimension numbers of one `stablehlo.scatter`."""

    element_types: tuple[str, ...]       # one per input (and per update)
    operand_shape: tuple[int, ...]
    indices_shape: tuple[int, ...]
    index_type: str                      # element type of scatter_indices
    updates_shape: tuple[int, ...]
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    input_batching_dims: tuple[int, ...]
    scatter_indices_batching_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int

    def update_scatter_dims(self) -> list[int]:
        return [d for d in range(len(self.updates_shape)) if d not in self.update_window_dims]

    def operand_window_dims(self) -> list[int]:
        """Operand dims the update window dims map to, in order."""
        dropped = set(self.inserted_window_dims) | set(self.input_batching_dims)
        return [d for d in range(len(self.operand_shape)) if d not in dropped]

    def window_size(self, operand_dim: int) -> int:
        window_dims = self.operand_window_dims()
        if operand_dim not in window_dims:
            return 1
        return self.updates_shape[self.update_window_dims[window_dims.index(operand_dim)]]

    def loop_of_indices_dim(self, indices_dim: int) -> int:
        """Which scatter loop walks ``indices_dim`` (not the index vector dim)."""
        return indices_dim - (1 if indices_dim > self.index_vector_dim else 0)


class _Text:
    """Lines of the helper body, with index constants hoisted to the top."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[int, str] = {}
        self.depth = 1

    def add(self, *lines: str) -> None:
        self.lines += ["  " * self.depth + line for line in lines]

    def index(self, value: int) -> str:
        name = f"%c{value}" if value >= 0 else f"%cm{-value}"
        self.constants[value] = name
        return name

    def header(self) -> list[str]:
        return [f"  {name} = arith.constant {value} : index"
                for value, name in sorted(self.constants.items())]


def helper_function(name: str, dims: ScatterDims, region: Region) -> str:
    """The text of ``func.func private @name(inputs..., indices, updates...)``."""
    count = len(dims.element_types)
    operand_types = [tensor_type(dims.operand_shape, e) for e in dims.element_types]
    update_types = [tensor_type(dims.updates_shape, e) for e in dims.element_types]
    indices_type = tensor_type(dims.indices_shape, dims.index_type)
    params = ([f"%in{i}: {t}" for i, t in enumerate(operand_types)]
              + [f"%idx_arg: {indices_type}"]
              + [f"%up{i}: {t}" for i, t in enumerate(update_types)])
    text = _Text()
    index_value, index_int = _signless_indices(text, dims, indices_type)
    accs = [f"%in{i}" for i in range(count)]
    results = _scatter_loops(text, dims, region, accs, operand_types, (index_value, index_int))
    text.add(f"return {', '.join(results)} : {', '.join(operand_types)}")
    signature = f"func.func private @{name}({', '.join(params)}) -> ({', '.join(operand_types)})"
    return "\n".join([signature + " {"] + text.header() + text.lines + ["}", ""])


def _signless_indices(text: _Text, dims: ScatterDims, indices_type: str) -> tuple[str, str]:
    """The indices as a signless integer tensor: arith cannot read ui32."""
    if not dims.index_type.startswith("ui"):
        return "%idx_arg", dims.index_type
    wide = tensor_type(dims.indices_shape, "i64")
    text.add(f"%idx = stablehlo.convert %idx_arg : ({indices_type}) -> {wide}")
    return "%idx", "i64"


def _scatter_loops(text: _Text, dims: ScatterDims, region: Region, accs: list[str],
                   types: list[str], indices: tuple[str, str]) -> list[str]:
    """One scf.for per update scatter dim around the window update; the results."""
    sizes = [dims.updates_shape[d] for d in dims.update_scatter_dims()]
    ivs, inner = _open_loops(text, "", "%s", sizes, accs, types)
    updated = _update_one_window(text, dims, region, inner, types, ivs, indices)
    return _close_loops(text, "", len(sizes), updated, types)


def _open_loops(text: _Text, tag: str, iv: str, sizes: list[int], accs: list[str],
                types: list[str]) -> tuple[list[str], list[str]]:
    """Open one scf.for per size, threading ``accs``; the ivs and innermost accs."""
    ivs, outer = [], accs
    for k, size in enumerate(sizes):
        inner = [f"%{tag}acc{k}_{i}" for i in range(len(accs))]
        inits = ", ".join(f"{a} = {o}" for a, o in zip(inner, outer))
        text.add(f"%{tag}loop{k}:{len(accs)} = scf.for {iv}{k} = {text.index(0)} to "
                 f"{text.index(size)} step {text.index(1)} "
                 f"iter_args({inits}) -> ({', '.join(types)}) {{")
        text.depth += 1
        ivs.append(f"{iv}{k}")
        outer = inner
    return ivs, outer


def _close_loops(text: _Text, tag: str, count: int, updated: list[str],
                 types: list[str]) -> list[str]:
    """Yield ``updated`` out of ``count`` loops opened by `_open_loops`; the results."""
    for k in reversed(range(count)):
        text.add(f"scf.yield {', '.join(updated)} : {', '.join(types)}")
        text.depth -= 1
        text.add("}")
        updated = [f"%{tag}loop{k}#{i}" for i in range(len(updated))]
    return updated


def _update_one_window(text: _Text, dims: ScatterDims, region: Region, accs: list[str],
                       types: list[str], ivs: list[str], indices: tuple[str, str]) -> list[str]:
    """scf.if the window starting at this scatter index fits, update it; the results."""
    starts = _start_indices(text, dims, ivs, indices)
    fits = _window_fits(text, dims, starts)
    offsets = _window_offsets(dims, ivs, starts)
    text.add(f"%win:{len(accs)} = scf.if {fits} -> ({', '.join(types)}) {{")
    text.depth += 1
    if region.elementwise:
        updated = _combine(text, dims, region, accs, types, ivs, offsets, None)
    else:
        updated = _element_loops(text, dims, region, accs, types, ivs, offsets)
    text.add(f"scf.yield {', '.join(updated)} : {', '.join(types)}")
    text.depth -= 1
    text.add("} else {")
    text.add(f"  scf.yield {', '.join(accs)} : {', '.join(types)}")
    text.add("}")
    return [f"%win#{i}" for i in range(len(accs))]


def _start_indices(text: _Text, dims: ScatterDims, ivs: list[str],
                   indices: tuple[str, str]) -> dict[int, str]:
    """operand dim -> its start index read from scatter_indices (as an index)."""
    value, int_type = indices
    value_type = tensor_type(dims.indices_shape, int_type)
    starts = {}
    for k, operand_dim in enumerate(dims.scatter_dims_to_operand_dims):
        position = [text.index(k) if d == dims.index_vector_dim
                    else ivs[dims.loop_of_indices_dim(d)] for d in range(len(dims.indices_shape))]
        text.add(f"%x{k} = tensor.extract {value}[{', '.join(position)}] : {value_type}",
                 f"%st{k} = arith.index_cast %x{k} : {int_type} to index")
        starts[operand_dim] = f"%st{k}"
    return starts


def _window_fits(text: _Text, dims: ScatterDims, starts: dict[int, str]) -> str:
    """An i1 that is true when 0 <= start <= dim - window size for every start."""
    checks = []
    for k, (d, start) in enumerate(starts.items()):
        last = dims.operand_shape[d] - dims.window_size(d)
        text.add(f"%lo{k} = arith.cmpi sge, {start}, {text.index(0)} : index",
                 f"%hi{k} = arith.cmpi sle, {start}, {text.index(last)} : index",
                 f"%fits{k} = arith.andi %lo{k}, %hi{k} : i1")
        checks.append(f"%fits{k}")
    if not checks:
        text.add("%fits = arith.constant true")
        return "%fits"
    for k in range(1, len(checks)):
        text.add(f"%all{k} = arith.andi {checks[k - 1]}, {checks[k]} : i1")
        checks[k] = f"%all{k}"
    return checks[-1]


def _window_offsets(dims: ScatterDims, ivs: list[str], starts: dict[int, str]) -> list[str]:
    """The window's start in each operand dim: an index value or a literal 0."""
    offsets = [starts.get(d, "0") for d in range(len(dims.operand_shape))]
    for operand_dim, indices_dim in zip(dims.input_batching_dims,
                                        dims.scatter_indices_batching_dims):
        offsets[operand_dim] = ivs[dims.loop_of_indices_dim(indices_dim)]
    return offsets


def _element_loops(text: _Text, dims: ScatterDims, region: Region, accs: list[str],
                   types: list[str], ivs: list[str], offsets: list[str]) -> list[str]:
    """One loop per window dim, combining a single element at a time."""
    sizes = [dims.updates_shape[d] for d in dims.update_window_dims]
    window_ivs, inner = _open_loops(text, "w", "%w", sizes, accs, types)
    offsets = list(offsets)
    for k, d in enumerate(dims.operand_window_dims()):
        if offsets[d] == "0":
            offsets[d] = window_ivs[k]
        else:
            text.add(f"%at{k} = arith.addi {offsets[d]}, {window_ivs[k]} : index")
            offsets[d] = f"%at{k}"
    updated = _combine(text, dims, region, inner, types, ivs, offsets, window_ivs)
    return _close_loops(text, "w", len(window_ivs), updated, types)


def _combine(text: _Text, dims: ScatterDims, region: Region, accs: list[str], types: list[str],
             ivs: list[str], offsets: list[str], window_ivs: list[str] | None) -> list[str]:
    """Read operand and update windows, run the region, write the window back.

    ``window_ivs`` None: whole windows; else the one element they select.
    """
    whole = window_ivs is None
    shape = [dims.updates_shape[d] for d in dims.update_window_dims] if whole else []
    sizes = [dims.window_size(d) if whole else 1 for d in range(len(dims.operand_shape))]
    operand_slice = _slice(offsets, sizes)
    update_slice = _slice(*_update_window(dims, ivs, window_ivs))
    inputs = []
    for i, element in enumerate(dims.element_types):
        window = tensor_type(shape, element)
        text.add(f"%old{i} = tensor.extract_slice {accs[i]}{operand_slice} : "
                 f"{types[i]} to {window}")
        inputs.append(f"%old{i}")
    for i, element in enumerate(dims.element_types):
        text.add(f"%upd{i} = tensor.extract_slice %up{i}{update_slice} : "
                 f"{tensor_type(dims.updates_shape, element)} to {tensor_type(shape, element)}")
        inputs.append(f"%upd{i}")
    lines, results = paste_region(region, inputs, shape)
    text.add(*lines)
    for i, element in enumerate(dims.element_types):
        text.add(f"%put{i} = tensor.insert_slice {results[i]} into {accs[i]}{operand_slice} : "
                 f"{tensor_type(shape, element)} into {types[i]}")
    return [f"%put{i}" for i in range(len(accs))]


def _update_window(dims: ScatterDims, ivs: list[str],
                   window_ivs: list[str] | None) -> tuple[list[str], list[int]]:
    """Offsets and sizes of the update window at scatter index ``ivs``."""
    offsets, sizes = [], []
    scatter_dims = dims.update_scatter_dims()
    for d, size in enumerate(dims.updates_shape):
        if d in scatter_dims:
            offsets.append(ivs[scatter_dims.index(d)])
            sizes.append(1)
        elif window_ivs is None:
            offsets.append("0")
            sizes.append(size)
        else:
            offsets.append(window_ivs[dims.update_window_dims.index(d)])
            sizes.append(1)
    return offsets, sizes


def _slice(offsets: list[str], sizes: list[int]) -> str:
    strides = ", ".join("1" for _ in sizes)
    return f"[{', '.join(offsets)}] [{', '.join(map(str, sizes))}] [{strides}]"
