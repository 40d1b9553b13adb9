"""Lowering an op to a call of a private helper function written as text.

The bindings have no builders for StableHLO ops, so xlac's lowerings write a
helper `func.func` as MLIR text (scf/tensor/arith/linalg, or simpler
StableHLO), parse it into the module and replace the op by a `func.call`;
the `inline` pass that follows folds the helper back in. An op's regions
(comparators, update functions) become private functions the helper calls.

StableHLO regions are not isolated from above, and CSE may merge a region's
constant with an equal one outside the op. A region's outside values are
either passed along as extra arguments (``captures``) or, for constants,
copied in; any other outside value is reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xlac.dtypes import tensor_type  # noqa: F401 - the passes' spelling of tensor types
from xlac.mlir import ir
from xlac.passes.base import PassFailure, nested_ops, run_memo, symbol_name

_CONSTANTS = ("stablehlo.constant", "arith.constant")


def region_declaration(region: ir.Region, name: str,
                       captures: Sequence[ir.Value] = ()) -> str:
    """A private declaration of ``@name`` with the type of a one-block region.

    Each of ``captures`` adds a trailing argument of its type.
    """
    block = region.blocks[0]
    terminator = list(block.operations)[-1]
    args = ", ".join(str(v.type) for v in [*block.arguments, *captures])
    results = ", ".join(str(v.type) for v in terminator.operands)
    return f"func.func private @{name}({args}) -> ({results})\n"


def captured_values(op: ir.Operation, inner_ops: list[ir.Operation] | None = None) -> list[ir.Value]:
    """Values the ops inside ``op`` use but ``op`` does not define, first use first.
    ``inner_ops``: ``nested_ops(op)``, where the caller has walked it already.

    Why sets: a value is defined inside when its op (a block argument's: the
    block's op) is ``op`` or one inside it; looked up in the set of those ops,
    not found by walking up from each operand, and the values found kept in a
    set too (BERT's kernels: 16k parent walks and a list search per operand).
    """
    inner_ops = nested_ops(op) if inner_ops is None else inner_ops
    inside = {op.operation, *inner_ops}
    found: list[ir.Value] = []
    seen: set = set()
    for inner in inner_ops:
        for value in inner.operands:
            if value in seen:
                continue
            owner = value.owner
            if (owner.owner if isinstance(owner, ir.Block) else owner).operation not in inside:
                found.append(value)
            seen.add(value)
    return found


def copy_outside_constants(op: ir.Operation, block: ir.Block, region_of: str) -> None:
    """Give the ops inside ``op`` their own copy, at the start of ``block``,
    of each outside constant they use; any other outside value is an error
    (it names ``region_of``, the op whose region this is)."""
    first = list(block.operations)[0]
    for inner in nested_ops(op):
        for value in inner.operands:
            if _defined_inside(value, op):
                continue
            owner = value.owner
            if isinstance(owner, ir.Block) or owner.name not in _CONSTANTS:
                raise PassFailure(inner.location, f"'{inner.name}' in a region of '{region_of}' "
                                  "uses a value defined outside it; only constants are supported")
            copy = owner.operation.clone(ir.InsertionPoint(first))
            inner.replace_uses_of_with(value, copy.result)


def replace_with_call(module: ir.Operation, op: ir.Operation, text: str, name: str,
                      bodies: dict[str, ir.Region] | None = None,
                      captures: Sequence[ir.Value] = (),
                      arguments: Sequence[ir.Value] = (),
                      operands: Sequence[ir.Value] | None = None
                      ) -> tuple[ir.Operation, dict[str, ir.Operation]]:
    """Parse helper ``@name`` from ``text`` into ``module``; call it in place of ``op``.
    Returns the call and the functions added, by name (no search of the module for them).

    ``text`` may declare functions named in ``bodies``; each gets its region.
    ``captures`` are passed to ``@name`` after the op's operands (and after
    ``arguments``, values of other ops the helper takes over) and to each
    region function as its trailing arguments (see `region_declaration`).
    ``operands``, if given, are passed instead of the op's own.
    An external function ``text`` declares (``func.func private @ssyevd_(...)``)
    that the module already declares is not added twice.
    """
    bodies = bodies or {}
    parsed = _parse(module, op, text, name)  # owns the helpers until they are moved
    declared = None                          # the module's symbols, looked up in C++
    added = {}
    for helper in [h.operation for h in parsed.body.operations]:
        if symbol_name(helper) in bodies:    # a region's declaration: never external
            _move_region_into(helper, bodies[symbol_name(helper)], captures)
        elif not helper.regions[0].blocks:
            # building the table reads every symbol of the module: only for an external
            # function (a table per region declaration made xla-gpu-kernels quadratic)
            if declared is None:
                declared = ir.SymbolTable(module)
            if symbol_name(helper) in declared:
                continue                     # an external function declared once already
        else:
            _tag_loops(helper, op.name)
        helper.move_before(_module_end(module))
        added[symbol_name(helper)] = helper
    return call_and_erase(op, name, [*arguments, *captures], operands), added


LOWERED_FROM = "xla.lowered_from"     # read by xla-apply-schedules (plans/unscheduled.py)


def _tag_loops(helper: ir.Operation, source: str) -> None:
    """Name ``source`` (the op replaced) on a helper's outermost loops: they
    are scalar code no schedule takes, and the remark that says so should
    name the op the user wrote, not the loop."""
    for inner in helper.regions[0].blocks[0].operations:
        if inner.operation.name in ("scf.for", "scf.forall", "scf.while"):
            inner.operation.attributes[LOWERED_FROM] = ir.StringAttr.get(source, helper.context)


def call_and_erase(op: ir.Operation, name: str, extra_operands: Sequence[ir.Value] = (),
                   operands: Sequence[ir.Value] | None = None) -> ir.Operation:
    """Call the existing ``@name`` in place of ``op`` (see `call_instead`), and erase
    ``op``; the call."""
    call = call_instead(op, name, extra_operands, operands)
    op.erase()
    return call


def call_instead(op: ir.Operation, name: str, extra_operands: Sequence[ir.Value] = (),
                 operands: Sequence[ir.Value] | None = None) -> ir.Operation:
    """Call the existing ``@name`` on ``op``'s operands (or ``operands``; then
    ``extra_operands``) right before ``op``, and make every user of ``op``
    read the call's results. ``op`` itself stays: the caller erases or moves it."""
    with ir.InsertionPoint(op), op.location:
        call = ir.Operation.create(
            "func.call", results=[r.type for r in op.results],
            operands=[*(op.operands if operands is None else operands), *extra_operands],
            attributes={"callee": ir.FlatSymbolRefAttr.get(name)})
    for old, new in zip(op.results, call.results):
        old.replace_all_uses_with(new)
    return call.operation


