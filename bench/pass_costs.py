"""What each pass of the pipeline costs on real programs, and whether it changed them.

    python bench/pass_costs.py                         # every program: per-pass table
    python bench/pass_costs.py --fingerprints out.json # also each program's final IR hash
    python bench/pass_costs.py --compare before.json after.json

Programs: the ten of ../shared/bench/suite, the six of ../shared/models and those that
bench/export_models.py wrote (bench/models/). Each is parsed and run through a target's
pass stages one pass at a time (as the runner does when it traces), each pass timed alone
and the module fingerprinted (SHA-256 of its text, no locations) before and after it: a
pass whose fingerprint never moved did nothing on any of them. ``--repeat N`` runs the
pipeline N times per program and keeps each pass's fastest time.

The fingerprint of the last pass stage (``llvm`` on cpu: what ``exe.as_text("llvm")``
prints; ``gpu`` on cuda) is the check that a pipeline change keeps the code identical:
``--fingerprints`` writes them, ``--compare`` lists the programs whose code differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def programs(only: list[str] | None = None) -> list[Path]:
    """The suite's StableHLO programs, the shared models, the exported models."""
    found = sorted((SHARED / "bench" / "suite").glob("*.stablehlo.mlir"))
    found += sorted((SHARED / "models").glob("*.mlir"))
    found += sorted((HERE / "models").glob("*.mlir"))
    return [p for p in found if only is None or _name(p) in only]


def _name(path: Path) -> str:
    return path.name.removesuffix(".mlir").removesuffix(".stablehlo")


def fingerprint(module) -> str:
    return hashlib.sha256(str(module).encode()).hexdigest()[:16]


def pass_run(path: Path, target_name: str, per_pass: bool, lender=None) -> dict:
    """One program through ``target_name``'s pass stages: per step (stage, step,
    seconds, changed) when ``per_pass``; the final fingerprint always.
    ``lender``: idle piece workers xla-apply-schedules may borrow (``lend_workers``)."""
    from xlac.context import new_context
    from xlac.frontend.parse import parse_module
    from xlac.options import Options
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets import get_target

    target, options = get_target(target_name), Options.from_env()
    module = parse_module(new_context(), path.read_bytes(), path.name)
    steps, before = [], fingerprint(module) if per_pass else ""
    start = time.perf_counter()
    for stage in target.pass_stages():
        stage_steps = stage.steps("main", options)
        if not per_pass:                    # as the compiler's runner: function passes threaded
            run_passes(module, stage_steps, threads=True, lender=lender)
            continue
        for step in stage_steps:
            began = time.perf_counter()
            run_passes(module, [step], verify_each=False, verify_after=False, lender=lender)
            seconds = time.perf_counter() - began
            after = fingerprint(module)
            steps.append([stage.name, step, seconds, after != before])
            before = after
    return {"program": _name(path), "target": target_name, "steps": steps,
            "seconds": time.perf_counter() - start, "final": fingerprint(module)}


def fastest(runs: list[dict]) -> dict:
    """The runs of one program folded: each step's fastest time, changed if any run changed it."""
    best = runs[0]
    for run in runs[1:]:
        for mine, other in zip(best["steps"], run["steps"]):
            mine[2] = min(mine[2], other[2])
            mine[3] = mine[3] or other[3]
    return best


def pass_table(results: list[dict]) -> str:
    """Per pipeline position: seconds summed over the programs, how many it changed."""
    rows: dict[tuple[int, str, str], list[float]] = {}
    for result in results:
        for index, (stage, step, seconds, changed) in enumerate(result["steps"]):
            row = rows.setdefault((index, stage, step), [0.0, 0])
            row[0] += seconds
            row[1] += int(changed)
    total = sum(row[0] for row in rows.values()) or 1e-9
    lines = [f"| # | stage | pass | seconds (sum of {len(results)}) | share | programs changed |",
             "|---|---|---|---|---|---|"]
    for (index, stage, step), (seconds, changed) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| {index} | {stage} | `{step}` | {seconds:.3f} | {100 * seconds / total:.1f}% "
                     f"| {changed} |")
    return "\n".join(lines)


