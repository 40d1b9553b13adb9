"""Mutation fuzzing of what users hand xlac: does anything crash, hang or escape?

    python -m xlac.tools.fuzz --n 10000              # the long run (docs/security.md)
    python -m xlac.tools.fuzz --n 200 --seed 1 --corpus test/fuzz/corpus

Seeded and reproducible: input ``i`` of seed ``s`` is the same bytes on every
run. Each input (pretty text, generic text, bytecode, VHLO artifact) goes to
``xlac.compile`` in a child process that a crash cannot take down with the
harness, and every ``--cli-every``-th also through one of the CLIs. Each outcome
is one of: ok, error (an xlac error), crash (killed by a signal), hang
(over ``--timeout``), traceback (any other exception, or a CLI's traceback).
``--python``/``--bin`` point the harness at another installation (a
baseline). Inputs that crash, hang or escape are written to ``--corpus``.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
from pathlib import Path

from xlac.tools import fuzz_inputs
from xlac.tools.fuzz_runner import CLIS, OUTCOMES, ApiChild, run_cli

BAD = ("crash", "hang", "traceback")
_SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def make_inputs(seed: int, count: int, shared: Path | None):
    """``count`` inputs ``(form, seed program, mutation, bytes)``, the same for the same seed."""
    programs = fuzz_inputs.seed_programs(shared)
    forms = {name: fuzz_inputs.seed_forms(text) for name, text in programs.items()}
    names = sorted(forms)
    for index in range(count):
        rng = random.Random(f"{seed}:{index}")
        name = names[index % len(names)]
        form = fuzz_inputs.FORMS[(index // len(names)) % len(fuzz_inputs.FORMS)]
        others = [forms[other][form] for other in names]
        data, mutation = fuzz_inputs.mutate(forms[name][form], form, rng, others)
        yield index, form, name, mutation, data


def run(args) -> collections.Counter:
    shared = Path(args.shared) if args.shared else None
    table: collections.Counter = collections.Counter()
    corpus = Path(args.corpus) if args.corpus else None
    workdir = Path(tempfile.mkdtemp(prefix="xlac-fuzz-"))
    child = ApiChild(args.python, args.timeout, isolate=args.isolate)
    try:
        for index, form, name, mutation, data in make_inputs(args.seed, args.n, shared):
            path = workdir / f"input{_suffix(form)}"
            path.write_bytes(data)
            outcomes = [("api", child.compile(path))]
            if args.cli_every and index % args.cli_every == 0:
                cli = CLIS[(index // args.cli_every) % len(CLIS)]
                outcomes.append((cli, run_cli(args.bin, cli, path, workdir, args.timeout)))
            for driver, (outcome, detail) in outcomes:
                table[(form, outcome)] += 1
                table[("driver:" + driver, outcome)] += 1
                if outcome in BAD:
                    _report(index, form, name, mutation, driver, outcome, detail, data, corpus,
                            args.seed)
            if args.progress and (index + 1) % args.progress == 0:
                print(f"after {index + 1} inputs:\n{format_table(table)}", file=sys.stderr,
                      flush=True)
    finally:
        child.close()
    return table


def _suffix(form: str) -> str:
    return ".mlir" if form in ("pretty", "generic") else ".mlirbc"


def _report(index, form, name, mutation, driver, outcome, detail, data, corpus, seed) -> None:
    print(f"{outcome}: seed {seed} input {index} ({form} {name} {mutation}) via {driver}: "
          f"{detail[:160]}", file=sys.stderr, flush=True)
    if corpus is not None:
        corpus.mkdir(parents=True, exist_ok=True)
        (corpus / f"{outcome}-{form}-{name}-{mutation}-s{seed}-{index}{_suffix(form)}"
         ).write_bytes(data)


def format_table(table: collections.Counter) -> str:
    rows = sorted({row for row, _ in table})
    head = f"| {'form / driver':16} | " + " | ".join(f"{o:>9}" for o in OUTCOMES) + " |"
    lines = [head, "|" + "---|" * (len(OUTCOMES) + 1)]
    for row in rows:
        cells = " | ".join(f"{table[(row, o)]:>9}" for o in OUTCOMES)
        lines.append(f"| {row:16} | {cells} |")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m xlac.tools.fuzz",
                                description=__doc__.strip().splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="inputs to try (default 200)")
    p.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds before a hang")
    p.add_argument("--cli-every", type=int, default=10,
                   help="also run every N-th input through a CLI (0: never)")
    p.add_argument("--python", default=sys.executable, help="the interpreter to fuzz")
    p.add_argument("--bin", default=str(Path(sys.executable).parent),
                   help="where xla-opt, xla-run and xla-compile are")
    p.add_argument("--shared", default=str(_SHARED) if _SHARED.is_dir() else "",
                   help="the shared data (default ../shared beside the repo, if there): "
                        "its small bench programs are seeds too")
    p.add_argument("--isolate", default="1", help="XLAC_ISOLATE_INPUT for the child (1 or 0)")
    p.add_argument("--progress", type=int, default=0, metavar="N",
                   help="print the table so far every N inputs (on stderr)")
    p.add_argument("--corpus", default="", help="write crashing/hanging/escaping inputs here")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    table = run(args)
    print(format_table(table))
    return int(any(table[(row, o)] for row, o in table if o in BAD and row.startswith("driver:")))


if __name__ == "__main__":
    sys.exit(main())
