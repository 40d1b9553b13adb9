"""Building an MLIR PassManager from pipeline text that mixes xlac's Python
passes, xlac's named pipelines and upstream passes, and running it with
diagnostics turned into ``CompileError``.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager

import xlac.passes.registry as registry
from xlac.errors import CompileError, Diagnostic, collect_diagnostics, compile_error_from, error
from xlac.mlir import ir, passmanager
from xlac.passes.base import forget_module_ops, take_failure_kind
from xlac.passes.deferred import deferred
from xlac.passes.remarks import collected_remarks
from xlac.pipeline.pipelines import NAMED_PIPELINES, named_pipeline
from xlac.pipeline.schedule_halves import Lender, lent_workers
from xlac.pipeline.text import Element, PipelineSyntaxError, parse_options, parse_pipeline


def build_pass_manager(ctx: ir.Context, pipeline: str | list[str],
                       disabled: frozenset[str] = frozenset(),
                       overrides: dict[str, dict[str, str]] | None = None
                       ) -> passmanager.PassManager:
    """A module-level PassManager for ``pipeline`` (text or a list of steps).

    ``overrides``: options forced on xlac passes wherever they appear, named
    pipelines included (``{"xla-fuse": {"remarks": "true"}}``).
    """
    text = pipeline if isinstance(pipeline, str) else ",".join(pipeline)
    with ctx:
        pm = passmanager.PassManager("builtin.module")
        _add_elements(pm, parse_pipeline(text), disabled, overrides or {}, [False])
    return pm


def _add_elements(pm, elements, disabled: frozenset[str], overrides: dict,
                  last_python: list[bool]) -> None:
    """``last_python[0]``: the pass added last is a Python pass (whose neighbour
    may share its op census: ``ModulePass.add_to``)."""
    for element in elements:
        if element.name in disabled:
            continue
        if element.children is not None:
            _check_no_python_pass(element)
            _add_upstream(pm, element.text())
            last_python[0] = False
        elif element.name in NAMED_PIPELINES:
            steps = named_steps(element, disabled)
            _add_elements(pm, parse_pipeline(",".join(steps)), disabled, overrides, last_python)
        elif registry.is_pass(element.name):
            options = parse_options(element.options) | overrides.get(element.name, {})
            configured = deferred(element.name, options)
            if configured is None:
                try:
                    configured = registry.get_pass_class(element.name).from_options(options)
                except ValueError as exc:
                    raise PipelineSyntaxError(f"pass pipeline: error: {exc}") from None
            configured.add_to(pm, after_python_pass=last_python[0])
            last_python[0] = True
        else:
            _add_upstream(pm, element.text())
            last_python[0] = False


def named_steps(element: Element, disabled: frozenset[str] = frozenset()) -> list[str]:
    """The steps of named pipeline ``element`` (``xla-cpu-pipeline{cpu=x86-64-v3}``)
    from its options; a whole target's, which derives steps from the Options
    (``disable_passes``: the passes ``disabled``, unless its options say), as
    a compile with ``disabled`` would."""
    builder = named_pipeline(element.name)
    options = _builder_options(builder, element)
    if disabled and "disable_passes" in inspect.signature(builder).parameters:
        options.setdefault("disable_passes", tuple(sorted(disabled)))
    try:
        return builder(**options)
    except ValueError as exc:                     # e.g. cpu=x86-64-v9
        raise PipelineSyntaxError(f"pass pipeline: error: {element.name}: {exc}") from None


def _builder_options(builder, element: Element) -> dict[str, str]:
    options = {key.replace("-", "_"): value for key, value in parse_options(element.options).items()}
    accepted = inspect.signature(builder).parameters
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise PipelineSyntaxError(f"pass pipeline: error: pipeline '{element.name}' has no option '{unknown[0]}'")
    return options


def _check_no_python_pass(anchor: Element) -> None:
    for child in anchor.children or []:
        if registry.is_pass(child.name) or child.name in NAMED_PIPELINES:
            raise PipelineSyntaxError(
                f"pass pipeline: error: '{child.name}' is an xlac pass and runs on the whole module; "
                f"move it out of '{anchor.name}(...)' to the top level")
        _check_no_python_pass(child)


def _add_upstream(pm, text: str) -> None:
    try:
        pm.add(text)
    except ValueError as exc:
        message = str(exc).strip().splitlines()
        detail = next((line.split("error: ", 1)[1] for line in message if "error: " in line),
                      message[0] if message else "invalid pipeline element")
        raise PipelineSyntaxError(f"pass pipeline: error: {detail} (in '{text}'); "
                                  "see xla-opt --list-passes") from None


def run_passes(module: ir.Module, pipeline: str | list[str], hint: str = "",
               disabled: frozenset[str] = frozenset(), verify_each: bool = True,
               verify_after: bool = True, built: passmanager.PassManager | None = None,
               threads: bool = False, lender: Lender | None = None) -> list[Diagnostic]:
    """Run ``pipeline`` on ``module``; any failure becomes a CompileError (an
    ``UnsupportedOpError`` where the failing pass says so). Returns the remarks.

    ``verify_each``: the verifier after every pass (MLIR's default, mlir-opt's
    ``--verify-each``); off, the module is verified once at the end when
    ``verify_after`` (as XLA verifies after each pass pipeline, not each pass).
    ``built``: ``build_pass_manager``'s for ``pipeline`` in this context, made
    before and run again (a piece worker lowers every piece by the same steps).
    ``threads``: function passes (``func.func(...)``) and the verifier on the
    context's thread pool for this run (``function_threads``).
    ``lender``: where xla-apply-schedules may borrow an idle piece worker for
    half of its kernels in this run (``schedule_halves``); None: it runs whole."""
    ctx = module.context
    pm = built if built is not None else build_pass_manager(ctx, pipeline, disabled)
    pm.enable_verifier(verify_each)
    take_failure_kind()
    # the Python passes' remarks as records: MLIR's note on each prints its op,
    # quadratic in thousands of remarks, and nothing shows it
    with ctx, collect_diagnostics(ctx) as diags, collected_remarks(diags.records), \
            function_threads(ctx, threads), lent_workers(lender):
        try:
            pm.run(module.operation)
            if not verify_each and verify_after:
                _verify(module, pipeline)
        except ir.MLIRError as exc:
            kind = take_failure_kind() or CompileError
            raise compile_error_from(exc, diags, hint, kind) from None
        finally:
            forget_module_ops()              # no op of this run outlives it
    if any(record.severity == "error" for record in diags.records):
        raise CompileError(diags.records, hint)
    return [record for record in diags.records if record.severity == "remark"]


@contextmanager
def function_threads(ctx: ir.Context, on: bool = True):
    """MLIR's thread pool on in ``ctx`` for the block, its threads joined after.

    Why: the torch-mlir wheel creates every context single-threaded, so the
    compiling process ran each function pass over the kernels one by one while
    its second core idled (docs/compile-time.md, issue 37). Each function is
    lowered alone, as before, and MLIR merges the threads' diagnostics in the
    functions' order: the same module, only sooner. Joined after (turning the
    threading off destroys the context's own pool) because this process forks
    helpers between stages, which ``fork_is_safe`` allows only while it has
    no other thread; and the piece workers never ask: one per core already."""
    if not on:
        yield
        return
    ctx.enable_multithreading(True)
    try:
        yield
    finally:
        ctx.enable_multithreading(False)


def _verify(module: ir.Module, pipeline: str | list[str]) -> None:
    """The module verified after ``pipeline``; an invalid one is an xlac bug."""
    try:
        valid = module.operation.verify()
    except ir.MLIRError as exc:
        valid, detail = False, str(exc)
    else:
        detail = ""
    if not valid:
        steps = pipeline if isinstance(pipeline, str) else ",".join(pipeline)
        raise CompileError(error(
            f"the IR is invalid after '{steps[:200]}': an xlac bug; set XLAC_VERIFY_EACH=1 "
            f"(or --verify-each) to find the pass, and please report it with the input"
            + (f" ({detail.splitlines()[0]})" if detail.strip() else "")))