def elementwise_helper_text(name: str, arguments: Sequence[str], tensor: str,
                            lines: Sequence[str], result: str) -> str:
    """``func.func private @name(%a: tensor, ...) -> tensor`` whose body is
    ``lines`` (one op each) returning ``result``: the helpers of lowerings
    that rewrite one elementwise op into several of the same type."""
    parameters = ", ".join(f"{argument}: {tensor}" for argument in arguments)
    body = "\n  ".join(lines)
    return (f"func.func private @{name}({parameters}) -> {tensor} {{\n  {body}\n"
            f"  return {result} : {tensor}\n}}\n")


def predicate_type(tensor: str) -> str:
    """The i1 tensor type of ``tensor``'s shape (``tensor<4x8xf32>`` -> ``tensor<4x8xi1>``)."""
    return tensor.rsplit("x", 1)[0] + "xi1>" if "x" in tensor else "tensor<i1>"


def fresh_symbol(module: ir.Operation, stem: str) -> str:
    """``<stem>_<n>`` with an n that no symbol of ``module`` starts with (the
    smallest past the last one given in this pass run).

    Helpers may then add their own ``<stem>_<n>_<suffix>`` symbols freely.
    Inside a pass the module's names are read once per stem (``run_memo``):
    read per call, a pass naming a helper per op was quadratic (2,000 GPU
    kernels: 1.6 s of 4.8 million prefix tests).
    """
    memo = run_memo()
    key = ("fresh_symbol", module, stem)
    state = memo.get(key) if memo is not None else None
    if state is None:
        state = {"taken": _indexes_taken(module, stem), "next": 0}
        if memo is not None:
            memo[key] = state
    index = state["next"]
    while index in state["taken"]:
        index += 1
    state["taken"].add(index)
    state["next"] = index + 1
    return f"{stem}_{index}"


