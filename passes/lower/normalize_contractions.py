"""xla-normalize-contractions: einsum-like linalg.generic -> transposes +
linalg.matmul / linalg.batch_matmul."""

from __future__ import annotations

import math

from xlac.dtypes import tensor_type
from xlac.mlir import ir
from xlac.passes.base import ModulePass, dim_position, functions, nested_ops, symbol_name, text_of
from xlac.passes.helper_calls import SymbolNames, call_instead, fresh_name, named_helper_at
from xlac.record import record

_BODIES = (["arith.mulf", "arith.addf"], ["arith.muli", "arith.addi"])
# Named ops stablehlo-legalize-to-linalg makes for dot_general / convolution /
# reduce_window: fold-by-expansion would fuse producers into them through a
# reshape just the same (a 2-D dot after a [4,32,64] -> [128,64] reshape of a
# tanh became one 4-loop generic no schedule recognizes).
_NAMED_PREFIXES = ("linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat",
                   "linalg.batch_matvec", "linalg.batch_vecmat", "linalg.dot",
                   "linalg.conv_", "linalg.depthwise_conv_", "linalg.pooling_")


@record
class Contraction:
    """Loop groups of C[batch, m, n] += A[batch, m, k] * B[batch, k, n]."""

    a: tuple[int, ...]            # the loop of each dim of A, B, C
    b: tuple[int, ...]
    c: tuple[int, ...]
    extents: dict[int, int]
    batch: tuple[int, ...]        # in C's order
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: tuple[int, ...]            # in A's order


@record
class NormalizeContractions(ModulePass):
    """Rewrite each contraction `linalg.generic` as transposes and a named matmul.

    Why: stablehlo-legalize-to-linalg emits a dot_general with transposed or
    several batch/contracting dims (attention's Q.K^T, a gradient's X^T.dY)
    as a linalg.generic. linalg-fuse-elementwise-ops then fuses elementwise
    producers into it, recomputing them once per output column, and no
    matmul schedule recognizes it. As A -> [batch, m, k], B -> [batch, k, n]
    (linalg.transpose + tensor.collapse_shape, skipped where already so),
    a `linalg.batch_matmul` (`linalg.matmul` without batch dims) and the
    inverse reshape of C, it gets the matmul schedule and no fusion.

    Example:
        linalg.generic {indexing_maps = [(b,m,n,k)->(b,m,k), (b,m,n,k)->(b,n,k),
                        (b,m,n,k)->(b,m,n)]} ins(%q, %k) outs(%c)     // mulf, addf
    becomes
        %kt = linalg.transpose ins(%k) ... permutation = [0, 2, 1]
        linalg.batch_matmul ins(%q, %kt) outs(%c)
    """

    name = "xla-normalize-contractions"
    # Only move each contraction into a function of its own, as it is. Run
    # so before linalg-fuse-elementwise-ops, which fuses producers into a
    # linalg op through any reshape next to it but not through a call.
    outline: bool = False

    def run(self, module: ir.Operation) -> None:
        taken = SymbolNames(symbol_name(f) for f in functions(module))
        for func in functions(module):
            for op in nested_ops(func):
                if self.outline and _is_named_contraction(op):
                    _outline(module, op, fresh_name(taken, "xla_contraction"))
                    continue
                shape = _contraction(op) if op.name == "linalg.generic" else None
                if shape is None:
                    continue
                name = fresh_name(taken, "xla_contraction")
                if self.outline:
                    _outline(module, op, name)
                elif not _few_rows_along_k(shape):
                    _replace(module, op, shape, name)


# At most this many rows of C: a row reduction per output, not a matmul. The
# reduction streams the weight once per row: at 4 rows of 4096 x 4096 it was
# 7% slower than the matmul (3.79 -> 4.05 ms); at 8 rows of 768 x 768 faster.
FEW_ROWS = 2


def _few_rows_along_k(s: Contraction) -> bool:
    """A matrix-vector product whose two operands both run along k (a PyTorch
    Linear's [n, k] weight, at batch 1 or 2): stays the generic, whose loops end
    in k, for the row-reduction schedule; each output is a dot product of two
    contiguous rows and the weight is read once. As a matmul its weight was
    transposed by a kernel first and its 8-row register tiles were masked down
    to the one row there is: 1 x 1280 x 1000, 1.03 -> 0.085 ms (XLA 0.21)."""
    rows = math.prod(s.extents[d] for d in s.m)
    return not s.batch and rows <= FEW_ROWS and len(s.k) == 1 \
        and s.a[-1] == s.k[0] and s.b[-1] == s.k[0] and list(s.c) == [*s.m, *s.n]


