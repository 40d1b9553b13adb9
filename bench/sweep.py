#!/usr/bin/env python
"""Sweep op class x element type x layout: xlac against XLA (jax CPU) and numpy.

    python bench/sweep.py                        # every case, one interleaved run (~15 min)
    python bench/sweep.py --quick                # f32, bf16, i8, i1; a few calls each
    python bench/sweep.py --classes reduce,sort --types f32,i8 --json sweep.json
    python bench/sweep.py --cpu x86-64-v2        # both compilers at that level (run.py's --cpu)
    python bench/sweep.py --before XLAC_DISABLE_PASSES=xla-i1-memory-as-i8   # a fix, before/after

Not a test: it finds slow paths. Each case (bench/sweep_cases.py) is one op on
operands of about 1-4 MB; both compilers get the text ``jax.jit(f).lower``
writes, and the backends take turns (bench/timing.py: round-robin batches,
medians). Every case slower than FLAG times XLA is flagged below the table,
with any that disagrees with XLA's result. ``--before VAR=VALUE`` adds a
second xlac worker with those variables set (a fix switched off: a disabled
pass), timed in the same rounds, so a fix's before and after share the
machine's noise. The structural guard is
test/python/cpu/test_vector_schedules.py; this says what a slow path costs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
FLAG = 1.5                   # xlac / XLA above this: a flagged case


def parse_args(argv=None) -> argparse.Namespace:
    from run import XLA_MAX_ISA
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="f32, bf16, i8, i1; 1-3 timed calls")
    parser.add_argument("--types", help="comma-separated: f32,f64,f16,bf16,i8,i32,i64,ui8,i1,c64,c128")
    parser.add_argument("--classes", help="comma-separated op classes (default: all)")
    parser.add_argument("--cpu", choices=sorted(XLA_MAX_ISA), help="the CPU level both compile for")
    parser.add_argument("--threads", type=int, help="pin the run to N CPUs")
    parser.add_argument("--budget-s", type=float, default=1.5, help="timed seconds per case")
    parser.add_argument("--before", action="append", default=[], metavar="VAR=VALUE",
                        help="also time xlac with this environment (repeatable): the 'before' column")
    parser.add_argument("--before-tree", type=Path, metavar="DIR",
                        help="also time the xlac of another source tree (git archive of a commit, "
                             "its python/xlac/passes and dialects linked to its passes/ and "
                             "dialects/): the 'before' column")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--out", type=Path, help="also write the table as Markdown here")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "xlac-sweep")
    args = parser.parse_args(argv)
    if args.before_tree and not (args.before_tree / "python" / "xlac" / "passes").is_dir():
        # a plain `git worktree` has no such link: its xlac would import this
        # tree's passes (the editable install's), and 'before' time the new code
        parser.error(f"--before-tree {args.before_tree}: no python/xlac/passes there; link it to "
                     "../../passes (and python/xlac/dialects to ../../dialects)")
    # what harness.bench_program reads
    args.min_reps, args.max_reps, args.warmup, args.pause_ms = 3, 100, 1, 5.0
    args.max_call_s, args.kill_after_s, args.seed, args.profile = 20.0, 300.0, 0, False
    if args.quick:
        args.min_reps, args.max_reps, args.warmup, args.budget_s = 1, 3, 0, 0.2
    return args


def export(cases, folder: Path) -> list:
    """Each case's StableHLO text and inputs into ``folder``; (case, program) pairs."""
    import jax
    from programs import extra_program
    folder.mkdir(parents=True, exist_ok=True)
    found = []
    for index, case in enumerate(cases):
        path = folder / f"{case.name}.mlir"
        try:
            with jax.enable_x64(True):           # i64, f64 stay themselves
                path.write_text(jax.jit(case.jax_fn).lower(*case.inputs).as_text())
        except Exception as exc:  # noqa: BLE001 - jax cannot express the pair: said, skipped
            print(f"skip {case.name}: jax: {type(exc).__name__}: {str(exc)[:120]}", file=sys.stderr)
            continue
        np.savez(folder / f"{case.name}.inputs.npz",
                 **{f"arg{i:03d}": _savable(x) for i, x in enumerate(case.inputs)})
        found.append((case, extra_program(path, seed_index=index)))
    return found