def _indexes_taken(module: ir.Operation, stem: str) -> set[int]:
    """Each n such that some symbol of ``module`` starts with ``<stem>_<n>``:
    every number the digits after ``<stem>_`` begin with (``x_12a``: 1, 12)."""
    taken, head = set(), f"{stem}_"
    for op in _module_body(module).operations:
        if "sym_name" not in op.operation.attributes:
            continue
        name = symbol_name(op.operation)
        if name.startswith(head):
            digits = re.match(r"\d*", name[len(head):]).group()
            taken.update(int(digits[:end]) for end in range(1, len(digits) + 1)
                         if str(int(digits[:end])) == digits[:end])
    return taken


def _parse(module: ir.Operation, op: ir.Operation, text: str, name: str) -> ir.Module:
    """``text`` as a module; a parse error is xlac's bug, reported at ``op``."""
    try:
        return parse_at(text, op)
    except ir.MLIRError as exc:
        raise PassFailure(op.location, f"internal error: the helper @{name} for '{op.name}' "
                                       f"does not parse ({exc}); please report it with the "
                                       "input program") from None


def parse_at(text: str, op: ir.Operation) -> ir.Module:
    """Helper functions parsed from ``text``, every op of them located at ``op``:
    what they compute is ``op``'s, so diagnostics, fusion reports and kernel
    profiles name ``op``'s source line, not the helper text's."""
    parsed = ir.Module.parse(text, context=op.context)
    location = op.location
    for inner in nested_ops(parsed.operation):
        inner.location = location
    return parsed


def named_helper_at(text: str, name: str, op: ir.Operation) -> ir.Operation:
    """The one function of ``text``, named ``@name`` in it, as ``parse_at``
    makes it, for the caller to put in its module.

    Within a pass run each text is parsed once whatever its name: a later
    text that differs only in the name (one as long, so every location the
    parser gives matches) is a clone of the first one's function, renamed and
    located at ``op``. Why: a pass making a helper per op parsed each (BERT's
    65 contraction helpers now take 15 parses, ViT's 98 take 16)."""
    memo = run_memo()
    if memo is None:                            # outside a pass manager: a detached copy
        parsed = parse_at(text, op)             # alive until cloned: it holds the function
        return _first_function(parsed).clone(ip=False)
    key = text.replace(f"@{name}(", "@" + "?" * len(name) + "(", 1)
    templates = memo.setdefault(_TEMPLATES, {})
    if key not in templates:
        parsed = parse_at(text, op)             # kept for the run: it holds the function
        templates[key] = (parsed, _first_function(parsed).clone(ip=False))
        return _first_function(parsed)
    function = templates[key][1].clone(ip=False)
    function.attributes["sym_name"] = ir.StringAttr.get(name, op.context)
    location = function.location = op.location
    for inner in nested_ops(function):
        inner.location = location
    return function


_TEMPLATES = "helper_calls.templates"


def _first_function(parsed: ir.Module) -> ir.Operation:
    return list(parsed.body.operations)[0].operation


