"""xla-amx-contractions: a large bf16 x bf16 -> f32 matmul becomes a
``linalg.matmul`` on the bf16 operands marked for the AMX micro-kernel
(xla-amx-calls calls it after bufferization)."""

from __future__ import annotations

import math

from xlac.mlir import ir
from xlac.passes.base import ModulePass, functions, nested_ops, text_of
from xlac.passes.cpu.amx_epilogue import mark_epilogues
from xlac.passes.helper_calls import parse_at
from xlac.passes.numerics.exact_integer_chunks import KERNEL_MIN_WORK
from xlac.passes.numerics.widen_contractions import F32_INTEGERS
from xlac.record import record

MARK = "xla.amx"                     # the matmuls xla-apply-schedules leaves to xla-amx-calls
ZEROS = "xla.amx_zeros"              # ... whose C starts at zero (their init an empty tensor)
ALIGN = 32                           # the kernel's block: C 32 x 32, k 32 at a time


@record
class AmxContractions(ModulePass):
    """Give each f32 `linalg.matmul` (or `linalg.batch_matmul`) whose operands are widened bf16 (an
    elementwise generic yielding `arith.extf` of a bf16 value) and whose
    m x n x k is at least `min-work` (m and n at least 16) its bf16 operands back and the mark
    `xla.amx`: the schedules leave it, xla-amx-calls makes it a thread loop
    of AMX micro-kernel calls (xlac.targets.cpu.amx_kernels).

    Why: on a CPU with AMX one core's `tdpbf16ps` does about 18x the FLOPs
    of its f32 FMAs (docs/PERFORMANCE.md); XLA's bf16 dots run it.
    An f32 matmul of widened 8-bit integers (i8, ui8) whose every sum is an
    f32 integer (k x |a| x |b| <= 2^24: xla-widen-contractions' exact i8 dots
    and their chunks) takes the kernel too: the integers are bf16s exactly,
    so the kernel's sums are the same exact integers in any order. With
    `integers=i16` (CPUs with no bf16 kernel: x86-64-v3, -v4) those take the
    integer kernel instead (xlac.targets.cpu.imad_kernels): operands i16
    (the widenings made again as extsi / extui), C i32 from zeros, its sums
    converted to f32 after (exact; the chunks' readers take f32); an i32 matmul
    of 8-bit integers extended (extsi / extui: xla-widen-contractions'
    whole-k dots where the pipeline has the integer kernel) takes it with its
    i32 C as it is, whatever its k (i32 sums wrap as the dot's do). `bf16=false`
    leaves bf16 matmuls (no bf16 kernel there).

    A bf16 operand is the producer's bf16 input where the producer only
    widens it, else the producer made again with a bf16 result (it yields
    the bf16 value it widened: one pass writing bf16), else (a body with
    regions, or one that reads its output) its f32 result narrowed again
    (exact: it is a widened bf16). A matmul with indexing maps of its own (a
    transposed operand) is left as it is. Shapes that are not multiples of 32 are padded with zeros (A's
    rows and k, B's k and columns, C's rows and columns) and C cut back: a
    copy of each padded operand. The pipeline runs this pass only at the
    host level of a CPU with `amx_bf16` and `amx_tile` whose kernel granted
    the tile state (xlac.targets.cpu.pipeline).
    """

    name = "xla-amx-contractions"
    acts_on = frozenset({"linalg.matmul", "linalg.batch_matmul"})
    # m x n x k from which the kernel pays (docs/PERFORMANCE.md: 0.74x today's
    # time at 64 x 128 x 128, 1.15x at 64 x 64 x 64)
    min_work: int = KERNEL_MIN_WORK
    # whether bf16 matmuls are marked (false where there is an integer kernel alone)
    bf16: bool = True
    # the exact f32 matmuls of 8-bit integers: "bf16" on the bf16 kernel, "i16"
    # on the integer one (i16 operands, i32 C: xlac.targets.cpu.imad_kernels), "" left
    integers: str = "bf16"

    def run(self, module: ir.Operation) -> None:
        if self.integers not in KINDS and self.integers:
            raise ValueError(f"xla-amx-contractions: integers={self.integers}: one of {', '.join(KINDS)} or ''")
        for func in functions(module):
            for op in [o for o in nested_ops(func) if o.name in ("linalg.matmul", "linalg.batch_matmul")]:
                operands, kind = _kernel_operands(op, self.bf16, self.integers)
                if operands is not None and _work(op) >= self.min_work and _little_padding(op):
                    _rewrite(op, operands, KINDS[kind])
            mark_epilogues([o for o in nested_ops(func) if MARK in o.attributes])


