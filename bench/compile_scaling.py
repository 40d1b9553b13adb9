"""Compile time against program size: xlac beside XLA, in one interleaved run.

    python bench/compile_scaling.py                          # every family but the slowest sizes
    python bench/compile_scaling.py --family mlp --sizes 1,4,16
    python bench/compile_scaling.py --family models --models hf_bert,hf_vit
    python bench/compile_scaling.py --xlac new=.venv/bin/python --xlac main=../main/.venv/bin/python

Families (generated with JAX, unrolled: no loops, so the op count is the program's size):
``mlp`` an MLP with a softmax head, ~50 StableHLO ops per size unit; ``chain`` a chain of
elementwise ops; ``transpose_dot`` alternating transposes and dots; ``models`` the real
models of ../shared/models. XLA is ``jax.jit(f).lower(x).compile()`` for the generated
programs and jaxlib's client on the text for the models (as bench/run.py does).

Each xlac compile runs in a fresh process (``workers/compile_scaling_worker.py``) of each
``--xlac`` interpreter in turn, so two checkouts are measured interleaved on one noisy
machine, XLA's compile of the same program between them. Per program and interpreter:

- **cold**: ``import xlac`` then ``xlac.compile`` in a fresh process with the cache in a
  new empty directory, as a user's first compile (the entry and its machine-code pieces
  are stored, as they are then). Its phases are timed by wrapping the functions that do
  them, so it runs as users run it (a pass manager per stage, no trace): front (parse,
  and the stablehlo, fused and linalg stages), lowering (bufferized and llvm stages),
  LLVM codegen (machine code less link and load), link/load (linking the pieces into a
  library, ``dlopen``), cache store, and the rest (keys, signature).
- **warm**: the same compile in another fresh process on that cache: a hit.
- **micro-kernel library**: the cold compile again, in a fresh process with a new empty
  cache that holds only the micro-kernels the cold compile built (``micro-kernels/``: the
  matmul register tiles, built once per machine, docs/compile-time.md) and the memo of
  xlac's build identity (``build-identity.json``, 0.08 s of CPU to make): what every cold
  compile but a machine's first pays. n/a where none were built (XLAC_MICRO_KERNELS=0, no
  matmul, or a CPU without FMA); the cold column includes building them.
- **second compile**: the micro-kernel library's compile in a process that compiled
  another small program first (a convolution, a dot, a reduction), as XLA's column is
  timed: the modules a compile uses loaded, the parser and piece workers started; what
  a notebook's or a server's later compiles pay. ``second/XLA`` is its wall against XLA's.
- with ``--per-pass``: the compile again, pass by pass with a trace (``Options.trace_to``,
  cache off), for each pass's seconds; ``--trace FILE`` keeps such a compile's trace of
  the first program (Chrome trace JSON: open it in Perfetto).

XLA's seconds are its compile after a warm-up compile in this process (jax imported and
initialised), so they leave out what ``import jax`` costs; xlac's cold column leaves
out the import of xlac and of the modules its compile loads, the MLIR bindings among them
(reported beside it: a user's first compile pays both). Beside the wall times, CPU times: XLA's
process (all its threads), xlac's compiling process (``cold CPU s``) and its child processes
(``workers CPU s``: the piece workers' LLVM and start-up, the parser, cc). ``library CPU s``
is both for the compile with the micro-kernels built (the cold one where none are), and
``library/XLA`` its wall time against XLA's; ``CPU/CPU`` is its CPU against XLA's,
steadier than the wall's on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compile_scaling_tables import PHASES, format_row, pass_table, table, user_phases  # noqa: F401

HERE = Path(__file__).resolve().parent
SHARED_MODELS = HERE.parent.parent / "shared" / "models"
EXPORTED_MODELS = HERE / "models"          # bench/export_models.py's (gitignored)
WORKER = HERE / "workers" / "compile_scaling_worker.py"

# family -> the sizes run by default, and every size it has
SIZES = {"mlp": ("1,4,16", "1,4,16,64"), "chain": ("1000,2000", "1000,2000,10000"),
         "transpose_dot": ("500", "500,2000")}


def mlp_program(units: int):
    """``units`` blocks of dense + tanh + layernorm-ish math, then a softmax: ~50 ops each."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    width = 64
    rng = np.random.default_rng(0)
    weights = [jnp.asarray(rng.standard_normal((width, width), np.float32) / 8) for _ in range(units)]

    def block(x, w, k):
        h = jnp.tanh(x @ w + 0.01 * k)
        h = h - jnp.mean(h, axis=-1, keepdims=True)
        h = h / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-5)
        h = jnp.maximum(h, 0.0) * (1.0 + 0.001 * k) + x
        logits = h - jnp.max(h, axis=-1, keepdims=True)
        return jnp.exp(logits) / jnp.sum(jnp.exp(logits), axis=-1, keepdims=True) + h

    def mlp(x, *ws):
        for k, w in enumerate(ws):
            x = block(x, w, k)
        return x

    x = jnp.ones((32, width), jnp.float32)
    return jax.jit(mlp), (x, *weights)