def _move_region_into(func: ir.Operation, region: ir.Region,
                      captures: Sequence[ir.Value]) -> None:
    """Give the declaration ``func`` the body of ``region`` (which is emptied)."""
    block, region_of = region.blocks[0], region.owner.name
    terminator = list(block.operations)[-1]
    types = [v.type for v in [*block.arguments, *captures]]
    with terminator.location:
        entry = ir.Block.create_at_start(func.regions[0], types)
        with ir.InsertionPoint(entry):
            ret = ir.Operation.create("func.return", operands=list(terminator.operands))
    for old, new in zip(block.arguments, entry.arguments):
        old.replace_all_uses_with(new)
    for inner in list(block.operations)[:-1]:
        inner.move_before(ret)
    capture_arguments = list(entry.arguments)[len(block.arguments):]
    for inner in nested_ops(func):
        for outer, argument in zip(captures, capture_arguments):
            inner.replace_uses_of_with(outer, argument)
    copy_outside_constants(func, entry, region_of)


def _defined_inside(value: ir.Value, ancestor: ir.Operation) -> bool:
    owner = value.owner
    op = (owner.owner if isinstance(owner, ir.Block) else owner).operation
    while op is not None:
        if op == ancestor:
            return True
        op = op.parent.operation if op.parent is not None else None
    return False


class SymbolNames(set):
    """Names taken, and where ``fresh_name``'s search resumes for each stem."""

    def __init__(self, names=()):
        super().__init__(names)
        self.resume: dict[str, int] = {}


def symbols(module: ir.Operation) -> SymbolNames:
    """The names of the module's top-level symbols."""
    return SymbolNames(symbol_name(op.operation) for op in _module_body(module).operations
                       if "sym_name" in op.operation.attributes)


def fresh_name(taken: set[str], stem: str) -> str:
    """``<stem>_<n>`` with the smallest n not in ``taken`` past the last one
    given, which it joins: for passes naming many helpers, ``taken`` made
    once by ``symbols``. (Searching from 0 each time was quadratic: 0.06 s
    of a 500-op transpose/dot chain's compile, 1 s at 2,000 ops.)"""
    resume = taken.resume if isinstance(taken, SymbolNames) else {}
    index = resume.get(stem, 0)
    while f"{stem}_{index}" in taken:
        index += 1
    taken.add(f"{stem}_{index}")
    resume[stem] = index + 1
    return f"{stem}_{index}"


def _module_body(module: ir.Operation) -> ir.Block:
    return module.regions[0].blocks[0]


def _module_end(module: ir.Operation) -> ir.Operation:
    """The module's last op, where helpers go (before it). Kept for the pass
    run: finding it walks the module's op list (a helper per op made that
    quadratic: 0.7 s of 3,000 helpers), and the helpers go in before it, so
    it stays last. Found again if the pass erased or moved it (an op erased
    from Python raises on use; these passes run no pass manager that could
    erase it unseen)."""
    memo = run_memo()
    key = ("module_end", module)
    anchor = memo.get(key) if memo is not None else None
    if anchor is not None:
        try:
            if anchor.parent == module:
                return anchor
        except RuntimeError:                  # erased by the pass
            pass
    anchor = _module_body(module).operations[-1].operation
    if memo is not None:
        memo[key] = anchor
    return anchor


def delinearize(linear: str, shape: list[int], prefix: str) -> str:
    """MLIR text binding %<prefix>0, %<prefix>1 ... to the row-major indices of
    the flat ``index`` value ``linear`` over ``shape``."""
    lines, rest = [], linear
    for d in reversed(range(len(shape))):
        lines.append(f"%{prefix}{d} = arith.remui {rest}, %{prefix}_size{d} : index")
        if d:
            lines.append(f"%{prefix}_rest{d} = arith.divui {rest}, %{prefix}_size{d} : index")
            rest = f"%{prefix}_rest{d}"
    sizes = [f"%{prefix}_size{d} = arith.constant {n} : index" for d, n in enumerate(shape)]
    return "\n".join(sizes + lines)
