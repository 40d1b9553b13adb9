"""xla-lower-custom-calls: JAX's LAPACK custom calls as calls of LAPACK itself."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.passes.lower.builders.eigenvectors import unpack_eigenvectors
from xlac.passes.lower.builders.lapack_calls import Call, lapack_call, lowered_targets
from xlac.record import record


class LowerCustomCalls(ModulePass):
    """Lower `stablehlo.custom_call @lapack_*_ffi` (jnp.linalg on the CPU) to LAPACK calls.

    Why: JAX lowers eigh, svd, qr, lu, cholesky and triangular solves on the
    CPU to custom calls XLA answers with LAPACK; xlac answers them with the
    same LAPACK functions (the Fortran ABI: ``ssyevd_(char*, int*, float*, ...)``),
    called once per matrix of the batch on a column-major copy. The symbols are
    bound when the code is loaded (docs/lapack.md): the JIT and linked
    artifacts take them from the OpenBLAS in SciPy's wheel, the LAPACK jaxlib
    itself calls, so the numbers are XLA's.

        %v, %w, %info = stablehlo.custom_call @lapack_ssyevd_ffi(%a)
                            {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : ui8}}
      ->
        call @xla_lapack_0(%a)   // transpose, per matrix: copy in, ssyevd_(...), copy out
    """

    name = "xla-lower-custom-calls"

    acts_on = frozenset({"stablehlo.custom_call"})

    def run(self, module: ir.Operation) -> None:
        targets = lowered_targets()
        for op in module_ops(module):
            if op.name == "stablehlo.custom_call" and _target(op) in targets:
                name = fresh_symbol(module, "xla_lapack")
                replace_with_call(module, op, _LapackCall.of(op).helper_text(name), name)


def _target(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["call_target_name"]).value


@record(mutable=True)
class _LapackCall:
    """One custom call: its batch, per-matrix call, and operand/result types."""

    call: Call
    batch: tuple[int, ...]
    operands: list[ir.RankedTensorType]
    results: list[ir.RankedTensorType]
    matrices: list[bool]                   # per operand then result: a matrix (two minor dims)?

    @staticmethod
    def of(op: ir.Operation) -> _LapackCall:
        target = _target(op)
        kind, routine = target[len("lapack_")], target[len("lapack_") + 1:-len("_ffi")]
        operands = [_static(op, v.type) for v in op.operands]
        results = [_static(op, v.type) for v in op.results]
        batch_dims = _batch_dims(op, operands)
        batch = tuple(operands[0].shape[:batch_dims])
        if any(tuple(t.shape[:batch_dims]) != batch for t in operands + results):
            raise PassFailure(op.location, f"{target}: every operand and result must have the "
                                           f"batch dims {list(batch)} first")
        per = [tuple(t.shape[batch_dims:]) for t in operands + results]
        try:
            call = lapack_call(kind, routine, per[:len(operands)], per[len(operands):],
                               _config(op))
        except ValueError as exc:
            raise PassFailure(op.location, f"{target}: {exc}") from None
        matrices = [len(p) == 2 for p in per]
        _check_layouts(op, operands, results, matrices, batch_dims)
        return _LapackCall(call, batch, operands, results, matrices)

    def helper_text(self, name: str) -> str:
        if any(0 in t.shape for t in self.operands):
            return _empty_helper(self, name)
        return _Emitter(self, name).text()


def _empty_helper(lapack: _LapackCall, name: str) -> str:
    """No matrices, or empty ones: nothing to compute; the results are zeros
    (info 0), except SVD's U and V^T, identities as LAPACK's would be."""
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(lapack.operands))
    outs = ", ".join(str(t) for t in lapack.results)
    lines, values = [], []
    for index, t in enumerate(lapack.results):
        name_in_call = lapack.call.results[index]
        if name_in_call in ("u", "vt") and 0 not in t.shape:
            rank = t.rank
            i32 = _tensor(t.shape, "i32")
            lines += [f"%i{index} = stablehlo.iota dim = {rank - 2} : {i32}",
                      f"%j{index} = stablehlo.iota dim = {rank - 1} : {i32}",
                      f"%e{index} = stablehlo.compare EQ, %i{index}, %j{index} : ({i32}, {i32}) "
                      f"-> {_tensor(t.shape, 'i1')}",
                      f"%r{index} = stablehlo.convert %e{index} : ({_tensor(t.shape, 'i1')}) -> {t}"]
        else:
            lines.append(f"%r{index} = stablehlo.constant dense<{_zero(t.element_type)}> : {t}")
        values.append(f"%r{index}")
    body = "\n  ".join(lines)
    return (f"func.func private @{name}({args}) -> ({outs}) {{\n  {body}\n"
            f"  return {', '.join(values)} : {outs}\n}}\n")


def _zero(element: ir.Type) -> str:
    text = str(element)
    return "(0.0, 0.0)" if text.startswith("complex") else "0.0" if text[0] in "fb" else "0"


def _static(op: ir.Operation, t: ir.Type) -> ir.RankedTensorType:
    ranked = ir.RankedTensorType(t)
    if not ranked.has_static_shape:
        raise PassFailure(op.location, f"{_target(op)} with dynamic shapes is not supported; "
                                       "run stablehlo-refine-shapes first")
    return ranked


def _batch_dims(op: ir.Operation, operands: list[ir.RankedTensorType]) -> int:
    """JAX's ``num_batch_dims``; else those before the matrices' two dims (the
    highest-rank operands: gtsv's first operands are vectors)."""
    if "mhlo.frontend_attributes" in op.attributes:
        attrs = ir.DictAttr(op.attributes["mhlo.frontend_attributes"])
        if "num_batch_dims" in attrs:
            return int(ir.StringAttr(attrs["num_batch_dims"]).value)
    return max(0, max(t.rank for t in operands) - 2)


def _config(op: ir.Operation) -> dict[str, str | int]:
    """``mhlo.backend_config = {mode = 86 : ui8, low = 1 : i32}`` as ``{"mode": "V", "low": 1}``:
    a ui8 is one of LAPACK's character options, other integers are numbers."""
    if "mhlo.backend_config" not in op.attributes:
        return {}
    try:
        attrs = ir.DictAttr(op.attributes["mhlo.backend_config"])
    except ValueError:
        return {}
    return {named.name: _option(ir.IntegerAttr(named.attr)) for named in attrs
            if isinstance(named.attr, ir.IntegerAttr)}


def _option(attr: ir.IntegerAttr) -> str | int:
    kind = attr.type                                     # attributes come typed (downcast)
    if isinstance(kind, ir.IntegerType) and kind.is_unsigned and kind.width == 8:
        return chr(attr.value)
    return attr.value                                    # i32, i64, index: a number


def _check_layouts(op, operands, results, matrices, batch_dims) -> None:
    """JAX's layouts: batch dims major, matrices column-major, vectors row-major."""
    for attr, types, first in (("operand_layouts", operands, 0),
                               ("result_layouts", results, len(operands))):
        if attr not in op.attributes:
            continue
        for index, (layout, t) in enumerate(zip(ir.ArrayAttr(op.attributes[attr]), types)):
            got = [int(v) for v in ir.DenseIntElementsAttr(layout)]
            want = _jax_layout(t.rank, matrices[first + index])
            if got != want:
                raise PassFailure(op.location, f"{_target(op)}: {attr}[{index}] = {got} is not "
                                               f"supported (expected JAX's {want})")


def _jax_layout(rank: int, matrix: bool) -> list[int]:
    """minor_to_major of a batch of column-major matrices, or of row-major vectors."""
    if matrix:
        return [rank - 2, rank - 1, *range(rank - 3, -1, -1)]
    return list(range(rank - 1, -1, -1))


class _Emitter:
    """The helper function: batch flattened, matrices transposed to column-major,
    an scf.for over the matrices calling LAPACK on fresh buffers, and back."""

    def __init__(self, lapack: _LapackCall, name: str):
        self.lapack, self.name = lapack, name
        self.count = math.prod(lapack.batch)
        self.lines: list[str] = []
        self.inits: list[str] = []            # each loop result's initial value

    def text(self) -> str:
        lapack, call = self.lapack, self.lapack.call
        args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(lapack.operands))
        outs = ", ".join(str(t) for t in lapack.results)
        stored = [self._stored_operand(i, t) for i, t in enumerate(lapack.operands)]
        looped = [name for name in call.results if name is not None]   # the loop's results
        accs = [self._accumulator(i, r) for i, r in enumerate(looped)]
        self.lines += ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
                       f"%count = arith.constant {self.count} : index"]
        names = ", ".join(f"%acc{i} = {init}" for i, init in enumerate(self.inits))
        types = ", ".join(accs)
        self.lines.append(f"%loop:{len(accs)} = scf.for %b = %c0 to %count step %c1 "
                          f"iter_args({names}) -> ({types}) {{")
        yields = self._body(stored, accs, looped)
        self.lines.append(f"  scf.yield {', '.join(yields)} : {types}\n}}")
        final = [self._result(index, name, looped, accs) for index, name in enumerate(call.results)]
        body = "\n  ".join(self.lines)
        return (f"{self._declaration()}\n"
                f"func.func private @{self.name}({args}) -> ({outs}) {{\n  {body}\n"
                f"  return {', '.join(final)} : {outs}\n}}\n")

    def _result(self, index: int, name: str | None, looped: list[str], accs: list[str]) -> str:
        """Result ``index``: zeros, a loop result as laid out, or real geev's
        eigenvectors unpacked (``Call.unpack``)."""
        t = self.lapack.results[index]
        if name is None:
            self.lines.append(f"%o{index} = stablehlo.constant dense<{_zero(t.element_type)}> : {t}")
            return f"%o{index}"
        k = looped.index(name)
        if name not in self.lapack.call.unpack:
            return self._logical(index, k, accs[k], t)
        a = self.lapack.call.arrays[name]
        packed = self._logical(index, k, accs[k], _Shaped(tuple(t.shape), a.element))
        wi = f"%o{self.lapack.call.results.index(self.lapack.call.unpack[name])}"
        self.lines += unpack_eigenvectors(f"%u{index}", packed, wi, list(t.shape), a.element)
        return f"%u{index}"

    def _declaration(self) -> str:
        call = self.lapack.call
        types = [_pointer_type(kind, value, call) for kind, value in call.args]
        types += ["i64"] * sum(kind == "char" for kind, _ in call.args)   # hidden lengths
        return f"func.func private @{call.symbol}({', '.join(types)})"

    def _flat_shape(self, t: ir.RankedTensorType, matrix: bool) -> list[int]:
        per = list(t.shape[len(self.lapack.batch):])
        per = per[::-1] if matrix else (per or [1])
        return [self.count, *per]

    def _stored_operand(self, index: int, t: ir.RankedTensorType) -> str:
        """Operand ``index`` as (matrices, stored shape...)."""
        matrix, value = self.lapack.matrices[index], f"%arg{index}"
        if matrix:
            rank = t.rank
            dims = [*range(rank - 2), rank - 1, rank - 2]
            shape = [*t.shape[:-2], t.shape[-1], t.shape[-2]]
            flipped = _tensor(shape, t.element_type)
            self.lines.append(f"%t{index} = stablehlo.transpose {value}, dims = {dims} : "
                              f"({t}) -> {flipped}")
            value, t_text = f"%t{index}", flipped
        else:
            t_text = str(t)
        flat = _tensor(self._flat_shape(t, matrix), t.element_type)
        self.lines.append(f"%s{index} = stablehlo.reshape {value} : ({t_text}) -> {flat}")
        return f"%s{index}"

    def _accumulator(self, index: int, array: str) -> str:
        a = self.lapack.call.arrays[array]
        if self._partial(a):        # the operand's other elements pass through
            flat = self._operand_flat(a.operand)
            self.inits.append(f"%s{a.operand}")
            return flat
        t = _tensor([self.count, *a.shape], a.element)
        self.lines.append(f"%init{index} = tensor.empty() : {t}")
        self.inits.append(f"%init{index}")
        return t

    def _operand_flat(self, operand: int) -> str:
        """Operand ``operand`` as stored: (matrices, per-matrix shape...), as text."""
        t = self.lapack.operands[operand]
        return _tensor(self._flat_shape(t, self.lapack.matrices[operand]), t.element_type)

    def _partial(self, a) -> bool:
        """Whether array ``a`` is part of its operand only (gtsv's dl + 1)."""
        if a.operand is None:
            return False
        t = self.lapack.operands[a.operand]
        whole = tuple(self._flat_shape(t, self.lapack.matrices[a.operand])[1:])
        return a.offset != 0 or whole != a.shape

    def _body(self, stored: list[str], accs: list[str], looped: list[str]) -> list[str]:
        call, lines = self.lapack.call, []
        buffers = {}
        for name, a in call.arrays.items():
            memref = _memref(a.shape, a.element)
            lines.append(f"%m_{name} = memref.alloc() : {memref}")
            if a.operand is not None and 0 not in a.shape:
                lines += _slice(f"%in_{name}", stored[a.operand], self._operand_flat(a.operand),
                                a.shape, a.element, a.offset)
                lines.append(f"bufferization.materialize_in_destination %in_{name} in restrict "
                             f"writable %m_{name} : ({_tensor(a.shape, a.element)}, {memref}) -> ()")
            elif name == "alpha":
                lines += [f"%one = {_one(a.element)}",
                          f"memref.store %one, %m_{name}[%c0] : {memref}"]
            buffers[name] = memref
        operands, types = self._arguments(call, buffers, lines)
        lines.append(f"func.call @{call.symbol}({', '.join(operands)}) : "
                     f"({', '.join(types)}) -> ()")
        yields = []
        for index, name in enumerate(looped):
            a = call.arrays[name]
            if 0 in a.shape:          # nothing written (gehrd's taus at n = 1): no empty slices
                yields.append(f"%acc{index}")
                continue
            lines.append(f"%r_{name} = bufferization.to_tensor %m_{name} restrict writable : "
                         f"{buffers[name]} to {_tensor(a.shape, a.element)}")
            lines.append(_insert(f"%y{index}", f"%r_{name}", f"%acc{index}", a.shape,
                                 a.element, accs[index], a.offset))
            yields.append(f"%y{index}")
        self.lines += ["  " + line for line in lines]
        return yields

    def _arguments(self, call: Call, buffers: dict, lines: list) -> tuple[list[str], list[str]]:
        operands, types = [], []
        for position, (kind, value) in enumerate(call.args):
            if kind == "array":
                a = call.arrays[value]
                lines.append(f"%p{position} = memref.reinterpret_cast %m_{value} to offset: [0], "
                             f"sizes: [1], strides: [1] : {buffers[value]} to memref<1x{a.element}>")
            else:
                scalar, element = (f"{ord(value)} : i8", "i8") if kind == "char" \
                    else (f"{value} : i32", "i32")
                lines += [f"%v{position} = arith.constant {scalar}",
                          f"%p{position} = memref.alloc() : memref<1x{element}>",
                          f"memref.store %v{position}, %p{position}[%c0] : memref<1x{element}>"]
            operands.append(f"%p{position}")
            types.append(_pointer_type(kind, value, call))
        chars = sum(kind == "char" for kind, _ in call.args)
        if chars:
            lines.append("%len = arith.constant 1 : i64")
        return operands + ["%len"] * chars, types + ["i64"] * chars

    def _logical(self, index: int, k: int, acc: str, t: ir.RankedTensorType) -> str:
        """Loop result ``k`` as result ``index``'s type ``t`` (matrices row-major again)."""
        value = f"%loop#{k}"
        matrix = self.lapack.matrices[len(self.lapack.operands) + index]
        if not matrix:
            self.lines.append(f"%o{index} = stablehlo.reshape {value} : ({acc}) -> {t}")
            return f"%o{index}"
        shape = [*t.shape[:-2], t.shape[-1], t.shape[-2]]
        flipped = _tensor(shape, t.element_type)
        rank = t.rank
        self.lines += [f"%f{index} = stablehlo.reshape {value} : ({acc}) -> {flipped}",
                       f"%o{index} = stablehlo.transpose %f{index}, dims = "
                       f"{[*range(rank - 2), rank - 1, rank - 2]} : ({flipped}) -> {t}"]
        return f"%o{index}"


