"""Which kernels of the jax surface cases run without a vector schedule (issue 39's guard).

Each case of bench/jax_surface_cases.py and jax_surface_more.py is grown to its
moderate size as bench/jax_surface_speed.py grows it (the largest argument
about ``--mb`` MB, halved while one XLA call takes more than ``--max-ms``),
compiled with ``xlac.compile(text, cpu=...)``, and every kernel that
``exe.fusion_report()`` lists under "not scheduled" is printed under its case.
Nothing is timed but XLA's calls that pick the size; ``--sizes`` reuses the
factors a previous ``--json`` wrote (the same sizes for another tree or level).

    .venv/bin/python bench/unscheduled_kernels.py [--cpu x86-64-v3] [--only 'argmax|diag'] \\
        [--json out.json] [--sizes earlier.json]

Run it with another venv's Python (whose xlac is another tree) for a before list.
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def unscheduled(report: str) -> list[str]:
    """The lines under "not scheduled:" in a fusion report."""
    if "not scheduled:" not in report:
        return []
    tail = report.split("not scheduled:", 1)[1]
    return [line.strip() for line in tail.splitlines() if line.startswith("  ")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", default="host", help="the level xlac compiles for (host, x86-64-v3, ...)")
    parser.add_argument("--only", default="", help="regex: the case names to compile")
    parser.add_argument("--mb", type=float, default=1.0)
    parser.add_argument("--max-ms", type=float, default=50.0)
    parser.add_argument("--json", default="", help="write {case: {s, kernels}} here")
    parser.add_argument("--sizes", default="", help="take each case's factor from this --json output")
    opts = parser.parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import numpy as np
    from jax_surface import first_line
    from jax_surface_cases import all_cases
    from jax_surface_speed import grown, sized

    import xlac
    sizes = json.loads(Path(opts.sizes).read_text())["rows"] if opts.sizes else {}
    rng = np.random.default_rng(39)
    rows, total = {}, 0
    for name, fn, args in all_cases():
        if not re.search(opts.only, name):
            continue
        try:
            if name in sizes:
                factor = sizes[name]["s"]
                args = grown(args, factor, np.random.default_rng(39))
            else:
                factor, args = sized(fn, args, opts.mb * 2**20, opts.max_ms / 1e3, rng)
            text = jax.jit(fn).lower(*args).as_text()
            exe = xlac.compile(text, cpu=None if opts.cpu == "host" else opts.cpu, cache=False)
            kernels = unscheduled(exe.fusion_report() or "")
        except Exception as exc:                      # noqa: BLE001 - a row, not the end
            rows[name] = {"s": 1, "error": first_line(exc)}
            print(f"{name} (error: {first_line(exc)})", flush=True)
            continue
        rows[name] = {"s": factor, "kernels": kernels}
        total += len(kernels)
        if kernels:
            print(f"{name} (s={factor}): {len(kernels)}", flush=True)
            for line in kernels:
                print(f"    {line}", flush=True)
    cases = sum(bool(r.get("kernels")) for r in rows.values())
    print(f"\ncpu level {opts.cpu}: {total} kernel(s) not scheduled in {cases} of {len(rows)} cases")
    if opts.json:
        Path(opts.json).write_text(json.dumps({"cpu": opts.cpu, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
