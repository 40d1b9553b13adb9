"""xla-narrow-index-vectors: index arithmetic that only feeds a narrowing cast
computed in the narrow type; one whose values fit i32 that feeds an int-to-float
conversion, converted from i32."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, module_ops
from xlac.passes.cpu.index_ranges import bit_width, fits, value_range

_CASTS = ("arith.index_cast", "arith.index_castui")
_RING_OPS = ("arith.addi", "arith.subi", "arith.muli")   # truncation commutes with them
_ORDER_OPS = ("arith.maxsi", "arith.minsi")   # ... with these where the operands fit
_EXTENDS = {"arith.index_cast": "arith.extsi", "arith.index_castui": "arith.extui"}
_TO_FLOAT = ("arith.sitofp", "arith.uitofp")


class NarrowIndexVectors(ModulePass):
    """Rewrite `index_cast(v) : vector<N x index> -> vector<N x iK>` (K <= 32)
    where ``v`` is built of `addi`, `muli`, `vector.broadcast`, `vector.step`
    and constants: the same tree in iK, its scalar leaves cast once.

    Why: a vectorized `iota` (and any op reading `linalg.index`) computes its
    lanes as 64-bit index vectors and truncates them at the end: an i8 iota's
    32 lanes were 8 AVX2 registers of i64 adds and a pack cascade per store,
    512x1024 in 0.11-0.12 ms where XLA writes it in 0.04. Truncation to K bits
    is a ring homomorphism (trunc(a + b) = trunc(a) + trunc(b), the same for
    products), so the narrow tree gives the same bits; `vector.step` becomes
    the constant 0 .. N-1 in iK, wrapped as truncation wraps it. Only
    vectors are rewritten (a scalar cast costs one instruction), and a tree
    that reaches any other op leaves that op's value cast, as before.

        %s = vector.step : vector<32xindex>
        %b = vector.broadcast %j : index to vector<32xindex>
        %v = arith.addi %b, %s : vector<32xindex>
        %c = arith.index_cast %v : vector<32xindex> to vector<32xi8>
      ->
        %j8 = arith.index_cast %j : index to i8
        %b8 = vector.broadcast %j8 : i8 to vector<32xi8>
        %c = arith.addi %b8, %cst : vector<32xi8>     // %cst = dense<[0, 1, ..., 31]>

    A 64-bit index vector converted to a float (an f64 iota: `sitofp` of the
    `index_cast` to i64) is converted from i32 instead where the tree's values
    provably fit i32 (`index_ranges.value_range`: loop bounds, constants): the
    same values, so the same floats, and AVX2 converts i32 lanes in one
    instruction where it has none for i64 lanes (LLVM converts them one by one:
    a 512x1024 f64 iota at x86-64-v3 took 2.1-2.7x XLA's time).

        %c = arith.index_cast %v : vector<4xindex> to vector<4xi64>
        %f = arith.sitofp %c : vector<4xi64> to vector<4xf64>
      ->
        %f = arith.sitofp %v32 : vector<4xi32> to vector<4xf64>  // %v32: the tree in i32
    """

    name = "xla-narrow-index-vectors"

    acts_on = frozenset((*_CASTS, "vector.gather", "arith.cmpi"))

    def run(self, module: ir.Operation) -> None:
        for op in module_ops(module):
            if op.name in _CASTS and _narrowing_vector_cast(op):
                _narrow(op)
            elif op.name in _TO_FLOAT and (cast := _i32_convertible(op)) is not None:
                _convert_from_i32(op, cast)
            elif op.name == "vector.gather" and _i32_gather_indices(op):
                _gather_with_i32_indices(op)
            elif op.name == "arith.cmpi" and _i32_comparable(op):
                _compare_in_i32(op)


def _i32_comparable(compare: ir.Operation) -> bool:
    """Whether ``compare`` reads wider-than-i32 vectors that are each an index
    tree cast (or a constant) whose values fit i32, at least one a tree."""
    if not isinstance(compare.operands[0].type, ir.VectorType) or bit_width(compare.operands[0].type) <= 32:
        return False
    kinds = [_i32_operand(v) for v in compare.operands]
    return None not in kinds and "tree" in kinds


def _i32_operand(value: ir.Value) -> str | None:
    """"tree": an index_cast of an index vector tree fitting i32; "constant":
    a constant fitting i32; None: neither."""
    op = _defining(value)
    if op is None:
        return None
    if op.name == "arith.constant":
        bounds = value_range(value)
        return "constant" if bounds is not None and fits(bounds, 32) else None
    if op.name not in _CASTS or not isinstance(ir.VectorType(op.operands[0].type).element_type, ir.IndexType):
        return None
    bounds = value_range(op.operands[0])
    return "tree" if _tree(op.operands[0]) >= 1 and bounds is not None and fits(bounds, 32) else None


def _compare_in_i32(compare: ir.Operation) -> None:
    """``compare`` on the same values in i32: both sides are signed i32 values
    sign-extended (an index cast of a value in i32's range), and sign extension
    keeps equality and both the signed and the unsigned order, so every
    predicate gives the same lanes. An i64 iota's compare (`jax.jacfwd`'s
    diagonal `iota_i == iota_j`) was 8 zmm of adds and compares per 64 lanes."""
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(compare), compare.location:
        narrow = [_narrowed(_source(v), i32) for v in compare.operands]
        new = ir.Operation.create("arith.cmpi", results=[compare.result.type], operands=narrow,
                                  attributes={"predicate": compare.attributes["predicate"]})
    old = {_defining(v): None for v in compare.operands}
    compare.result.replace_all_uses_with(new.result)
    compare.erase()
    for op in old:
        if not list(op.result.uses):
            op.erase()


def _source(value: ir.Value) -> ir.Value:
    """The index tree an index cast reads, or the constant itself."""
    op = _defining(value)
    return op.operands[0] if op.name in _CASTS else value


def _i32_gather_indices(gather: ir.Operation) -> bool:
    """Whether ``gather``'s index vector is an index tree whose values fit i32."""
    indices = gather.operands[len(gather.operands) - 3]     # then the mask, the pass-through
    if not isinstance(ir.VectorType(indices.type).element_type, ir.IndexType) or _tree(indices) < 1:
        return False
    bounds = value_range(indices)
    return bounds is not None and fits(bounds, 32)


def _gather_with_i32_indices(gather: ir.Operation) -> None:
    """``gather`` reads its lanes at the same offsets computed in i32: AVX2's
    `vpgatherdd`/`vpgatherdps` take 8 i32 indices where `vpgatherqd` takes 4
    i64 (the offsets are sign-extended to the pointer's width as before)."""
    position = len(gather.operands) - 3
    with ir.InsertionPoint(gather), gather.location:
        narrow = _narrowed(gather.operands[position], ir.IntegerType.get_signless(32))
    gather.operands[position] = narrow


def _i32_convertible(convert: ir.Operation) -> ir.Operation | None:
    """The index_cast ``convert`` reads, where its index tree's values fit i32."""
    cast = _defining(convert.operands[0])
    if cast is None or cast.name not in _CASTS or not isinstance(cast.operands[0].type, ir.VectorType):
        return None
    if not isinstance(ir.VectorType(cast.operands[0].type).element_type, ir.IndexType):
        return None
    bounds = value_range(cast.operands[0])
    if bounds is None or _tree(cast.operands[0]) <= 1:
        return None
    unsigned = cast.name == "arith.index_castui" or convert.name == "arith.uitofp"
    lowest = 0 if unsigned else -(1 << 31)
    return cast if lowest <= bounds[0] and bounds[1] < 1 << 31 else None


def _convert_from_i32(convert: ir.Operation, cast: ir.Operation) -> None:
    """``convert`` reads the tree in i32 (signed: its values are non-negative
    where the cast or the conversion was unsigned)."""
    i32 = ir.IntegerType.get_signless(32)
    with ir.InsertionPoint(convert), convert.location:
        narrow = _narrowed(cast.operands[0], i32)
        wide = ir.Operation.create("arith.sitofp", results=[convert.result.type], operands=[narrow])
    convert.result.replace_all_uses_with(wide.result)
    convert.erase()
    if not list(cast.result.uses):
        cast.erase()


def _narrowing_vector_cast(op: ir.Operation) -> bool:
    source, result = op.operands[0].type, op.result.type
    if not (isinstance(source, ir.VectorType) and isinstance(result, ir.VectorType)):
        return False
    source, result = ir.VectorType(source), ir.VectorType(result)
    return isinstance(source.element_type, ir.IndexType) \
        and isinstance(result.element_type, ir.IntegerType) \
        and ir.IntegerType(result.element_type).width <= 32 and _tree(op.operands[0]) > 1


def _defining(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        return owner.operation
    return owner if isinstance(owner, ir.Operation) else None     # None: a block argument


def _tree(value: ir.Value) -> int:
    """How many ops of the rewritable kind build ``value`` (0: a leaf)."""
    op = _defining(value)
    if op is None:
        return 0
    if op.name in _RING_OPS or op.name in _ORDER_OPS:
        return 1 + sum(_tree(v) for v in op.operands)
    if op.name == "arith.select":
        return 1 + sum(_tree(v) for v in op.operands[1:])
    if op.name in ("vector.broadcast", "vector.step", "arith.constant"):
        return 1
    return 1 if op.name in _CASTS and bit_width(op.operands[0].type) < 64 else 0


def _narrow(cast: ir.Operation) -> None:
    element = ir.VectorType(cast.result.type).element_type
    with ir.InsertionPoint(cast), cast.location:
        narrow = _narrowed(cast.operands[0], element)
    cast.result.replace_all_uses_with(narrow)
    cast.erase()


def _retyped(value_type: ir.Type, element: ir.Type) -> ir.Type:
    if isinstance(value_type, ir.VectorType):
        return ir.VectorType.get(ir.VectorType(value_type).shape, element)
    return element


def _narrowed(value: ir.Value, element: ir.Type) -> ir.Value:
    """``value`` (index or vector of index) truncated to ``element``, its tree rebuilt."""
    op, to = _defining(value), _retyped(value.type, element)
    name = op.name if op is not None else ""
    width = ir.IntegerType(element).width
    if name in _RING_OPS or (name in _ORDER_OPS and _operands_fit(op, width)):
        lhs, rhs = (_narrowed(v, element) for v in op.operands)
        return ir.Operation.create(name, results=[to], operands=[lhs, rhs]).result
    if name == "arith.select":
        chosen = [_narrowed(v, element) for v in op.operands[1:]]
        return ir.Operation.create(name, results=[to], operands=[op.operands[0], *chosen]).result
    if name in _CASTS and (from_width := bit_width(op.operands[0].type)) < 64:
        return _resized(op.operands[0], from_width, width, _EXTENDS[name], to)
    if name == "vector.broadcast":
        inner = _narrowed(op.operands[0], element)
        return ir.Operation.create(name, results=[to], operands=[inner]).result
    if name == "vector.step":
        lanes = [ir.IntegerAttr.get(element, _wrapped(i, width))
                 for i in range(ir.VectorType(value.type).shape[0])]
        return _constant(to, ir.DenseElementsAttr.get(lanes, type=to))
    if name == "arith.constant":
        return _narrowed_constant(op, to, element)
    return ir.Operation.create("arith.index_cast", results=[to], operands=[value]).result


def _operands_fit(op: ir.Operation, width: int) -> bool:
    """A signed max or min gives the same bits in ``width`` bits where its
    operands are ``width``-bit values (truncation keeps their order)."""
    bounds = [value_range(v) for v in op.operands]
    return all(b is not None and fits(b, width) for b in bounds)


def _resized(value: ir.Value, from_width: int, width: int, extend: str, to: ir.Type) -> ir.Value:
    """An iK ``value`` (that an index cast widened) as ``width`` bits: itself,
    extended as the cast extended it, or truncated."""
    if from_width == width:
        return value
    name = extend if from_width < width else "arith.trunci"
    return ir.Operation.create(name, results=[to], operands=[value]).result


def _narrowed_constant(op: ir.Operation, to: ir.Type, element: ir.Type) -> ir.Value:
    width, attr = ir.IntegerType(element).width, op.attributes["value"]
    if not isinstance(to, ir.VectorType):
        return _constant(to, ir.IntegerAttr.get(element, _wrapped(ir.IntegerAttr(attr).value, width)))
    dense = ir.DenseIntElementsAttr(attr)
    if dense.is_splat:
        lane = ir.IntegerAttr.get(element, _wrapped(int(dense[0]), width))
        return _constant(to, ir.DenseElementsAttr.get_splat(to, lane))
    if len(ir.VectorType(to).shape) != 1:
        return ir.Operation.create("arith.index_cast", results=[to], operands=[op.result]).result
    lanes = [ir.IntegerAttr.get(element, _wrapped(int(v), width)) for v in dense]
    return _constant(to, ir.DenseElementsAttr.get(lanes, type=to))


def _wrapped(value: int, width: int) -> int:
    """``value`` truncated to ``width`` bits, as a signed integer."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >= 1 << (width - 1) else value


def _constant(to: ir.Type, value: ir.Attribute) -> ir.Value:
    return ir.Operation.create("arith.constant", results=[to], attributes={"value": value}).result