def _shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _element(value: ir.Value) -> str:
    return text_of(ir.ShapedType(value.type).element_type)


def _work(op: ir.Operation) -> int:
    return math.prod(_shape(op.operands[0])) * _shape(op.operands[1])[-1]


def _little_padding(op: ir.Operation) -> bool:
    """At least 16 rows and 16 columns: padded to 32, at most half of the
    kernel's work is on zeros (a matrix-vector product is not its kind)."""
    return _shape(op.operands[0])[-2] >= ALIGN // 2 and _shape(op.operands[1])[-1] >= ALIGN // 2


_PLAIN_MAPS = {
    "linalg.matmul": ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    "linalg.batch_matmul": ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)",
                            "(d0, d1, d2, d3) -> (d0, d1, d2)"]}


def _plain_maps(op: ir.Operation) -> bool:
    """Whether the matmul reads A[m, k] and B[k, n] as they lie (no transposing maps)."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = [text_of(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return maps == [f"affine_map<{m}>" for m in _PLAIN_MAPS[op.name]]


@record
class Kind:
    """The element types of a kernel's operands and of its C (accumulators)."""
    operand: str
    acc: str


KINDS = {"bf16": Kind("bf16", "f32"), "i16": Kind("i16", "i32")}


def _kernel_operands(op: ir.Operation, bf16: bool, integers: str) -> tuple[list | None, str]:
    """(``_bf16_operands``, the kind the matmul takes: "bf16" or, for 8-bit
    integers with ``integers`` "i16", "i16"), (None, "") where it takes none.
    The integer kernel starts from zeros: its C must be a fill of 0.0."""
    operands = _bf16_operands(op)
    if operands is None:
        return None, ""
    integral = not any(is_bf16 for _, is_bf16 in operands) and _widened_integer(op.operands[0]) is not None
    kind = (integers if integral else "bf16" if bf16 else "")
    if _element(op.results[0]) == "i32" and kind != "i16":      # i32 sums: the integer kernel's alone
        return None, ""
    if not kind or (kind == "i16" and not _zero_fill(op.operands[2])):
        return None, ""
    return operands, kind


def _bf16_operands(op: ir.Operation) -> list[tuple[ir.Value, bool]] | None:
    """For A and B: (the value, whether it is bf16 already), or None where
    the matmul is not one of widened bf16 operands into f32 of static shape."""
    if MARK in op.attributes or not _plain_maps(op) or len(op.operands) != 3 or len(op.results) != 1 \
            or not all(isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).has_static_shape
                       for v in op.operands) or _element(op.results[0]) not in ("f32", "i32"):
        return None
    found = [_widened_bf16(v) for v in list(op.operands)[:2]]
    if None not in found:
        return found
    integers = [_widened_integer(v) for v in list(op.operands)[:2]]
    if None in integers:
        return None
    if _element(op.results[0]) == "f32" and _shape(op.operands[0])[-1] * integers[0] * integers[1] > F32_INTEGERS:
        return None
    return [(v, False) for v in list(op.operands)[:2]]


# what an 8-bit integer widened to f32 takes at most in magnitude, by its widening
_INTEGER_LARGEST = {"arith.sitofp": 128, "arith.uitofp": 255, "arith.extsi": 128, "arith.extui": 255}


def _widened_integer(value: ir.Value) -> int | None:
    """The largest magnitude of ``value``'s elements where its elementwise
    generic ends in a widening of an 8-bit integer to f32 (an i8 dot that
    xla-widen-contractions made f32, k chunked so every sum is exact), else
    None. Such integers are bf16s too (8 significant bits), so the bf16 kernel
    sums the same exact products: the same exact integers."""
    yielded = _yielded_widening(value)
    if yielded is None or yielded.name not in _INTEGER_LARGEST or str(yielded.operands[0].type) != "i8":
        return None
    return _INTEGER_LARGEST[yielded.name]


