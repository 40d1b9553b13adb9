"""A Python pass taken by a pass manager before its module is imported.

A pass with ops to act on (``ModulePass.acts_on``, listed by name in
``acts_on_table``) and no options is added as a ``DeferredPass``: its
callback asks the op census its Python neighbours share, as the pass's own
would, and imports the pass's module (its class, builders, plans and texts)
only where the module holds one of those ops. Why: a first compile imported
every pass module of the pipeline to build its pass managers (~115 modules and
their helpers, ~35 ms of a tiny program's ~150 ms of CPU), and half of those
passes had nothing to act on (a program without FFTs, sorts, scatters,
collectives, convolutions...). What a pass does when it runs is the same.
"""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes import registry
from xlac.passes.acts_on_table import ACTS_ON, FLAGS
from xlac.passes.base import forget_module_ops, op_census


def deferred(name: str, options: dict[str, str]) -> DeferredPass | None:
    """``name``'s pass as a DeferredPass, or None where it must be imported now
    (it acts on every module, or options other than its FLAGS are given: those
    are checked by its class when the pipeline is built)."""
    acts_on = ACTS_ON.get(name)
    if acts_on is None or not _flags_only(name, options):
        return None
    return DeferredPass(name, acts_on, options)


def _flags_only(name: str, options: dict[str, str]) -> bool:
    """Whether ``options`` are only ``name``'s FLAGS, each true or false (what
    ``from_options`` would accept), so that nothing is left to check later."""
    return all(key in FLAGS.get(name, ()) and value.lower() in ("1", "0", "true", "false")
               for key, value in options.items())


class DeferredPass:
    """The pass registered as ``name``, imported and made (with ``options``,
    its flags) the first time the census of a module it runs on meets ``acts_on``."""

    def __init__(self, name: str, acts_on: frozenset[str], options: dict[str, str] | None = None):
        self.name = name
        self.acts_on = acts_on
        self.options = dict(options or {})
        self._pass = None

    def add_to(self, pm, after_python_pass: bool = False) -> None:
        """As ``ModulePass.add_to``; the description is the name (the docstring
        is in the module not yet imported: a pass manager shows neither)."""
        callback = self._callback if after_python_pass else self._callback_fresh
        pm.add(callback, name=self.name, argument=self.name, description=self.name)

    def _callback_fresh(self, op: ir.Operation, pass_) -> None:
        forget_module_ops()                  # an upstream pass (or none) ran before: count anew
        self._callback(op, pass_)

    def _callback(self, op: ir.Operation, pass_) -> None:
        if op_census(op).isdisjoint(self.acts_on):
            return                           # nothing to rewrite: the module is unchanged
        if self._pass is None:
            try:
                self._pass = registry.get_pass_class(self.name).from_options(self.options)
            except Exception as exc:  # noqa: BLE001 - a bug must not escape as a traceback
                op.location.emit_error(f"internal error in pass '{self.name}': "
                                       f"{type(exc).__name__}: {exc}; please report it "
                                       "with the input program")
                pass_.signal_pass_failure()
                return
        self._pass._callback(op, pass_)
