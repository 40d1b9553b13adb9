#!/usr/bin/env python
"""Real models: xlac against the xlac of another source tree and XLA, in one interleaved run.

    python bench/models_ab.py --before-tree ../before --only flax_cnn_train_step,hf_bert
    python bench/models_ab.py --before-tree ../before --only hf_bert --cpu x86-64-v3 --budget-s 60

run.py --models has no 'before' column; this times the models as sweep.py times its
cases (the same workers, round-robin batches; ``--before-tree`` as sweep.py takes it:
python/xlac/passes and python/xlac/dialects linked to the tree's passes/ and dialects/)
and prints each backend's minimum, median and 90th percentile, with the load. On a
shared machine the minimum is the call that had both cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _row(case, result) -> dict:
    row = {"model": case.name}
    for name, backend in result.backends.items():
        if backend.times:
            t = sorted(backend.times)
            row[name] = (t[0] * 1e3, statistics.median(t) * 1e3, t[int(len(t) * 0.9)] * 1e3, len(t))
        if backend.error:
            row[f"{name} error"] = backend.error[:200]
    row["load"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return row


def main(argv=None) -> int:
    import models
    import sweep
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", required=True, help="comma-separated model names")
    parser.add_argument("--models-dir", type=Path, default=models.EXPORTS)
    known, rest = parser.parse_known_args(argv)
    if not any(a.startswith("--budget-s") for a in rest):
        rest += ["--budget-s", "60"]           # per model (sweep.py's 1.5 s is per op)
    args = sweep.parse_args(rest)              # --before-tree, --cpu, --budget-s, --threads
    from run import limit_threads, quiet_blas_threads, target_level
    if args.cpu:
        from cpu_mask import reexec_masked
        reexec_masked(args.cpu)
    quiet_blas_threads()
    if args.threads:
        limit_threads(args.threads)
    if args.cpu:
        target_level(args.cpu)
    args.min_reps, args.max_reps = 10, 400
    names = known.only.split(",")
    programs = [p for p in models.model_programs(known.models_dir)[0] if p.name in names]
    pairs = [(SimpleNamespace(name=p.name, numpy_fn=None, op_class=p.name, element="", layout=""), p)
             for p in programs]
    sweep._row = _row                          # every time, not sweep's ratios
    print(f"cpu level: {args.cpu or 'host'}; ms as min / median / p90 (calls)")
    for row in sweep.measure(pairs, args):
        cells = [f"{k} {v[0]:.2f} / {v[1]:.2f} / {v[2]:.2f} ({v[3]})" if isinstance(v, tuple) else f"{k}: {v}"
                 for k, v in row.items() if k != "model"]
        print(f"{row['model']}: " + "; ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