def _is_named_contraction(op: ir.Operation) -> bool:
    return op.name.startswith(_NAMED_PREFIXES) and len(op.operands) == 3 \
        and len(op.results) == 1 and isinstance(op.results[0].type, ir.RankedTensorType)


def _contraction(op: ir.Operation) -> Contraction | None:
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    types = [o.type for o in op.operands]
    if not all(isinstance(t, ir.RankedTensorType) and t.has_static_shape for t in types):
        return None
    elements = [text_of(t.element_type) for t in types]
    narrow = elements[0] == elements[1] and elements[0] in ("bf16", "f16") and elements[2] == "f32"
    if (len(set(elements)) != 1 and not narrow) or not _is_multiply_add(op, widened=narrow):
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    dims = [_dims(amap) for amap in maps]
    if any(d is None for d in dims):
        return None
    a, b, c = dims
    extents = {loop: size for loops, t in zip(dims, types) for loop, size in zip(loops, t.shape)}
    batch = tuple(d for d in c if d in a and d in b)
    m = tuple(d for d in c if d in a and d not in b)
    n = tuple(d for d in c if d in b and d not in a)
    k = tuple(d for d in a if d in b and d not in c)
    if not (m and n and k) or len(batch + m + n + k) != maps[0].n_dims \
            or len(set(a)) != len(a) or len(set(b)) != len(b) or len(set(c)) != len(c):
        return None
    return Contraction(a, b, c, extents, batch, m, n, k)


def _dims(amap) -> tuple[int, ...] | None:
    found = []
    for expr in amap.results:
        dim = dim_position(expr)
        if dim is None:
            return None
        found.append(dim)
    return tuple(found)