@record
class _Shaped:
    """A tensor type as text, where no ir.RankedTensorType exists (real geev's packed vectors)."""

    shape: tuple[int, ...]
    element_type: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return _tensor(self.shape, self.element_type)


def _pointer_type(kind: str, value, call: Call) -> str:
    if kind == "array":
        return f"memref<1x{call.arrays[value].element}>"
    return "memref<1xi8>" if kind == "char" else "memref<1xi32>"


def _tensor(shape, element) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{element}>"


def _memref(shape, element) -> str:
    return "memref<" + "".join(f"{d}x" for d in shape) + f"{element}>"


def _slice(result: str, source: str, source_type: str, shape, element, offset=0) -> list[str]:
    offsets = ", ".join(["%b", str(offset)] + ["0"] * (len(shape) - 1))
    sizes = ", ".join(str(d) for d in [1, *shape])
    strides = ", ".join(["1"] * (len(shape) + 1))
    return [f"{result} = tensor.extract_slice {source}[{offsets}] [{sizes}] [{strides}] : "
            f"{source_type} to {_tensor(shape, element)}"]


def _insert(result: str, value: str, dest: str, shape, element, dest_type: str, offset=0) -> str:
    offsets = ", ".join(["%b", str(offset)] + ["0"] * (len(shape) - 1))
    sizes = ", ".join(str(d) for d in [1, *shape])
    strides = ", ".join(["1"] * (len(shape) + 1))
    return (f"{result} = tensor.insert_slice {value} into {dest}[{offsets}] [{sizes}] "
            f"[{strides}] : {_tensor(shape, element)} into {dest_type}")


def _one(element: str) -> str:
    if element.startswith("complex"):
        real = element[len("complex<"):-1]
        return f"complex.constant [1.0 : {real}, 0.0 : {real}] : {element}"
    return f"arith.constant 1.0 : {element}"
