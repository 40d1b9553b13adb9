"""The base class of xlac's Python passes.

A pass is a small frozen record (``xlac.record``: what a frozen dataclass
is, without a dataclass made per class as its module is first imported,
~0.6 ms each): its fields are its options (spelled with
dashes on the command line, ``xla-select-entry{entry=main}``), its docstring
is its help text. A pass without options is a plain subclass, not decorated:
it inherits ``ModulePass``'s record methods, which are already its own (no
fields), and ``ModulePass`` keeps it frozen; making each of them a dataclass
again was half of the dataclasses a first compile builds (53 of 111 on ViT,
about 0.02 s of the compiling process's CPU). Python passes run on the whole module and walk the
functions themselves: anchoring one below the pass manager's op aborts the
process in these bindings.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from xlac import record
from xlac.mlir import ir


class PassFailure(Exception):
    """Raised inside ``run``: reported at ``location`` as an MLIR error.

    With no location the pass fails silently: it has already emitted its
    errors, one per offending op. ``kind`` is the ``xlac.errors.CompileError``
    subclass the failure becomes (``UnsupportedOpError`` for a known gap).
    """

    def __init__(self, location: ir.Location | None = None, message: str = "", kind=None):
        super().__init__(message)
        self.location = location
        self.message = message
        self.kind = kind


_last_failure = threading.local()
_run = threading.local()              # what one run of a pass remembers (run_memo)
_census = threading.local()           # the op names of the module, shared by a run of passes
_walked = threading.local()           # the module's ops, shared by a run of passes that keep them


def run_memo() -> dict | None:
    """A dict that lives for the current Python pass run on this thread (None
    outside one): helpers keep there what they would otherwise recompute per
    op from the whole module, knowing no other pass changes it meanwhile."""
    return getattr(_run, "memo", None)


def take_failure_kind():
    """The ``kind`` of the last PassFailure on this thread (None if none), cleared."""
    kind = getattr(_last_failure, "kind", None)
    _last_failure.kind = None
    return kind


@record.record
class ModulePass:
    """A pass over a ``builtin.module`` written in Python."""

    name: ClassVar[str] = ""
    # The ops this pass rewrites: with none of them in the module it does nothing,
    # and is skipped on the census of op names its Python neighbours share (one walk
    # for a run of such passes, not one each; see ``op_census``). Empty: always run.
    acts_on: ClassVar[frozenset[str]] = frozenset()
    # True: the pass creates and erases no op (it changes attributes or types in
    # place), so the list of the module's ops (``module_ops``) is still the
    # module's after it, for the next Python pass. A pass that sometimes does
    # calls ``forget_module_ops`` when it has.
    keeps_ops: ClassVar[bool] = False

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    @classmethod
    def from_options(cls, options: dict[str, str]) -> ModulePass:
        """Build the pass from ``{opt=value}`` text options."""
        fields = {name.replace("_", "-"): name for name in record.fields(cls)}
        kwargs = {}
        for key, text in options.items():
            if key not in fields:
                known = ", ".join(sorted(fields)) or "none"
                raise ValueError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            name = fields[key]
            kwargs[name] = _convert(text, record.annotation(cls, name), f"{cls.name}{{{key}}}")
        return cls(**kwargs)

    def options_text(self) -> str:
        pairs = [f"{name.replace('_', '-')}={_render(getattr(self, name))}"
                 for name in record.fields(type(self))]
        return "{" + " ".join(pairs) + "}" if pairs else ""

    def add_to(self, pm, after_python_pass: bool = False) -> None:
        """Append this pass to an MLIR PassManager. ``after_python_pass``: the
        pass added just before it is a Python pass, so the module it sees was
        changed, if at all, by a Python pass (which forgets the op census)."""
        callback = self._callback if after_python_pass else self._callback_fresh
        pm.add(callback, name=self.name, argument=self.name, description=self.summary())

    def _callback_fresh(self, op: ir.Operation, pass_) -> None:
        forget_module_ops()                  # an upstream pass (or none) ran before: count anew
        self._callback(op, pass_)

    def _callback(self, op: ir.Operation, pass_) -> None:
        if self.acts_on and op_census(op).isdisjoint(self.acts_on):
            return                           # nothing to rewrite: the module is unchanged
        outer, _run.memo = run_memo(), {}
        try:
            self.run(op)
        except PassFailure as failure:
            _last_failure.kind = failure.kind
            if failure.location is not None:
                failure.location.emit_error(failure.message)
            pass_.signal_pass_failure()
        except Exception as exc:  # noqa: BLE001 - a bug must not escape as a traceback
            op.location.emit_error(f"internal error in pass '{self.name}': "
                                   f"{type(exc).__name__}: {exc}; please report it "
                                   "with the input program")
            pass_.signal_pass_failure()
        finally:
            _run.memo = outer
            if not self.keeps_ops:           # it may have added or removed any op
                forget_module_ops()


def op_census(module: ir.Operation) -> frozenset[str]:
    """The names of the ops in ``module``, walked once for every pass of a run
    of Python passes that skip or keep the module's ops (``keeps_ops``). The
    walk is ``module_ops``' too: the pass that acts after a census reads the
    same list, not a walk of its own (a walk of ViT's module is 1-3 ms, and a
    compile made ~35 censuses and ~40 more walks)."""
    names = getattr(_census, "names", None)
    if names is None or _census.module != module:
        ops = _walk_once(module)
        names = _census.names = frozenset([op.name for op in ops])
        _census.module = module
    return names


def _refuse_assignment(self, name, value=None):
    """A pass without options is frozen too: ``ModulePass``'s own frozen
    ``__setattr__`` guards only its fields and its own instances."""
    from dataclasses import FrozenInstanceError  # here: a compile imports no dataclasses
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_deletion(self, name):
    from dataclasses import FrozenInstanceError
    raise FrozenInstanceError(f"cannot delete field {name!r}")


ModulePass.__setattr__ = _refuse_assignment     # a subclass with options gets its own
ModulePass.__delattr__ = _refuse_deletion


def module_ops(module: ir.Operation) -> list[ir.Operation]:
    """Every op nested in ``module`` (pre-order), walked once for a run of
    Python passes of which all but the last keep them (``keeps_ops``): the
    LLVM dialect's fix-ups each walked the whole module, a tenth of a second
    on a big model. Outside a pass manager's run (a pass's ``run`` called
    directly) nothing is kept."""
    if run_memo() is None:
        return nested_ops(module)
    return _walk_once(module)


def _walk_once(module: ir.Operation) -> list[ir.Operation]:
    """``module``'s ops, walked anew only when a pass may have added or removed
    one since the last walk (``forget_module_ops``)."""
    ops = getattr(_walked, "ops", None)
    if ops is None or _walked.module != module:
        ops = _walked.ops = nested_ops(module)
        _walked.module = module
    return ops


def memoized_by_type(test):
    """``test`` of a type, asked once per distinct type of this run (not
    across runs: a type is its context's). Asking each value's type anew was
    xla-bf16-memory-as-i16's time: 36 ms on ViT's f32 LLVM dialect, 16 ms memoized."""
    known: dict = {}

    def cached(type_: ir.Type) -> bool:
        found = known.get(type_)
        if found is None:
            found = known[type_] = test(type_)
        return found
    return cached


def forget_module_ops() -> None:
    """The list ``module_ops`` returned, and the census of op names, are stale:
    ops were created or erased."""
    _walked.ops = _walked.module = None
    _census.names = None


def _convert(text: str, annotation, where: str):
    kind = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    if kind == "bool":
        if text.lower() in ("1", "true"):
            return True
        if text.lower() in ("0", "false"):
            return False
        raise ValueError(f"{where}: expected true or false, got '{text}'")
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{where}: expected an integer, got '{text}'") from None
    if kind.startswith("tuple"):
        return tuple(item.strip() for item in text.split(",") if item.strip())
    return text


def _render(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def functions(module: ir.Operation) -> list[ir.Operation]:
    """The ``func.func`` ops directly inside a module."""
    return [op.operation for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func"]


def public_definitions(module: ir.Operation) -> list[ir.Operation]:
    """The public ``func.func`` ops of a module that have a body (the entry)."""
    return [func for func in functions(module) if func.regions[0].blocks
            and ("sym_visibility" not in func.attributes
                 or ir.StringAttr(func.attributes["sym_visibility"]).value == "public")]


def symbol_name(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def ancestor_in_block(owner, block: ir.Block) -> ir.Operation | None:
    """The op of ``block`` that is or holds ``owner`` (a value's owner or a
    use's), or None if ``owner`` is a block argument or lies outside ``block``."""
    if isinstance(owner, ir.Block):
        return None
    op = owner.operation
    while op is not None:
        if op.block == block:
            return op
        parent = op.parent
        op = parent.operation if parent is not None else None
    return None


def is_within(op: ir.Operation, ancestor: ir.Operation) -> bool:
    """Whether ``op`` is ``ancestor`` or lies in one of its regions, at any depth."""
    while op is not None:
        if op == ancestor:
            return True
        op = op.parent
    return False


def nested_ops(op: ir.Operation) -> list[ir.Operation]:
    """Every op nested in ``op`` (pre-order), ``op`` itself excluded."""
    found: list[ir.Operation] = []
    # bound once: the walk calls back per op (a compile's ~100,000), and the
    # attribute look-ups were a third of the callback's time
    append, advance = found.append, ir.WalkResult.ADVANCE

    def visit(inner: ir.Operation):
        append(inner)
        return advance

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[1:]


def dim_position(expr: ir.AffineExpr) -> int | None:
    """``N`` of a plain ``dN`` map result, else None (``d0 * 2 + d1``, ``0``).

    Why not the printed form matched: an affine map's results come as their
    kind's class, and printing each (the plans read every linalg op's maps,
    some several times) cost ~40x the class test."""
    return expr.position if isinstance(expr, ir.AffineDimExpr) else None


def text_of(thing) -> str:
    """``str(thing)`` of a type or an attribute, printed once per distinct one
    in a pass's run (types and attributes are uniqued in their context, so
    equal ones are one key). Why: printing costs ~30x a dict look-up, and the
    plans and checks print each op's types and iterator kinds again and again
    (ViT: ~6,500 such prints in a compile's xla-check-support,
    xla-normalize-contractions, plans and xla-peel-roll-columns)."""
    memo = run_memo()
    if memo is None:
        return str(thing)
    texts = memo.get(_TEXTS)
    if texts is None:
        texts = memo[_TEXTS] = {}
    found = texts.get(thing)
    if found is None:
        found = texts[thing] = str(thing)
    return found


_TEXTS = "base.text_of"


def is_zero(expr: ir.AffineExpr) -> bool:
    """Whether ``expr`` is the constant ``0`` (a broadcast's or a unit dim's result)."""
    return isinstance(expr, ir.AffineConstantExpr) and expr.value == 0


def post_order_positions(module: ir.Operation, index_of: dict[ir.Operation, int]) -> list[int]:
    """Where each op of ``index_of`` (op -> its index) comes in a post-order
    walk of ``module``: the order ``transform.structured.match`` returns them
    (-1: not in ``module``)."""
    walked: list[int] = []
    if index_of:
        module.walk(lambda op: (walked.append(index_of[op]) if op in index_of else None)
                    or ir.WalkResult.ADVANCE, ir.WalkOrder.POST_ORDER)
    position = [-1] * len(index_of)
    for place, index in enumerate(walked):
        position[index] = place
    return position