def _is_multiply_add(op: ir.Operation, widened: bool = False) -> bool:
    """Body: yield(out + in0 * in1), nothing else (``widened``: each input
    extended first, bf16/f16 operands into an f32 sum, which
    xla-widen-contractions{keep-narrow} leaves for a library matmul)."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    inputs = set(block.arguments[:2])
    if widened:
        extended = ops[:2]
        if [o.operation.name for o in extended] != ["arith.extf", "arith.extf"] \
                or {o.operands[0] for o in extended} != inputs or len(inputs) != 2:
            return False
        inputs, ops = {o.result for o in extended}, ops[2:]
    if [o.operation.name for o in ops[:-1]] not in _BODIES:
        return False
    multiply, add, terminator = ops
    return (set(multiply.operands) == inputs and len(set(multiply.operands)) == 2
            and set(add.operands) == {multiply.result, block.arguments[2]}
            and terminator.operands[0] == add.result)


def _outline(module: ir.Operation, op: ir.Operation, name: str) -> None:
    """Move ``op`` into ``func.func private @name(a, b, c)`` and call that."""
    types = [str(o.type) for o in op.operands]
    text = (f"func.func private @{name}(%a: {types[0]}, %b: {types[1]}, %c: {types[2]})"
            f" -> {types[2]} {{\n  return %c : {types[2]}\n}}\n")
    function = _add_function(module, op, text, name)
    block = function.regions[0].blocks[0]
    operands = list(op.operands)
    call_instead(op, name)
    terminator = list(block.operations)[0].operation
    op.move_before(terminator)
    for old, new in zip(operands, block.arguments):
        op.replace_uses_of_with(old, new)
    terminator.replace_uses_of_with(block.arguments[2], op.results[0])


def _add_function(module: ir.Operation, op: ir.Operation, text: str, name: str) -> ir.Operation:
    function = named_helper_at(text, name, op)
    module.regions[0].blocks[0].append(function)
    return function


def _replace(module: ir.Operation, op: ir.Operation, shape: Contraction, name: str) -> None:
    # the dot's precision (xla-mark-contraction-precision) stays the matmul's
    marks = f" {{xla.precision = {op.attributes['xla.precision']}}}" \
        if "xla.precision" in op.attributes else ""
    text = _helper_text(shape, name, [str(o.type) for o in op.operands],
                        [str(o.type.element_type) for o in op.operands], marks)
    _add_function(module, op, text, name)
    call_instead(op, name)
    op.erase()




def _transposed_elements(s: Contraction) -> int:
    """Elements the helper transposes: A, B and C wherever their dims are not
    already in [batch, m, k], [batch, k, n], [batch, m, n] order. A 2-D
    matmul's B counts nothing: the schedule packs B through its transpose
    (contraction_plan.py)."""
    def moved(loops, order) -> int:
        return 0 if list(loops) == list(order) else math.prod(s.extents[d] for d in loops)
    b_moved = moved(s.b, [*s.batch, *s.k, *s.n]) if s.batch else 0
    return moved(s.a, [*s.batch, *s.m, *s.k]) + b_moved + moved(s.c, [*s.batch, *s.m, *s.n])


def _swapped(s: Contraction) -> Contraction:
    """C^T = B^T A^T: B's free dims become the rows. Attention's P.V with V
    first (a flax U-Net's [b, k, h, d] x [b, h, q, k] -> [b, h, d, q]) then
    transposes V and C (1 MB each) instead of the 1024 x 1024 probabilities
    of each head (32 MB)."""
    return Contraction(s.b, s.a, s.c, s.extents, s.batch, s.n, s.m, tuple(d for d in s.b if d in s.k))


def _oriented(s: Contraction) -> tuple[Contraction, bool]:
    """The contraction with the fewer elements to transpose, and whether its
    operands were swapped. A weight gradient's X^T.dY per window (contracting
    the leading dims of both) swaps: dY^T is transposed once for every window,
    and each window becomes the B the schedule packs as it lies."""
    if _transposed_elements(_swapped(s)) < _transposed_elements(s):
        return _swapped(s), True
    return s, False


def _helper_text(s: Contraction, name: str, types: list[str], elements: list[str],
                 marks: str = "") -> str:
    """``elements``: of A, B and C (A's and B's are one type)."""
    s, swapped = _oriented(s)
    body = _Body(elements[0])
    batch = [s.batch] if s.batch else []
    first, second = ("%b", "%a") if swapped else ("%a", "%b")
    a = body.reshape(first, s.a, [*s.batch, *s.m, *s.k], batch + [s.m, s.k], s.extents)
    b = body.reshape(second, s.b, [*s.batch, *s.k, *s.n], batch + [s.k, s.n], s.extents)
    body.element = elements[2]
    c = body.reshape("%c", s.c, [*s.batch, *s.m, *s.n], batch + [s.m, s.n], s.extents)
    named = "linalg.batch_matmul" if s.batch else "linalg.matmul"
    product = body.emit(f"{named}{marks} ins({a}, {b} : {body.types[a]}, {body.types[b]}) "
                        f"outs({c} : {body.types[c]}) -> {body.types[c]}", body.types[c])
    result = body.unreshape(product, s.c, [*s.batch, *s.m, *s.n], batch + [s.m, s.n], s.extents)
    return (f"func.func private @{name}(%a: {types[0]}, %b: {types[1]}, %c: {types[2]})"
            f" -> {types[2]} {{\n{''.join(body.lines)}  return {result} : {types[2]}\n}}\n")


class _Body:
    """SSA lines of the helper; remembers each value's type."""

    def __init__(self, element: str):
        self.element = element
        self.lines: list[str] = []
        self.types: dict[str, str] = {}
        self._count = 0

    def tensor(self, shape) -> str:
        return tensor_type(shape, self.element)

    def emit(self, rhs: str, type_: str) -> str:
        value = f"%v{self._count}"
        self._count += 1
        self.lines.append(f"  {value} = {rhs}\n")
        self.types[value] = type_
        return value

    def reshape(self, value: str, loops, order, groups, extents) -> str:
        """``value`` (dims = ``loops``) -> dims in ``order``, then ``groups`` collapsed."""
        self.types.setdefault(value, self.tensor([extents[d] for d in loops]))
        value = self.transpose(value, [loops.index(d) for d in order], [extents[d] for d in order])
        shape = [math.prod(extents[d] for d in group) for group in groups]
        if len(shape) == len(order):
            return value
        return self.emit(f"tensor.collapse_shape {value} {_reassociation(groups)} : "
                         f"{self.types[value]} into {self.tensor(shape)}", self.tensor(shape))

    def unreshape(self, value: str, loops, order, groups, extents) -> str:
        """The inverse of ``reshape``: expand ``groups``, transpose ``order`` -> ``loops``."""
        full = [extents[d] for d in order]
        if len(groups) != len(order):
            value = self.emit(f"tensor.expand_shape {value} {_reassociation(groups)} "
                              f"output_shape [{', '.join(map(str, full))}] : "
                              f"{self.types[value]} into {self.tensor(full)}", self.tensor(full))
        return self.transpose(value, [order.index(d) for d in loops], [extents[d] for d in loops])

    def transpose(self, value: str, permutation: list[int], shape: list[int]) -> str:
        if permutation == sorted(permutation):
            return value
        empty = self.emit(f"tensor.empty() : {self.tensor(shape)}", self.tensor(shape))
        return self.emit(f"linalg.transpose ins({value} : {self.types[value]}) outs({empty} : "
                         f"{self.tensor(shape)}) permutation = {permutation}", self.tensor(shape))


def _reassociation(groups) -> str:
    position, parts = 0, []
    for group in groups:
        parts.append("[" + ", ".join(str(position + i) for i in range(len(group))) + "]")
        position += len(group)
    return "[" + ", ".join(parts) + "]"