def by_name(results: list[dict]) -> str:
    """Per pass name (every position summed): where the front's time goes."""
    totals: dict[str, list[float]] = {}
    for result in results:
        for _, step, seconds, changed in result["steps"]:
            row = totals.setdefault(step.split("{")[0], [0.0, 0, 0])
            row[0] += seconds
            row[1] += 1
            row[2] += int(changed)
    lines = ["| pass | seconds | runs | runs that changed the IR |", "|---|---|---|---|"]
    for name, (seconds, runs, changed) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| `{name}` | {seconds:.3f} | {runs} | {changed} |")
    return "\n".join(lines)


def compare(before_path: str, after_path: str) -> int:
    before = json.loads(Path(before_path).read_text())
    after = json.loads(Path(after_path).read_text())
    differ = [key for key in before if after.get(key) != before[key]]
    missing = [key for key in after if key not in before]
    for key in differ:
        print(f"differs: {key}: {before[key]} -> {after.get(key)}")
    for key in missing:
        print(f"new: {key}")
    print(f"{len(before) - len(differ)} of {len(before)} identical")
    return 1 if differ else 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    results, finals = [], {}
    lender = lend_workers(args.workers) if args.workers else None
    chosen = programs(args.programs.split(",") if args.programs else None)
    for target_name in args.target:       # imports and first-use set-up stay out of the times
        pass_run(chosen[0], target_name, per_pass=False, lender=lender)
    for path in chosen:
        for target_name in args.target:
            try:
                runs = [pass_run(path, target_name, not args.no_per_pass, lender)
                        for _ in range(args.repeat)]
            except Exception as exc:  # noqa: BLE001 - one program's failure is a line, not the end
                print(f"{_name(path)} ({target_name}): failed: {str(exc).splitlines()[0][:200]}",
                      flush=True)
                finals[f"{_name(path)}/{target_name}"] = "failed"
                continue
            result = fastest(runs)
            finals[f"{result['program']}/{target_name}"] = result["final"]
            print(f"{result['program']} ({target_name}): {result['seconds']:.2f} s, "
                  f"final {result['final']}", flush=True)
            if target_name == args.target[0] and not args.no_per_pass:
                results.append(result)
    if args.fingerprints:
        Path(args.fingerprints).write_text(json.dumps(finals, indent=1) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(results) + "\n")
    if results:
        print("\nPer pass name:\n\n" + by_name(results))
        print("\nPer pipeline position:\n\n" + pass_table(results))
    return 0


def lend_workers(count: int):
    """Piece workers started, and the lender that lends them to xla-apply-schedules
    (``pass_run``'s), as a big program's compile does: its kernels are scheduled in
    two halves, one in a worker (``schedule_halves``), so the fingerprints check
    that path's code."""
    from xlac.targets.cpu import pieces
    from xlac.targets.cpu.schedule_worker import lend
    pieces.start_workers(count)
    return lend


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", help="comma-separated program names (default: all)")
    parser.add_argument("--target", action="append",
                        help="targets whose pass stages run (repeatable; default cpu); the "
                             "per-pass table is the first one's")
    parser.add_argument("--repeat", type=int, default=1, help="runs per program; fastest kept")
    parser.add_argument("--no-per-pass", action="store_true",
                        help="each stage as one pass manager: fingerprints only, faster")
    parser.add_argument("--fingerprints", help="write each program's final fingerprint here (JSON)")
    parser.add_argument("--json", help="write the per-pass results here")
    parser.add_argument("--workers", type=int, default=0,
                        help="piece workers lent to xla-apply-schedules (0: none, it runs whole)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                        help="compare two --fingerprints files")
    args = parser.parse_args(argv)
    args.target = args.target or ["cpu"]
    return args


if __name__ == "__main__":
    sys.exit(main())