def _yielded_widening(value: ir.Value) -> ir.Operation | None:
    """The op whose f32 (i32) result ``value``'s all-parallel single-result generic yields."""
    if _element(value) not in ("f32", "i32") or not isinstance(value.owner, ir.OpView) \
            or value.owner.operation.name != "linalg.generic":
        return None
    producer = value.owner.operation
    if len(producer.results) != 1 or any(str(t) != '#linalg.iterator_type<parallel>'
                                         for t in ir.ArrayAttr(producer.attributes["iterator_types"])):
        return None
    yielded = list(producer.regions[0].blocks[0].operations)[-1].operands[0]
    return yielded.owner.operation if isinstance(yielded.owner, ir.OpView) else None


def _widened_bf16(value: ir.Value) -> tuple[ir.Value, bool] | None:
    """(``value``'s bf16 source, True) where an elementwise generic only widens
    a bf16 tensor into it, (``value``, False) where its generic ends in a widening
    of bf16, else None."""
    widening = _yielded_widening(value)
    if widening is None or widening.name != "arith.extf" or str(widening.operands[0].type) != "bf16":
        return None
    producer = value.owner.operation
    block = producer.regions[0].blocks[0]
    body = [o.operation for o in block.operations]
    source = widening.operands[0]
    maps = [str(m) for m in ir.ArrayAttr(producer.attributes["indexing_maps"])]
    if len(body) == 2 and len(producer.operands) == 2 and source == block.arguments[0] \
            and len(set(maps)) == 1 and _shape(producer.operands[0]) == _shape(value):
        return producer.operands[0], True
    return value, False


def _narrowed(value: ir.Value, before: ir.Operation, kind: Kind = KINDS["bf16"]) -> ir.Value | None:
    """``value``'s producer made again before ``before`` with a bf16 result
    (``kind``'s operand type: i16 for 8-bit integers the integer kernel takes)
    (its yield the bf16 value it widened): one pass writing bf16, not f32 and
    then a narrowing copy. None where its body has nested regions or reads
    its output (whose element type changes)."""
    producer = value.owner.operation
    old_block = producer.regions[0].blocks[0]
    body = [o.operation for o in old_block.operations]
    if any(len(o.regions) for o in body) or any(True for _ in old_block.arguments[-1].uses):
        return None
    bf16 = ir.Type.parse(kind.operand, context=before.context)
    shape = _shape(value)
    with before.location, ir.InsertionPoint(before):
        empty = ir.Operation.create("tensor.empty", results=[ir.RankedTensorType.get(shape, bf16)])
        inputs = list(producer.operands)[:-1]
        attributes = {name: producer.attributes[name] for name in ("indexing_maps", "iterator_types")}
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(inputs), 1])
        narrow = ir.Operation.create("linalg.generic", results=[empty.result.type],
                                     operands=[*inputs, empty.result], attributes=attributes, regions=1)
    arguments = [a.type for a in old_block.arguments][:-1] + [bf16]
    block = narrow.regions[0].blocks.append(*arguments, arg_locs=[before.location] * len(arguments))
    mapping = list(zip(old_block.arguments, block.arguments))
    with ir.InsertionPoint(block):
        for inner in body[:-1]:
            clone = inner.clone()
            for index, operand in enumerate(clone.operands):
                clone.operands[index] = next((new for old, new in mapping if old == operand), operand)
            mapping += list(zip(inner.results, clone.results))
        widening = body[-1].operands[0].owner.operation
        widened = widening.operands[0]
        yielded = next((new for old, new in mapping if old == widened), widened)
        if widening.name != "arith.extf":          # an 8-bit integer: to bf16 (i16) at once (exact)
            yielded = ir.Operation.create(_EXTENSIONS[kind.operand][widening.name], results=[bf16],
                                          operands=[yielded],
                                          loc=body[-1].location).result
        ir.Operation.create("linalg.yield", operands=[yielded], loc=body[-1].location)
    return narrow.results[0]


# an 8-bit integer's widening to f32, made one to the kernel's operand type
_EXTENSIONS = {"bf16": {"arith.sitofp": "arith.sitofp", "arith.uitofp": "arith.uitofp"},
               "i16": {"arith.sitofp": "arith.extsi", "arith.uitofp": "arith.extui",
                       "arith.extsi": "arith.extsi", "arith.extui": "arith.extui"}}
