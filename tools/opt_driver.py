"""The work behind xla-opt: parse, run a pipeline, print or verify."""

from __future__ import annotations

import gc
import sys

from xlac.context import new_context
from xlac.errors import CompileError, Diagnostic, as_compile_errors, collect_diagnostics, record_of
from xlac.frontend.isolation import parse_untrusted
from xlac.mlir import ir
from xlac.passes.remarks import collected_remarks
from xlac.pipeline.pass_manager import build_pass_manager
from xlac.targets import get_target
from xlac.tools.split_input import OUTPUT_SEPARATOR, split_chunks
from xlac.tools.verify_diagnostics import verify


class OptDriver:
    def __init__(self, args, options):
        self.args = args
        self.options = options
        self.disabled = frozenset(options.disable_passes)
        self.target = get_target(args.target)
        self.code_stage = bool(args.xla_stage) and bool(self.target.stage(args.xla_stage).code)

    def run(self, data: bytes, name: str) -> int:
        chunks = self._chunks(data)
        outputs, status = [], 0
        for chunk in chunks:
            text, failed = self._one_chunk(chunk, name)
            status |= failed
            if text is not None:
                outputs.append(text)
        self._write(outputs)
        return status

    def _chunks(self, data: bytes) -> list[bytes]:
        if not self.args.split_input_file:
            return [data]
        return [c.encode() for c in split_chunks(data.decode(errors="replace"))]

    def _pipeline(self) -> list[str] | str:
        if self.args.xla_stage:
            return self.target.steps_until(self.args.xla_stage, self.args.entry, self.options)
        return self.args.pass_pipeline

    def _one_chunk(self, chunk: bytes, name: str) -> tuple[object, int]:
        ctx = new_context()
        with ctx, collect_diagnostics(ctx) as diags:
            produced = []
            try:
                with as_compile_errors(name):
                    module = parse_untrusted(ctx, chunk, name, self.options)
                    # the Python passes' remarks as records, in the handler's
                    # order, without MLIR's op dump (quadratic, and dropped)
                    with collected_remarks(diags.records):
                        self._run_pipeline(module)
                    result = self._render(module)
            except (ir.MLIRError, CompileError) as exc:
                produced = _diagnostics_of_failure(exc, diags)
                if self.disabled:
                    produced.append(Diagnostic("", "note", "passes are disabled "
                                               f"({', '.join(sorted(self.disabled))}): "
                                               "a failure may come from that"))
                result = None
            produced = _merge(diags.records, produced)
        if self.args.verify_diagnostics:
            problems = verify(chunk.decode(errors="replace"), produced, name)
            for line in problems:
                print(line, file=sys.stderr)
            return result, int(bool(problems))
        for record in _without_remark_op_dumps(produced):
            print(record, file=sys.stderr)
        return result, int(result is None or any(d.severity == "error" for d in produced))

    def _run_pipeline(self, module) -> None:
        pipeline = self._pipeline()
        if not pipeline:
            return
        overrides = {"xla-fuse": {"remarks": "true"}} if self.options.fusion_remarks else {}
        pm = build_pass_manager(module.context, pipeline, self.disabled, overrides)
        self._instrument(pm)
        try:
            pm.run(module.operation)
        finally:
            del pm          # timing is reported when the pass manager goes away
            gc.collect()

    def _instrument(self, pm) -> None:
        a = self.args
        if a.mlir_timing:
            pm.enable_timing()
        if a.mlir_pass_statistics:
            pm.enable_statistics()
        if (a.mlir_print_ir_after_all or a.mlir_print_ir_before_all or a.mlir_print_ir_after_change
                or a.mlir_print_ir_after_failure or a.mlir_print_ir_tree_dir):
            pm.enable_ir_printing(
                print_before_all=a.mlir_print_ir_before_all,
                print_after_all=a.mlir_print_ir_after_all or bool(a.mlir_print_ir_tree_dir),
                print_after_change=a.mlir_print_ir_after_change,
                print_after_failure=a.mlir_print_ir_after_failure,
                large_elements_limit=a.mlir_elide_elementsattrs_if_larger,
                enable_debug_info=a.mlir_print_debuginfo,
                tree_printing_dir_path=a.mlir_print_ir_tree_dir)

    def _render(self, module):
        if self.code_stage:                    # PTX, not IR: the target's code for the module
            return self.target.code_text(self.args.xla_stage, module)
        if self.args.emit_bytecode:
            import io
            buffer = io.BytesIO()
            module.operation.write_bytecode(buffer)
            return buffer.getvalue()
        return module.operation.get_asm(
            enable_debug_info=self.args.mlir_print_debuginfo,
            large_elements_limit=self.args.mlir_elide_elementsattrs_if_larger)

    def _write(self, outputs: list) -> None:
        if outputs and isinstance(outputs[0], bytes):
            data = b"".join(outputs)
        else:
            data = OUTPUT_SEPARATOR.join(o if o.endswith("\n") else o + "\n"
                                         for o in outputs).encode()
        if self.args.output == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        else:
            with open(self.args.output, "wb") as handle:
                handle.write(data)


def _without_remark_op_dumps(records: list) -> list:
    """Drop the "see current operation" note MLIR attaches to each remark:
    with one remark per rejected fusion, the op dumps drown the reasons."""
    kept, previous = [], None
    for record in records:
        if not (record.severity == "note" and previous == "remark"
                and record.message.startswith("see current operation")):
            kept.append(record)
        previous = record.severity
    return kept


def _diagnostics_of_failure(exc, diags) -> list:
    if isinstance(exc, ir.MLIRError):
        return [record_of(d) for d in exc.error_diagnostics]
    return list(exc.records) + ([Diagnostic("", "note", exc.hint)] if exc.hint else [])


def _merge(first: list, second: list) -> list:
    """``first``, then what ``second`` adds; notes as records of their own (as they print)."""
    first = [item for record in first for item in _flatten(record)]
    seen = {str(d) for d in first}
    return first + [d for record in second for d in _flatten(record) if str(d) not in seen]


def _flatten(record: Diagnostic) -> list[Diagnostic]:
    return [Diagnostic(record.location, record.severity, record.message), *record.notes]