def _savable(array: np.ndarray) -> np.ndarray:
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def measure(pairs, args) -> list[dict]:
    from backends import BackendError, NumpyBackend, XlaBackend, XlacBackend
    from harness import bench_program

    class CaseNumpy(NumpyBackend):
        """The case's own numpy function (none for a convolution)."""

        def supports(self, program) -> bool:
            return numpy_fns.get(program.name) is not None

        def load(self, program, inputs) -> None:
            self._fn, self._args = numpy_fns[program.name], inputs

    class XlacWith(XlacBackend):
        """xlac whose worker starts with ``env`` set (it inherits the environment)
        and, with a ``tree``, imports xlac from there: a spawned worker takes this
        process's sys.path, and the path comes before the editable install's finder."""

        name = "xlac-before"

        def __init__(self, env: dict[str, str], tree: Path | None, *rest):
            super().__init__(*rest)
            self._env, self._tree = env, tree

        def _start(self):
            saved, path = {k: os.environ.get(k) for k in self._env}, list(sys.path)
            os.environ.update(self._env)
            if self._tree is not None:
                sys.path.insert(0, str(self._tree / "python"))
            try:
                super()._start()
            finally:
                sys.path[:] = path
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value

    numpy_fns = {program.name: case.numpy_fn for case, program in pairs}
    backends, errors = {}, {}
    makers = [("xlac", lambda: XlacBackend(args.seed, args.kill_after_s))]
    if args.before or args.before_tree:
        env = dict(item.split("=", 1) for item in args.before)
        tree = args.before_tree.resolve() if args.before_tree else None
        makers.append(("xlac-before", lambda: XlacWith(env, tree, args.seed, args.kill_after_s)))
    for name, make in (*makers, ("XLA", XlaBackend), ("numpy", CaseNumpy)):
        try:
            backends[name] = make()
        except BackendError as exc:
            errors[name] = str(exc)
    rows = []
    try:
        for index, (case, program) in enumerate(pairs):
            print(f"[{index + 1}/{len(pairs)}] {case.name}", file=sys.stderr, flush=True)
            result = bench_program(program, backends, errors, args, args.budget_s,
                                   names=tuple(backends) + tuple(errors))
            rows.append(_row(case, result))
    finally:
        for backend in backends.values():
            backend.close()
    return rows


def _row(case, result) -> dict:
    xlac, xla = result.median("xlac"), result.median("XLA")
    entry = result.backends.get("xlac")
    ratio = xlac / xla if xlac and xla else None
    wrong = entry is not None and entry.check is not None and not result.agrees("xlac")
    errors = {name: b.error[:160] for name, b in result.backends.items() if b.error}
    if entry is None or (entry.error and not entry.times):
        errors.setdefault("xlac", "no times")
    before = result.median("xlac-before")
    return {"class": case.op_class, "type": case.element, "layout": case.layout,
            "xlac_ms": xlac, "xla_ms": xla, "numpy_ms": result.median("numpy"), "ratio": ratio,
            "before_ms": before, "before_ratio": before / xla if before and xla else None,
            "flagged": bool(ratio and ratio > FLAG) or wrong or "xlac" in errors,
            "mismatch": wrong, "errors": errors}


HEADER = ("class", "type", "layout", "xlac ms", "XLA ms", "numpy ms", "xlac/XLA", "")
BEFORE = ("before ms", "before/XLA")


def header(rows: list[dict]) -> tuple[str, ...]:
    return HEADER[:-1] + (BEFORE if _has_before(rows) else ()) + HEADER[-1:]


def _has_before(rows: list[dict]) -> bool:
    return any(r["before_ms"] is not None for r in rows)


def table(rows: list[dict]) -> list[tuple[str, ...]]:
    def ms(value):
        return "-" if value is None else f"{value:.3f}"

    def ratio(value):
        return "-" if value is None else f"{value:.2f}"
    body = []
    for r in rows:
        note = ("MISMATCH" if r["mismatch"] else "error" if "xlac" in r["errors"]
                else f">{FLAG:g}x" if r["flagged"] else "")
        before = (ms(r["before_ms"]), ratio(r["before_ratio"])) if _has_before(rows) else ()
        body.append((r["class"], r["type"], r["layout"], ms(r["xlac_ms"]), ms(r["xla_ms"]),
                     ms(r["numpy_ms"]), ratio(r["ratio"]), *before, note))
    return body


def summary(rows: list[dict]) -> list[str]:
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    flagged = [r for r in rows if r["flagged"]]
    lines = [f"{len(rows)} cases; geometric mean xlac/XLA "
             f"{float(np.exp(np.mean(np.log(ratios)))):.2f}, median {statistics.median(ratios):.2f}"
             if ratios else f"{len(rows)} cases; no ratios",
             f"flagged (> {FLAG:g}x XLA, wrong, or failed): {len(flagged)}"]
    for r in sorted(flagged, key=lambda r: -(r["ratio"] or float("inf"))):
        why = ("; ".join(f"{k}: {v}" for k, v in r["errors"].items()) or
               ("result differs from XLA's" if r["mismatch"] else ""))
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
        lines.append(f"  {r['class']} {r['type']} {r['layout']}: {ratio} {why}".rstrip())
    return lines


def main(argv=None) -> int:
    args = parse_args(argv)
    from run import limit_threads, quiet_blas_threads, target_level
    if args.cpu:
        from cpu_mask import reexec_masked
        reexec_masked(args.cpu)          # returns only where it cannot mask
    quiet_blas_threads()
    if args.threads:
        limit_threads(args.threads)
    if args.cpu:
        target_level(args.cpu)
    from report import aligned, machine
    from sweep_cases import QUICK_TYPES, TYPES, cases
    types = args.types.split(",") if args.types else (QUICK_TYPES if args.quick else TYPES)
    classes = args.classes.split(",") if args.classes else None
    pairs = export(cases(types, classes), args.folder)
    rows = measure(pairs, args)
    body = table(rows)
    level = args.cpu or "host"
    print(f"\nmachine: {machine()}; cpu level: {level}; {args.budget_s:g} s timed per case\n")
    print(aligned(header(rows), body, summary(rows)))
    if args.json:
        args.json.write_text(json.dumps({"cpu": level, "machine": machine(), "rows": rows}, indent=1))
    if args.out:
        lines = ["| " + " | ".join(header(rows)) + " |", "|" + "---|" * len(header(rows))]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        args.out.write_text("\n".join(lines + [""] + summary(rows)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