# the exact f32 (i32) integer narrowed to the kernel's operand type, by the matmul's operand type
_NARROWING = {("f32", "bf16"): "arith.truncf", ("f32", "i16"): "arith.fptosi", ("i32", "i16"): "arith.trunci"}


def _padded(m: int) -> int:
    return -(-m // ALIGN) * ALIGN


def _tensor(shape, element: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in shape)}x{element}>"


def _helper_text(op: ir.Operation, operands: list[tuple[ir.Value, bool]], kind: Kind = KINDS["bf16"]) -> str:
    """A function of (A, B, C) computing the matmul with the marked bf16 one
    (a batch matmul's leading dim is its batch); ``kind`` i16: i16 operands
    and an i32 C (from zeros), converted to f32 after (exact: |C| <= 2^24)."""
    a_shape, n = _shape(op.operands[0]), _shape(op.operands[1])[-1]
    lead, (m, k) = a_shape[:-2], a_shape[-2:]
    mp, kp, np_ = _padded(m), _padded(k), _padded(n)
    rank = len(a_shape)
    wide = _element(op.results[0])                 # f32, or i32 (integers extended)
    zero = "0" if kind.operand == "i16" else "0.0"
    lines = [f"  %zb = arith.constant {zero} : {kind.operand}", "  %zf = arith.constant 0.0 : f32"] \
        if (mp, kp, np_) != (m, k, n) else []
    names, parallel = [], ", ".join(['"parallel"'] * rank)
    for name, (_, is_bf16), shape, padded in \
            zip("ab", operands, [[*lead, m, k], [*lead, k, n]], [[*lead, mp, kp], [*lead, kp, np_]]):
        bf16 = _tensor(shape, kind.operand)
        current = f"%{name}"
        if not is_bf16:
            lines += [f"  %{name}e = tensor.empty() : {bf16}",
                      f"  %{name}n = linalg.generic {{indexing_maps = [#id, #id], iterator_types = "
                      f"[{parallel}]}} ins(%{name} : {_tensor(shape, wide)}) "
                      f"outs(%{name}e : {bf16}) {{\n  ^bb0(%x: {wide}, %o: {kind.operand}):\n"
                      f"    %t = {_NARROWING[wide, kind.operand]} %x : {wide} to {kind.operand}\n"
                      f"    linalg.yield %t : {kind.operand}\n  }} -> {bf16}"]
            current = f"%{name}n"
        names.append(_pad(lines, current, name, kind.operand, shape, padded, "%zb"))
    c_shape, c_padded = [*lead, m, n], [*lead, mp, np_]
    zeros = _zero_fill(op.operands[2])
    if zeros:                                # the kernel starts from zeros: no fill, no copy of one
        lines.append(f"  %ce = tensor.empty() : {_tensor(c_padded, kind.acc)}")
        c = "%ce"
    else:
        c = _pad(lines, "%c", "c", "f32", c_shape, c_padded, "%zf")
    marks = f"{MARK}, {ZEROS}" if zeros else MARK
    named = "linalg.batch_matmul" if lead else "linalg.matmul"
    lines.append(f"  %r = {named} {{{marks}}} ins({names[0]}, {names[1]} : "
                 f"{_tensor([*lead, mp, kp], kind.operand)}, {_tensor([*lead, kp, np_], kind.operand)}) "
                 f"outs({c} : {_tensor(c_padded, kind.acc)}) -> {_tensor(c_padded, kind.acc)}")
    result = "%r"
    if c_shape != c_padded:
        lines.append(f"  %cut = tensor.extract_slice %r[{', '.join(['0'] * rank)}] [{', '.join(map(str, c_shape))}] "
                     f"[{', '.join(['1'] * rank)}] : {_tensor(c_padded, kind.acc)} to {_tensor(c_shape, kind.acc)}")
        result = "%cut"
    if kind.acc != wide:
        result = _to_f32(lines, result, c_shape, kind.acc)
    types = [str(v.type) for v, _ in operands] + [str(op.operands[2].type)]
    dims = ", ".join(f"d{i}" for i in range(rank))
    return (f"#id = affine_map<({dims}) -> ({dims})>\n"
            f"func.func private @amx(%a: {types[0]}, %b: {types[1]}, %c: {types[2]}) -> {types[2]} {{\n"
            + "\n".join(lines) + f"\n  return {result} : {types[2]}\n}}\n")


