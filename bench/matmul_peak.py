"""An f32 matmul on one core against that core's measured FMA peak.

```
python bench/matmul_peak.py                           # 1024^3: xlac at host and x86-64-v3, OpenBLAS, peaks
python bench/matmul_peak.py --rounds 8 --calls 30 --xla
python bench/matmul_peak.py --only xlac --levels x86-64-v4 --tree main=../main   # before/after
python bench/matmul_peak.py --shape 512x1024x256 --threads 2
python bench/matmul_peak.py --only peak --bf16-peaks  # vdpbf16ps and AMX's bf16 peaks, where the CPU has them
```

Every configuration (xlac at a level and from a source tree, numpy's OpenBLAS, XLA,
the FMA loops) runs in a process of its own, one after another, round after round, so
that the load of a shared machine falls on all of them alike. One core: xlac with
``XLAC_NUM_THREADS=1``, OpenBLAS with ``OPENBLAS_NUM_THREADS=1``, XLA with its Eigen
pool off and one intra-op thread, each process pinned to one CPU. Times are the
process's CPU time per call (a call that waits for the CPU behind another job does
not count its wait), wall time beside it. The figure is the median of the per-process
medians, with the best call of all.

The peak is measured, not computed from a nominal clock: ``fma_peak.c``'s independent
``vfmadd231ps`` chains on registers alone, zmm (AVX-512) and ymm (AVX2), whose clock
may differ on the same core. xlac's code at a level (and OpenBLAS, XLA: the host's) is
held against the peak of that level's vectors; the best of the loop's runs counts.
``--bf16-peaks`` adds the bf16 dot-product instructions' loops (``vdpbf16ps``, AMX's
``tdpbf16ps``) where /proc/cpuinfo lists them, as multiples of the zmm FMA peak: what a
bf16 x bf16 -> f32 matmul could gain by them on this CPU.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDE = {"x86-64-v4": "zmm", "x86-64-v3": "ymm", "x86-64-v2": "xmm"}
PORT_FLOPS = {"zmm": 64, "ymm": 32}    # f32 FLOPs a cycle with two FMA ports that wide (Zen 4's zmm: half)
PEAK_LOOPS = {"zmm": "fma_loop_zmm", "ymm": "fma_loop_ymm",    # fma_peak.c's loop for each peak
              "bf16-zmm": "dpbf16_loop_zmm", "amx-bf16": "amx_bf16_loop"}
BF16_PEAKS = {"bf16-zmm": "avx512_bf16", "amx-bf16": "amx_bf16"}   # the CPU flag each needs


def program(m: int, k: int, n: int) -> str:
    return (f"func.func public @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>)"
            f" -> tensor<{m}x{n}xf32> {{\n"
            f"  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
            f" : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n"
            f"  return %0 : tensor<{m}x{n}xf32>\n}}\n")


def _timed(call, calls: int) -> list[tuple[float, float]]:
    """(CPU seconds, wall seconds) of each of ``calls`` calls, after two untimed."""
    call(), call()
    times = []
    for _ in range(calls):
        cpu, wall = time.process_time(), time.perf_counter()
        call()
        times.append((time.process_time() - cpu, time.perf_counter() - wall))
    return times


def _inputs(m: int, k: int, n: int):
    import numpy as np
    rng = np.random.default_rng(0)
    return (rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((k, n), dtype=np.float32))


def child(kind: str, level: str, shape: tuple[int, int, int], calls: int) -> dict:
    """One configuration's calls, in this process (set up by ``_environment``)."""
    if kind == "peak":
        library = ctypes.CDLL(str(_peak_library()))
        loop = getattr(library, PEAK_LOOPS[level])
        loop.argtypes, loop.restype = [ctypes.c_long], ctypes.c_double
        flops = loop(100_000)
        if flops < 0:
            raise SystemExit(f"{PEAK_LOOPS[level]}: the kernel refused the tile state")
        return {"flops": flops, "times": _timed(lambda: loop(100_000), calls)}
    a, b = _inputs(*shape)
    flops = 2.0 * shape[0] * shape[1] * shape[2]
    if kind == "openblas":
        import numpy as np
        return {"flops": flops, "times": _timed(lambda: np.matmul(a, b), calls)}
    if kind == "xla":
        import jax
        import jax.numpy as jnp
        f = jax.jit(jnp.matmul)
        da, db = jax.device_put(a), jax.device_put(b)
        return {"flops": flops, "times": _timed(lambda: f(da, db).block_until_ready(), calls)}
    import xlac
    exe = xlac.compile(program(*shape), cpu=level)
    return {"flops": flops, "times": _timed(lambda: exe(a, b), calls)}