def chain_program(ops: int):
    """``ops`` elementwise ops, one after the other (constants differ: nothing to CSE)."""
    import jax
    import jax.numpy as jnp

    def chain(x):
        for k in range(ops // 2):
            x = x * (1.0 + k * 1e-6) if k % 2 else jnp.sin(x) + k * 1e-6
        return x

    return jax.jit(chain), (jnp.ones((256, 128), jnp.float32),)


def transpose_dot_program(ops: int):
    """``ops`` ops alternating a transpose and a dot with a weight."""
    import jax
    import jax.numpy as jnp

    def alternate(x, w):
        for _ in range(ops // 2):
            x = x.T @ w
        return x

    return jax.jit(alternate), (jnp.ones((64, 64), jnp.float32), jnp.eye(64, dtype=jnp.float32))


GENERATORS = {"mlp": mlp_program, "chain": chain_program, "transpose_dot": transpose_dot_program}


def op_count(text: str) -> int:
    """StableHLO ops in the text: lines that define a value with an op, or return."""
    return sum(1 for line in text.splitlines()
               if "stablehlo." in line or line.strip().startswith(("return", "func.return")))


class Case:
    """One program: its text, its size, and how XLA compiles it."""

    def __init__(self, name: str, text: str, xla_compile):
        self.name, self.text, self.xla_compile = name, text, xla_compile
        self.ops = op_count(text)


def generated_cases(family: str, sizes: list[int]) -> list[Case]:
    cases = []
    for size in sizes:
        fn, args = GENERATORS[family](size)
        lowered = fn.lower(*args)
        label = f"{family} {size}x" if family == "mlp" else f"{family} {size}"
        cases.append(Case(label, lowered.as_text(), lambda lowered=lowered: lowered.compile()))
    return cases


def model_cases(names: list[str] | None) -> list[Case]:
    """The shared models and the exported ones; XLA compiles their text through jaxlib's client, as bench/run.py."""
    from jax._src import compiler
    from jax._src.lib import xla_client
    from jax.extend.backend import get_backend

    client = xla_backend(get_backend)
    devices = xla_client.DeviceList((client.local_devices()[0],))
    options = compiler.get_compile_options(num_replicas=1, num_partitions=1, backend=client)
    cases = []
    for path in sorted(SHARED_MODELS.glob("*.mlir")) + sorted(EXPORTED_MODELS.glob("*.mlir")):
        if names is None or path.stem in names:
            text = path.read_text()
            cases.append(Case(path.stem, text,
                              lambda text=text: client.compile_and_load(text, devices, options)))
    return cases


def xla_backend(get_backend):
    """XLA's client for ``TARGET``: its GPU client for cuda where jax has one, else its CPU
    client (said in the output: then the XLA column is not the same target's compile)."""
    if TARGET[0] == "cuda":
        try:
            return get_backend("gpu")
        except RuntimeError:
            print("note: jax has no GPU client here: XLA's column is its CPU compile", flush=True)
    return get_backend("cpu")


def xla_seconds(case: Case) -> tuple[float, float]:
    """XLA's compile of ``case``: wall seconds, and this process's CPU seconds (every thread)."""
    start, cpu_start = time.perf_counter(), time.process_time()
    case.xla_compile()
    return time.perf_counter() - start, time.process_time() - cpu_start


def xlac_run(python: str, case: Case, limit_s: float, threads: int, mode: str = "passes",
             extra: str = "") -> dict:
    """Compile ``case`` for ``TARGET`` in a fresh ``python`` process (the worker's ``mode``)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "program.mlir"
        source.write_text(case.text)
        command = [python, str(WORKER), str(source), str(threads), mode, extra, TARGET[0]]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=limit_s)
        except subprocess.TimeoutExpired:
            return {"error": f"over {limit_s:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": last[:120]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def cold_and_warm(python: str, case: Case, limit_s: float, threads: int) -> dict:
    """A cold compile into an empty cache, then a warm one (a hit) on it, then a
    cold one into another cache holding only the micro-kernels the first built, and
    that one again as a process's second compile."""
    with tempfile.TemporaryDirectory(prefix="xlac-cache-") as cache:
        cold = xlac_run(python, case, limit_s, threads, "cold", cache)
        warm = xlac_run(python, case, limit_s, threads, "warm", cache) if "error" not in cold \
            else {"error": "no cold compile"}
        library = second = None
        if "error" not in cold:
            library = library_run(python, case, limit_s, threads, "cold", Path(cache))
            second = library_run(python, case, limit_s, threads, "second", Path(cache))
    return {"cold": cold, "warm": warm, "kernels": library, "second": second}


def library_run(python: str, case: Case, limit_s: float, threads: int, mode: str,
                cache: Path) -> dict | None:
    """A compile (``mode``) into a new cache holding only the micro-kernels and the
    build-identity memo of ``cache``. A ``cold`` one is None where the cold compile built
    no micro-kernels (the cold compile is then the library's)."""
    kernels = cache / "micro-kernels"
    if mode == "cold" and not kernels.is_dir():
        return None
    with tempfile.TemporaryDirectory(prefix="xlac-cache-") as fresh:
        if kernels.is_dir():
            shutil.copytree(kernels, Path(fresh) / "micro-kernels")
        memo = cache / "build-identity.json"     # as any cache but a new one has
        if memo.is_file():
            shutil.copyfile(memo, Path(fresh) / memo.name)
        return xlac_run(python, case, limit_s, threads, mode, fresh)


TARGET = ["cpu"]     # what xlac compiles for (--target); XLA compiles for its backend of that kind


def main(argv=None) -> int:
    args = parse_args(argv)
    TARGET[0] = args.target
    cases = []
    for family in args.family:
        if family == "models":
            cases += model_cases(args.models.split(",") if args.models else None)
        else:
            sizes = args.sizes if args.sizes and len(args.family) == 1 else \
                SIZES[family][1 if args.all_sizes else 0]
            cases += generated_cases(family, [int(s) for s in sizes.split(",")])
    import jax
    jax.jit(lambda x: x + 1).lower(1.0).compile()      # XLA's start-up stays out of its times
    interpreters = [tuple(spec.split("=", 1)) if "=" in spec else ("xlac", spec) for spec in args.xlac]
    for _, python in interpreters:
        byte_compile(python)
    rows = []
    for index, case in enumerate(cases):
        row = {"case": case, "xla": None, "xla_cpu": None, "xlac": {}, "passes": {}}
        for turn in range(args.repeat):         # alternate the interpreters; keep each one's best
            wall, cpu = xla_seconds(case)
            if row["xla"] is None or wall < row["xla"]:
                row["xla"], row["xla_cpu"] = wall, cpu
            for label, python in interpreters[::-1] if turn % 2 else interpreters:
                keep_best(row["xlac"], label, cold_and_warm(python, case, args.limit_s, args.threads))
                first = index == 0 and turn == 0 and label == interpreters[0][0]
                if args.per_pass or (args.trace and first):
                    trace = args.trace if args.trace and first else ""
                    result = xlac_run(python, case, args.limit_s, args.threads, "passes", trace)
                    best = row["passes"].get(label)
                    if best is None or result.get("seconds", 1e9) < best.get("seconds", 1e9):
                        row["passes"][label] = result
        rows.append(row)
        print(format_row(row, interpreters), flush=True)
    print()
    print(table(rows, interpreters))
    if args.per_pass:
        print()
        print(pass_table(rows, interpreters))
    return 0


XLAC_PACKAGES = ("xlac", "xlac.passes", "xlac.dialects")


def byte_compile(python: str, packages: tuple[str, ...] = XLAC_PACKAGES, env: dict | None = None) -> None:
    """``packages`` of ``python`` byte-compiled (``.pyc`` written) before any compile is timed.

    Why: an installed package is byte-compiled when pip installs it, but a
    checkout's modules only as they are first imported, and not at all under
    PYTHONDONTWRITEBYTECODE=1: then every cold compile compiled xlac's sources
    again (hf_vit: 0.92-1.16 -> 1.49-1.51 s of the compiling process's CPU,
    AMD EPYC Zen 4, load 14-15), a cost no user's compile pays, and unequal
    between two trees of which one had its ``.pyc`` files."""
    code = ("import compileall, importlib, os, sys\n"
            "for name in sys.argv[1:]:\n"
            "    root = os.path.dirname(importlib.import_module(name).__file__)\n"
            "    compileall.compile_dir(root, quiet=1)\n")
    subprocess.run([python, "-c", code, *packages], check=True, capture_output=True, env=env)


def keep_best(found: dict, label: str, result: dict) -> None:
    """Keep the faster cold compile (and the warm one that went with it)."""
    best = found.get(label)
    if best is None or "error" in best["cold"] or \
            result["cold"].get("seconds", 1e9) < best["cold"]["seconds"]:
        found[label] = result


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=[*GENERATORS, "models"],
                        help="program families (repeatable; default: all)")
    parser.add_argument("--sizes", help="comma-separated sizes when one --family is given "
                                        "(mlp: size units of ~50 ops; the others: ops)")
    parser.add_argument("--all-sizes", action="store_true",
                        help="also the slowest sizes (mlp 64x, chain 10000, transpose_dot 2000)")
    parser.add_argument("--models", help="comma-separated names of ../shared/models (default: all)")
    parser.add_argument("--xlac", action="append",
                        help="LABEL=PYTHON: an interpreter with xlac installed (repeatable; "
                             "default: this one)")
    parser.add_argument("--target", choices=["cpu", "cuda"], default="cpu",
                        help="what xlac compiles for (cuda: no GPU needed to compile)")
    parser.add_argument("--threads", type=int, default=0, help="threads compiled for (0: every core)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="compiles per interpreter, alternating the order; the fastest is kept")
    parser.add_argument("--per-pass", action="store_true",
                        help="also a compile pass by pass with a trace: each pass's seconds")
    parser.add_argument("--trace", help="keep a traced compile of the first program (the first "
                                        "--xlac) here: Chrome trace JSON, for Perfetto")
    parser.add_argument("--limit-s", type=float, default=900.0, help="seconds one xlac compile may take")
    args = parser.parse_args(argv)
    args.family = args.family or [*GENERATORS, "models"]
    args.xlac = args.xlac or [f"xlac={sys.executable}"]
    return args


if __name__ == "__main__":
    sys.exit(main())