def _to_f32(lines: list[str], value: str, shape, acc: str) -> str:
    """``value`` (the integer kernel's exact i32 sums) as f32: the type the
    matmul's readers take (exact: every sum within 2^24)."""
    parallel = ", ".join(['"parallel"'] * len(shape))
    lines += [f"  %fe = tensor.empty() : {_tensor(shape, 'f32')}",
              f"  %f = linalg.generic {{indexing_maps = [#id, #id], iterator_types = [{parallel}]}} "
              f"ins({value} : {_tensor(shape, acc)}) outs(%fe : {_tensor(shape, 'f32')}) {{\n"
              f"  ^bb0(%x: {acc}, %o: f32):\n    %t = arith.sitofp %x : {acc} to f32\n"
              f"    linalg.yield %t : f32\n  }} -> {_tensor(shape, 'f32')}"]
    return "%f"


def _zero_fill(value: ir.Value) -> bool:
    """Whether ``value`` is a `linalg.fill` of +0.0 (of integer 0)."""
    fill = value.owner
    if not isinstance(fill, ir.OpView) or fill.operation.name != "linalg.fill":
        return False
    constant = fill.operation.operands[0].owner
    if not isinstance(constant, ir.OpView) or constant.operation.name != "arith.constant":
        return False
    if isinstance(constant.operation.attributes["value"], ir.IntegerAttr):
        return ir.IntegerAttr(constant.operation.attributes["value"]).value == 0
    if not isinstance(constant.operation.attributes["value"], ir.FloatAttr):
        return False
    zero = ir.FloatAttr(constant.operation.attributes["value"]).value
    return zero == 0.0 and math.copysign(1.0, zero) > 0


def _pad(lines: list[str], value: str, name: str, element: str, shape, padded, zero: str) -> str:
    if list(shape) == list(padded):
        return value
    indices = ", ".join(f"%i{d}: index" for d in range(len(shape)))
    lines.append(f"  %{name}p = tensor.pad {value} low[{', '.join(['0'] * len(shape))}] "
                 f"high[{', '.join(str(p - d) for d, p in zip(shape, padded))}] {{\n  ^bb0({indices}):\n"
                 f"    tensor.yield {zero} : {element}\n  }} : {_tensor(shape, element)} to {_tensor(padded, element)}")
    return f"%{name}p"


def _rewrite(op: ir.Operation, operands: list[tuple[ir.Value, bool]], kind: Kind = KINDS["bf16"]) -> None:
    """The helper's ops in place of ``op``, its arguments the operands."""
    producers = [v.owner.operation for v in op.operands if isinstance(v.owner, ir.OpView)]
    for index, (value, is_bf16) in enumerate(operands):
        if not is_bf16 and (narrow := _narrowed(value, op, kind)) is not None:
            operands[index] = (narrow, True)
    parsed = parse_at(_helper_text(op, operands, kind), op)
    block = list(parsed.body.operations)[0].operation.regions[0].blocks[0]
    arguments = [operands[0][0], operands[1][0], op.operands[2]]
    body = [o.operation for o in block.operations]
    for inner in body[:-1]:
        inner.move_before(op)
        for old, new in zip(block.arguments, arguments):
            inner.replace_uses_of_with(old, new)
    op.results[0].replace_all_uses_with(body[-1].operands[0])
    op.erase()
    _erase_unused(producers)                  # the widenings, the fill and their empties


_DEAD_IF_UNUSED = ("linalg.generic", "linalg.fill", "tensor.empty")


def _erase_unused(ops: list[ir.Operation]) -> None:
    """Erase each of ``ops`` (and then the producers of its operands) that
    nothing reads any more and only makes a tensor."""
    pending, erased = list(ops), set()
    while pending:
        op = pending.pop()
        if op in erased or op.name not in _DEAD_IF_UNUSED or len(op.results) != 1 \
                or any(True for _ in op.results[0].uses):
            continue
        pending += [v.owner.operation for v in op.operands if isinstance(v.owner, ir.OpView)]
        erased.add(op)
        op.erase()