def _peak_library() -> Path:
    from xlac.files import built_library
    return built_library(HERE / "fma_peak.c")


def _environment(kind: str, threads: int, tree: Path | None, cache: str) -> dict[str, str]:
    env = dict(os.environ, XLAC_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               OMP_NUM_THREADS=str(threads), XLAC_CACHE_DIR=cache)
    if kind == "xla" and threads == 1:
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                            " intra_op_parallelism_threads=1").strip()
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(_overlay(tree, Path(cache))), env.get("PYTHONPATH", "")])
    return env


def _overlay(tree: Path, under: Path) -> Path:
    """A folder whose package ``xlac`` is ``tree``'s: python/xlac's files with the
    subpackages the install maps from elsewhere (pyproject's package-dir) beside
    them. PYTHONPATH=tree/python alone would take xlac.passes from this
    checkout's editable install."""
    package = under / "py" / "xlac"
    package.mkdir(parents=True, exist_ok=True)
    sources = {entry.name: entry for entry in (tree / "python" / "xlac").iterdir()}
    sources.update({name: tree / name for name in ("dialects", "passes", "tools")})
    for name, source in sources.items():
        link = package / name
        if not link.is_symlink():
            link.symlink_to(source.resolve())
    return package.parent


def _run_child(config: dict, args) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", config["kind"], config["level"],
               "--shape", args.shape, "--calls", str(args.calls)]
    if args.threads == 1:
        command = ["taskset", "-c", str(config["cpu"])] + command
    tree = Path(config["tree"]).resolve() if config.get("tree") else None
    cache = f"{args.cache_dir}-{config['name'].split(' ')[0]}"
    result = subprocess.run(command, env=_environment(config["kind"], args.threads, tree, cache),
                            capture_output=True, text=True, cwd=str(HERE.parent))
    if result.returncode != 0:
        return {"error": (result.stderr or result.stdout).strip().splitlines()[-1:]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _host_level() -> str:
    flags = Path("/proc/cpuinfo").read_text()
    return "x86-64-v4" if " avx512f" in flags else "x86-64-v3" if " avx2" in flags else "x86-64-v2"


def configurations(args) -> list[dict]:
    host = _host_level()
    # "host" compiles for this CPU (cpu="host": its caches' sizes too), named as its level
    levels = {level: host if level == "host" else level for level in args.levels.split(",")}
    trees = [("", None)] + [tuple(t.split("=", 1)) for t in args.tree]
    configs = []
    wanted = set(args.only.split(",")) if args.only else {"xlac", "openblas", "xla", "peak"}
    for compiled_for, level in levels.items():
        for label, tree in trees:
            if "xlac" in wanted:
                name = f"xlac{'-' + label if label else ''} {level}{' (host)' if compiled_for == 'host' else ''}"
                configs.append({"name": name, "kind": "xlac", "level": compiled_for, "tree": tree,
                                "vectors": WIDE[level]})
    if "openblas" in wanted:
        configs.append({"name": "openblas", "kind": "openblas", "level": host, "vectors": WIDE[host]})
    if "xla" in wanted and args.xla:
        configs.append({"name": "xla", "kind": "xla", "level": host, "vectors": WIDE[host]})
    for vectors in dict.fromkeys(c["vectors"] for c in configs if c["vectors"] != "xmm"):
        configs.append({"name": f"peak {vectors}", "kind": "peak", "level": vectors, "vectors": vectors})
    if args.bf16_peaks:
        flags = Path("/proc/cpuinfo").read_text().split()
        names = [name for name, flag in BF16_PEAKS.items() if flag in flags]
        if names and not any(c["name"] == "peak zmm" for c in configs):   # what they are held against
            names.insert(0, "zmm")
        configs += [{"name": f"peak {name}", "kind": "peak", "level": name, "vectors": name} for name in names]
    return configs


def measure(args) -> dict[str, list[dict]]:
    configs = configurations(args)
    results: dict[str, list[dict]] = {c["name"]: [] for c in configs}
    for round_ in range(args.rounds):
        order = configs[round_ % len(configs):] + configs[:round_ % len(configs)]
        for config in order:
            config["cpu"] = args.cpu
            results[config["name"]].append(_run_child(config, args))
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    return {"configs": configs, "results": results}


def summarize(measured: dict, clock: str) -> list[dict]:
    """Per configuration: GFLOP/s of the median of per-process medians, and of the best call."""
    column = 0 if clock == "cpu" else 1
    rows = []
    for config in measured["configs"]:
        runs = [r for r in measured["results"][config["name"]] if "times" in r]
        errors = [r["error"] for r in measured["results"][config["name"]] if "error" in r]
        if not runs:
            rows.append({"name": config["name"], "error": errors[:1]})
            continue
        flops = runs[0]["flops"]
        medians = [statistics.median(t[column] for t in r["times"]) for r in runs]
        rates = [flops / m / 1e9 for m in medians]
        best = flops / min(t[column] for r in runs for t in r["times"]) / 1e9
        rows.append({"name": config["name"], "kind": config["kind"], "vectors": config["vectors"],
                     "median": flops / statistics.median(medians) / 1e9, "best": best,
                     "range": (min(rates), max(rates)), "ms": statistics.median(medians) * 1e3,
                     "processes": len(runs)})
    peaks = {r["vectors"]: r["best"] for r in rows if r.get("kind") == "peak"}
    for row in rows:
        peak = peaks.get(row.get("vectors"))
        if peak and row.get("kind") != "peak":
            row["median_pct"], row["best_pct"] = 100 * row["median"] / peak, 100 * row["best"] / peak
    return rows


def table(rows: list[dict], args) -> str:
    lines = [f"{args.shape} f32, {args.threads} thread(s), {args.rounds} rounds x {args.calls} calls, "
             f"{args.clock} time; load {os.getloadavg()[0]:.1f}",
             "| configuration | ms (median) | GFLOP/s median [per-process range] | best | % of peak median / best |",
             "|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | failed: {r['error']} | | | |")
            continue
        pct = f"{r['median_pct']:.0f}% / {r['best_pct']:.0f}%" if "median_pct" in r else peak_note(r, rows)
        lines.append(f"| {r['name']} | {r['ms']:.2f} | {r['median']:.1f} [{r['range'][0]:.1f}-{r['range'][1]:.1f}]"
                     f" | {r['best']:.1f} | {pct} |")
    return "\n".join(lines)


def peak_note(row: dict, rows: list[dict]) -> str:
    """A peak's clock (FMA loops) or its multiple of the zmm FMA peak (bf16 loops)."""
    if row["vectors"] in PORT_FLOPS:
        return f"(the peak: {row['best'] / PORT_FLOPS[row['vectors']]:.2f} GHz if 2 FMA ports of its width)"
    fma = next((r["best"] for r in rows if r.get("kind") == "peak" and r["vectors"] == "zmm"), None)
    return f"({row['best'] / fma:.2f}x the zmm FMA peak)" if fma else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="1024x1024x1024", help="m x k x n")
    parser.add_argument("--calls", type=int, default=30, help="timed calls per process")
    parser.add_argument("--rounds", type=int, default=5, help="processes per configuration, alternated")
    parser.add_argument("--levels", default="host,x86-64-v3", help="xlac's levels, comma-separated")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                        help="also xlac imported from another source tree (main's, say)")
    parser.add_argument("--only", default="", help="kinds: xlac,openblas,xla,peak")
    parser.add_argument("--xla", action="store_true", help="XLA too (jax; one thread: Eigen pool off)")
    parser.add_argument("--bf16-peaks", action="store_true",
                        help="also vdpbf16ps's and AMX's bf16 peaks, where the CPU has them")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cpu", type=int, default=0, help="the CPU one-thread processes are pinned to")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--cache-dir", default=f"/tmp/xlac-matmul-peak-{os.getuid()}")
    parser.add_argument("--json", type=Path, help="also write every call's times there")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "LEVEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    shape = tuple(int(x) for x in args.shape.lower().split("x"))
    if args.child:
        print(json.dumps(child(*args.child, shape, args.calls)))
        return
    measured = measure(args)
    if args.json:
        args.json.write_text(json.dumps(measured))
    print(table(summarize(measured, args.clock), args))


if __name__ == "__main__":
    main()
