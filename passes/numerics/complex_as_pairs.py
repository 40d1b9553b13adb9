"""xla-complex-as-pairs: complex tensors as their parts' pairs in a minor dim of 2."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.base import ModulePass, nested_ops
from xlac.passes.cpu.plans.pair_transpose_plan import complex_transpose_in_blocks
from xlac.passes.fusion.inline_fusions import GROUP_ATTR, KIND_ATTR
from xlac.passes.lower.rewrite_reduce_windows import is_scan_window
from xlac.passes.numerics.complex_bits import is_complex, moves_c64_bits, retype_as_bits, touches_complex
from xlac.passes.numerics.complex_constants import constant_parts, equal_parts
from xlac.passes.numerics.complex_iota import iota_pairs
from xlac.passes.numerics.complex_merged_pairs import gather_pairs, gathers_whole_rows
from xlac.passes.numerics.complex_pair_math import COSTLY, costly_pairs, has_costly, takes

# ops whose complex form moves or adds each part alone: the same op on the pairs
_LANEWISE = ("stablehlo.add", "stablehlo.subtract", "stablehlo.negate", "stablehlo.reshape",
             "stablehlo.convert")
_RESHAPED = ("stablehlo.transpose", "stablehlo.broadcast_in_dim", "stablehlo.slice",
             "stablehlo.concatenate", "stablehlo.pad")
_PARTS = ("stablehlo.real", "stablehlo.imag", "stablehlo.complex", "stablehlo.constant",
          "stablehlo.iota")
_SUMS = ("stablehlo.reduce", "stablehlo.reduce_window")
_PRODUCTS = ("stablehlo.multiply",)
_TAGS = (GROUP_ATTR, KIND_ATTR)


class ComplexAsPairs(ModulePass):
    """In a module whose complex values only go through sums (`reduce` of
    `add`, a `reduce_window` of `add` that is a scan), adds, negations, data
    movement (transpose, broadcast, reshape, slice, concatenate, pad),
    complex -> complex converts, `real`/`imag`/`complex`, iotas
    (complex_iota.py), calls, gathers of
    whole minor rows (on the merged shape: complex_merged_pairs.py) and
    multiplies summed over outer dims only (as the parts' ac - bd, ad + bc), give every
    complex tensor the type of its parts with a minor dim of 2
    (`tensor<4x8xcomplex<f32>>` -> `tensor<4x8x2xf32>`), the real part first:
    what a complex number is in memory, so the entry's bare pointers stay the
    caller's arrays.

    Why: a complex tensor lowers to linalg on `complex<f32>` elements, which
    no vector schedule takes (vectors hold ints and floats only): a column
    sum of c64 ran as scalar loops walking the rows (5-8x XLA), a cumsum's
    window 75-110x. As pairs, a complex sum is the f32 (f64) sum of each
    part, added in the order the real schedules add, and the real reduction,
    scan and copy schedules take it. An init or padding value must be a
    constant whose parts are equal (0: every sum jax writes), the scalar both
    parts start from. A c64 exp, sqrt, log, log1p, tanh, tan or expm1 goes as
    pairs too, and with it the module's other multiplies (complex_pair_math.py:
    their f32 functions are vector polynomials). A module with any other complex op (another multiply,
    a c128 exp, a gather of columns, a loop ...) stays as it is: its complex values would have to be
    joined back for that op, a scalar loop of its own.

    A module that only moves whole c64 numbers and selects or gathers them
    instead gets i64 for c64, the same 8 bytes (xlac.passes.numerics.complex_bits).

        %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across
             dimensions = [0] : (tensor<4x8xcomplex<f32>>, ...) -> tensor<8xcomplex<f32>>
      ->
        %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across
             dimensions = [0] : (tensor<4x8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
    """

    name = "xla-complex-as-pairs"

    def run(self, module: ir.Operation) -> None:
        funcs = [op.operation for op in module.regions[0].blocks[0].operations
                 if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)]
        holding = [f for f in funcs if _holds_complex(f)]
        # all or none: a call passes its callee's types, retyped together. c64
        # moves first: a gather of rows as i64 lanes is the pairs' merged copy
        if holding and moves_c64_bits(holding):
            with ir.Location.unknown(module.context):
                for func in holding:
                    retype_as_bits(func)
        elif holding and all(_takes_pairs(f, _any_costly(holding)) for f in holding):
            with ir.Location.unknown(module.context):
                for func in holding:
                    _retype(func)


def _pairs_of(type_: ir.Type) -> ir.Type:
    tensor = ir.RankedTensorType(type_)
    part = ir.ComplexType(tensor.element_type).element_type
    return ir.RankedTensorType.get([*tensor.shape, 2], part)


def _holds_complex(func: ir.Operation) -> bool:
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    return any(is_complex(t) for t in (*ftype.inputs, *ftype.results)) or \
        any(touches_complex(op) for op in nested_ops(func))


def _any_costly(funcs: list[ir.Operation]) -> bool:
    return any(has_costly(nested_ops(f)) for f in funcs)


def _takes_pairs(func: ir.Operation, costly: bool) -> bool:
    """Whether each op of ``func`` on complex values has a pair form and sits
    in its body (not in a loop's or branch's region, which may use values
    from outside it); ``costly``: the module has a complex function whose
    pairs pay for its multiplies' (complex_pair_math.py)."""
    body = func.regions[0].blocks[0]
    for op in nested_ops(func):
        if op.parent.name in _SUMS:
            continue                      # a sum's body: rebuilt on the parts' scalars
        if not touches_complex(op):
            continue
        if op.block != body or not _has_pair_form(op, costly):
            return False
    return True


def _has_pair_form(op: ir.Operation, costly: bool) -> bool:
    name = op.name
    if name in COSTLY:
        return takes(op)
    if name in ("func.return", "func.call") or name in _LANEWISE or name in _RESHAPED:
        if name == "stablehlo.convert":
            return all(is_complex(v.type) for v in (*op.operands, *op.results))
        if name == "stablehlo.pad":
            return equal_parts(op.operands[1]) is not None
        if name == "stablehlo.transpose":
            return not _moves_c64_minor_dim(op)
        return True
    if name in _PARTS:
        return name != "stablehlo.constant" or constant_parts(op) is not None
    if name == "stablehlo.gather":
        return gathers_whole_rows(op)
    if name in _PRODUCTS:
        return costly or _summed_down_columns(op)
    if name in _SUMS:
        # a window other than a scan stays a windowed loop nest: as pairs, its
        # innermost loop would be the 2 parts (c64 3x3 sums: 0.7x XLA -> 1.9x)
        window = name == "stablehlo.reduce" or is_scan_window(op)
        return window and len(op.results) == 1 and _adds(op) and \
            equal_parts(op.operands[1]) is not None
    return False


def _summed_down_columns(op: ir.Operation) -> bool:
    """Whether product ``op`` only feeds sums over outer dims (`jnp.sum(a * b, 0)`):
    as complex, a scalar loop walking the rows (c64 5x XLA). Elsewhere the
    complex loop (LLVM vectorizes it) beat the pairs' strided kernels 2x."""
    rank = ir.RankedTensorType(op.results[0].type).rank
    users = [use.owner for use in op.results[0].uses]
    return bool(users) and all(
        user.name == "stablehlo.reduce" and
        rank - 1 not in list(ir.DenseI64ArrayAttr(user.attributes["dimensions"]))
        for user in users)


def _moves_c64_minor_dim(op: ir.Operation) -> bool:
    """Whether transpose ``op`` of c64 gives its result a minor dim other
    than its operand's, where the pairs get no register blocks. As f32
    pairs the parts' dim stays innermost on both sides; a transpose whose
    swapped dims are multiples of 4 moves 4x4 blocks of pairs
    (pair_transpose_plan.py: 512x1024 0.9-1.0 ms, 3.0-3.1 as c64), any
    other walks the output pair by pair, measured interleaved on AVX2: a
    512x1024 transpose 1.64x XLA pair by pair, 1.07x as c64. c128 pairs are
    the faster (1.07x against 1.89x): kept. Broadcasts go as pairs at every
    width: their rows of pairs fill whole registers (minor_dim_plan.py; a
    c64 column broadcast 0.091 -> 0.063 ms against complex, Zen 4, both
    levels; 2 lanes a vector before it, 0.33 ms against 0.21)."""
    tensor = ir.RankedTensorType(op.operands[0].type)
    if ir.ComplexType(tensor.element_type).element_type != ir.F32Type.get():
        return False
    permutation = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    rank = ir.RankedTensorType(op.results[0].type).rank
    return permutation[-1] != rank - 1 and not complex_transpose_in_blocks(tensor.shape, permutation)


def _adds(op: ir.Operation) -> bool:
    """Whether the body of sum ``op`` adds its two arguments and returns that."""
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    if len(body) != 2 or body[0].name != "stablehlo.add" or body[1].name != "stablehlo.return":
        return False
    return set(body[0].operands) == set(block.arguments) and body[1].operands[0] == body[0].result


def _retype(func: ir.Operation) -> None:
    pairs: dict = {}                      # each complex value -> its pair value
    old_ops = []
    entry = func.regions[0].blocks[0]
    complex_ops = [op for op in entry.operations
                   if op.name != "func.return" and touches_complex(op)]
    for arg in entry.arguments:
        if is_complex(arg.type):
            pairs[arg] = arg              # retyped in place: the same pointer
            arg.set_type(_pairs_of(arg.type))
    for op in complex_ops:
        new = _pair_form(op, pairs)
        for old, value in zip(op.results, new):
            if is_complex(old.type):
                pairs[old] = value
            else:
                old.replace_all_uses_with(value)
        old_ops.append(op)
    terminator = list(entry.operations)[-1]
    for index, value in enumerate(terminator.operands):
        if value in pairs:
            terminator.operands[index] = pairs[value]
    for op in reversed(old_ops):
        op.erase()
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    retyped = ir.FunctionType.get([a.type for a in entry.arguments],
                                  [_pairs_of(t) if is_complex(t) else t for t in ftype.results])
    func.attributes["function_type"] = ir.TypeAttr.get(retyped)


def _pair_form(op: ir.Operation, pairs: dict) -> list[ir.Value]:
    """The values ``op``'s results become, built before it."""
    builder = _Builder(op, pairs)
    name = op.name
    if name in _LANEWISE:
        return [builder.same(op.name, list(op.operands), _pairs_of(op.results[0].type))]
    if name == "func.call":
        return builder.call(op)
    if name in _RESHAPED:
        return [builder.reshaped(op)]
    if name == "stablehlo.constant":
        return [builder.constant(op)]
    if name == "stablehlo.gather":
        return [gather_pairs(lambda *a: builder.create(*a).result, op, builder.operand(op.operands[0]),
                             _pairs_of(op.results[0].type))]
    if name in ("stablehlo.real", "stablehlo.imag"):
        return [builder.part(pairs[op.operands[0]], int(name == "stablehlo.imag"),
                             op.results[0].type)]
    if name == "stablehlo.complex":
        return [builder.joined(op)]
    if name == "stablehlo.iota":
        return [iota_pairs(builder.create, op, _pairs_of(op.results[0].type))]
    if name in _PRODUCTS:
        return [builder.product(op)]
    if name in COSTLY:
        return [costly_pairs(builder, op, _pairs_of(op.results[0].type))]
    return [builder.sum(op)]


def _i64s(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


class _Builder:
    """Pair-form ops before ``op``, tagged with its kernel."""

    def __init__(self, op: ir.Operation, pairs: dict):
        self.op, self.pairs = op, pairs
        self.point = ir.InsertionPoint(op)
        self.tags = {n: op.attributes[n] for n in _TAGS if n in op.attributes}

    def create(self, name: str, operands, result: ir.Type, attributes=None, regions=0):
        attributes = {**(attributes or {}), **self.tags}
        return ir.Operation.create(name, results=[result], operands=list(operands),
                                   attributes=attributes, regions=regions, ip=self.point,
                                   loc=self.op.location)

    def operand(self, value: ir.Value) -> ir.Value:
        return self.pairs.get(value, value)

    def same(self, name: str, operands, result: ir.Type, attributes=None) -> ir.Value:
        return self.create(name, [self.operand(v) for v in operands], result, attributes).result

    def call(self, op: ir.Operation) -> list[ir.Value]:
        results = [_pairs_of(v.type) if is_complex(v.type) else v.type for v in op.results]
        attributes = {n.name: n.attr for n in (op.attributes[i] for i in range(len(op.attributes)))}
        return list(ir.Operation.create("func.call", results=results,
                                        operands=[self.operand(v) for v in op.operands],
                                        attributes=attributes, ip=self.point,
                                        loc=self.op.location).results)

    def scalar(self, value: ir.Value, part: ir.Type) -> ir.Value:
        """The real scalar both parts of constant ``value`` are."""
        text = equal_parts(value)
        tensor = ir.RankedTensorType.get([], part)
        attribute = ir.DenseElementsAttr.get_splat(tensor, ir.FloatAttr.get(part, float(text)))
        return self.create("stablehlo.constant", [], tensor, {"value": attribute}).result

    def reshaped(self, op: ir.Operation) -> ir.Value:
        """A transpose, broadcast, slice, concatenate or pad with the minor dim kept."""
        result = _pairs_of(op.results[0].type)
        rank = ir.RankedTensorType(op.results[0].type).rank
        attributes = {n.name: n.attr for n in (op.attributes[i] for i in range(len(op.attributes)))
                      if n.name not in _TAGS}
        operands = list(op.operands)
        if op.name == "stablehlo.transpose":
            attributes["permutation"] = _i64s([*ir.DenseI64ArrayAttr(attributes["permutation"]),
                                               rank])
        elif op.name == "stablehlo.broadcast_in_dim":
            attributes["broadcast_dimensions"] = _i64s(
                [*ir.DenseI64ArrayAttr(attributes["broadcast_dimensions"]), rank])
        elif op.name == "stablehlo.slice":
            for key, extra in (("start_indices", 0), ("limit_indices", 2), ("strides", 1)):
                attributes[key] = _i64s([*ir.DenseI64ArrayAttr(attributes[key]), extra])
        elif op.name == "stablehlo.pad":
            for key in ("edge_padding_low", "edge_padding_high", "interior_padding"):
                attributes[key] = _i64s([*ir.DenseI64ArrayAttr(attributes[key]), 0])
            part = ir.RankedTensorType(result).element_type
            operands = [operands[0], self.scalar(operands[1], part)]
        return self.same(op.name, operands, result, attributes)

    def constant(self, op: ir.Operation) -> ir.Value:
        re_, im = constant_parts(op)
        result = ir.RankedTensorType(_pairs_of(op.results[0].type))
        part = result.element_type
        attribute = ir.DenseElementsAttr.get_splat(
            ir.RankedTensorType.get([2], part), ir.FloatAttr.get(part, float(re_)))
        if float(re_) != float(im) or re_.startswith("-") != im.startswith("-"):
            attribute = ir.Attribute.parse(f"dense<[{re_}, {im}]> : {ir.RankedTensorType.get([2], part)}")
        two = self.create("stablehlo.constant", [], attribute.type, {"value": attribute}).result
        return self.create("stablehlo.broadcast_in_dim", [two], result,
                           {"broadcast_dimensions": _i64s([result.rank - 1])}).result

    def part(self, pair: ir.Value, index: int, result: ir.Type) -> ir.Value:
        """Part ``index`` (0 real, 1 imaginary) of ``pair``: a slice of the minor dim."""
        shape = list(ir.RankedTensorType(pair.type).shape)
        element = ir.RankedTensorType(pair.type).element_type
        sliced = self.create("stablehlo.slice", [pair],
                             ir.RankedTensorType.get([*shape[:-1], 1], element),
                             {"start_indices": _i64s([0] * (len(shape) - 1) + [index]),
                              "limit_indices": _i64s([*shape[:-1], index + 1]),
                              "strides": _i64s([1] * len(shape))}).result
        return self.create("stablehlo.reshape", [sliced], result).result

    def joined(self, op: ir.Operation) -> ir.Value:
        """`complex(re, im)`: the two parts side by side in the minor dim."""
        return self.join(list(op.operands), _pairs_of(op.results[0].type))

    def product(self, op: ir.Operation) -> ir.Value:
        """A complex multiply as the interpreter's: (ac - bd, ad + bc) on the parts."""
        part_type = ir.RankedTensorType(op.results[0].type)      # the arguments: pairs already
        part_type = ir.RankedTensorType.get(
            part_type.shape, ir.ComplexType(part_type.element_type).element_type)
        a, b = (self.part(self.operand(op.operands[0]), i, part_type) for i in (0, 1))
        c, d = (self.part(self.operand(op.operands[1]), i, part_type) for i in (0, 1))

        def apply(name, x, y):
            return self.create(name, [x, y], part_type).result
        mul = "stablehlo.multiply"
        real = apply("stablehlo.subtract", apply(mul, a, c), apply(mul, b, d))
        imag = apply("stablehlo.add", apply(mul, a, d), apply(mul, b, c))
        return self.join([real, imag], _pairs_of(op.results[0].type))

    def join(self, values, result: ir.Type) -> ir.Value:
        """Real and imaginary ``values`` side by side in the minor dim of ``result``."""
        result = ir.RankedTensorType(result)
        one = ir.RankedTensorType.get([*result.shape[:-1], 1], result.element_type)
        parts = [self.create("stablehlo.reshape", [v], one).result for v in values]
        return self.create("stablehlo.concatenate", parts, result,
                           {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                            result.rank - 1)}).result

    def sum(self, op: ir.Operation) -> ir.Value:
        """A reduce or reduce_window of add on the pairs, the minor dim a window of 1."""
        result = ir.RankedTensorType(_pairs_of(op.results[0].type))
        part = result.element_type
        attributes = {n.name: n.attr for n in (op.attributes[i] for i in range(len(op.attributes)))
                      if n.name not in _TAGS}
        if op.name == "stablehlo.reduce_window":
            for key, extra in (("window_dimensions", 1), ("window_strides", 1),
                               ("base_dilations", 1), ("window_dilations", 1)):
                if key in attributes:
                    attributes[key] = _i64s([*ir.DenseI64ArrayAttr(attributes[key]), extra])
            if "padding" in attributes:
                rows = [list(r) for r in _padding_rows(attributes["padding"])] + [[0, 0]]
                attributes["padding"] = ir.DenseElementsAttr.get(
                    _np().array(rows, dtype=_np().int64))
        init = self.scalar(op.operands[1], part)
        summed = self.create(op.name, [self.operand(op.operands[0]), init], result, attributes,
                             regions=1)
        scalar = ir.RankedTensorType.get([], part)
        block = summed.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            added = ir.Operation.create("stablehlo.add", results=[scalar],
                                        operands=list(block.arguments), loc=op.location).result
            ir.Operation.create("stablehlo.return", operands=[added], loc=op.location)
        return summed.result


def _padding_rows(attribute: ir.Attribute):
    return _np().array(ir.DenseIntElementsAttr(attribute)).reshape(-1, 2).tolist()


def _np():
    import numpy
    return numpy
