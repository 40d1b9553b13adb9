"""Differential check of xlac against XLA on the jax functions users call (issue 39).

Each case of bench/jax_surface_cases.py is lowered with
``jax.jit(f).lower(*args).as_text()``, compiled with ``xlac.compile(text, cpu=...)``
at each CPU level asked for, run, and compared with jax's own result
(tolerances by dtype, exact for integers and booleans). The cases run in a
worker process; one that hangs past ``--timeout`` or kills its worker is
recorded as such and the run goes on in a fresh worker.

    .venv/bin/python bench/jax_surface.py                       # host and x86-64-v3
    .venv/bin/python bench/jax_surface.py --cpu host --only 'linalg|fft' --json out.json
    .venv/bin/python bench/jax_surface.py --via artifact      # jax.export's serialized artifacts

Not a timed test: a correctness survey. Prints one row per case and level:
``ok``, ``mismatch (max err E)``, ``compile error: <first line>``, ``jax error``,
``run error``, ``crash`` or ``hang``.
"""
import argparse
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (rtol, atol) by result dtype kind; integers and booleans are compared exactly.
TOLERANCES = {"float64": (1e-9, 1e-12), "complex128": (1e-9, 1e-12), "float32": (2e-4, 2e-5),
              "complex64": (2e-4, 2e-5), "float16": (4e-3, 1e-3), "bfloat16": (3e-2, 1e-2)}


def compare(expected, actual) -> tuple[bool, float, str]:
    """Whether ``actual`` matches ``expected`` (jax's), the max abs error and why not."""
    import numpy as np
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return False, float("nan"), f"{actual.dtype}{list(actual.shape)} != {expected.dtype}{list(expected.shape)}"
    name = str(expected.dtype)
    if name not in TOLERANCES:
        same = np.array_equal(expected, actual)
        diff = 0.0 if same else float(np.max(np.abs(expected.astype(np.float64) - actual.astype(np.float64))))
        return same, diff, ""
    rtol, atol = TOLERANCES[name]
    wide = np.complex128 if "complex" in name else np.float64
    e, a = expected.astype(wide), actual.astype(wide)
    if not np.array_equal(np.isnan(e), np.isnan(a)):
        return False, float("nan"), "NaN positions differ"
    finite = ~np.isnan(e)
    err = np.abs(e[finite] - a[finite])
    err = np.where(np.isinf(e[finite]) & (e[finite] == a[finite]), 0.0, err)
    worst = float(err.max()) if err.size else 0.0
    return bool(np.all(err <= atol + rtol * np.abs(e[finite]))), worst, ""


def program(fn, args, via: str):
    """``fn``'s StableHLO as the user hands it over: ``lower`` (jax.jit(f).lower(...).as_text()),
    ``export`` (jax.export's text: composites, e.g. chlo.top_k), ``artifact`` (its
    serialized portable artifact, bytes) or ``symbolic`` (that artifact with the
    first argument's leading dim symbolic, ``b``: shape-polymorphic)."""
    import jax
    if via == "lower":
        return jax.jit(fn).lower(*args).as_text()
    if via == "symbolic":
        return bytes(jax.export.export(jax.jit(fn))(*symbolic_specs(args)).mlir_module_serialized)
    exported = jax.export.export(jax.jit(fn))(*args)
    return exported.mlir_module() if via == "export" else bytes(exported.mlir_module_serialized)


def symbolic_specs(args):
    """``args`` as jax.ShapeDtypeStructs, the first array's leading dim the symbol ``b``."""
    import jax
    import numpy as np
    specs = [jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype) for a in args]
    first = next((i for i, a in enumerate(args) if np.ndim(a) >= 1), None)
    if first is not None:
        rest = ", ".join(str(d) for d in np.shape(args[first])[1:])
        shape = jax.export.symbolic_shape("b" + (", " + rest if rest else ""))
        specs[first] = jax.ShapeDtypeStruct(shape, specs[first].dtype)
    return specs


def run_case(fn, args, cpus, via: str = "lower") -> dict:
    """One case at each CPU level: ``{cpu: (status, detail)}``."""
    import jax
    import numpy as np

    import xlac
    try:
        text = program(fn, args, via)
        expected = [np.asarray(v) for v in jax.tree.leaves(jax.jit(fn)(*args))]
    except Exception as exc:                       # noqa: BLE001 - jax's own failure is a row
        return {cpu: ("jax error", first_line(exc)) for cpu in cpus}
    rows = {}
    for cpu in cpus:
        try:
            exe = xlac.compile(text, cpu=None if cpu == "host" else cpu, cache=False)
        except xlac.CompileError as exc:
            rows[cpu] = ("compile error", first_line(exc))
            continue
        except Exception as exc:                   # noqa: BLE001 - a traceback, not a diagnostic
            rows[cpu] = ("compile crash", f"{type(exc).__name__}: {first_line(exc)}")
            continue
        try:
            actual = [np.asarray(v) for v in exe.run(*args)]
        except Exception as exc:                   # noqa: BLE001
            rows[cpu] = ("run error", f"{type(exc).__name__}: {first_line(exc)}")
            continue
        rows[cpu] = verdict(expected, actual)
    return rows


def verdict(expected, actual) -> tuple[str, str]:
    if len(expected) != len(actual):
        return "mismatch", f"{len(actual)} results, jax has {len(expected)}"
    worst = 0.0
    for e, a in zip(expected, actual):
        ok, err, reason = compare(e, a)
        if not ok:
            return "mismatch", f"max err {err:.3g} {reason}".strip()
        worst = max(worst, err)
    return "ok", f"{worst:.2g}"


def first_line(exc) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:                               # the first MLIR diagnostic, if there is one
        if "error:" in ln:
            return ln[:160]
    return (lines[0] if lines else type(exc).__name__)[:160]


def worker(names: list[str], cpus: list[str], via: str) -> None:
    """Run ``names`` in order, one ``START``/``RESULT`` line pair each on stdout."""
    sys.path.insert(0, str(HERE))
    from jax_surface_cases import all_cases
    cases = {name: (fn, args) for name, fn, args in all_cases()}
    for name in names:
        print("START", name, flush=True)
        print("RESULT", json.dumps(run_case(*cases[name], cpus, via)), flush=True)


def survey(names: list[str], cpus: list[str], timeout: float, via: str):
    """Yield ``(name, {cpu: (status, detail)})``, restarting the worker after a crash or hang."""
    pending = list(names)
    while pending:
        cmd = [sys.executable, __file__, "--worker", "--via", via, "--cpu", ",".join(cpus),
               "--names", ",".join(pending)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        current, deadline = None, time.monotonic() + 600      # jax's import and the case list
        while pending:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = proc.stdout.readline() if ready else None
            if line is None or line == "":             # timed out, or the worker died
                status = "hang" if line is None else f"crash (rc {proc.wait()})"
                proc.kill()
                proc.wait()
                if current is None:
                    raise SystemExit(f"the worker failed before its first case: {status}")
                yield current, {cpu: (status.split()[0], status) for cpu in cpus}
                pending.remove(current)
                break
            if line.startswith("START "):
                current, deadline = line.split(" ", 1)[1].strip(), time.monotonic() + timeout
            elif line.startswith("RESULT "):
                yield current, {k: tuple(v) for k, v in json.loads(line[7:]).items()}
                pending.remove(current)
                current = None
        proc.wait()


def arg_dtypes(args) -> str:
    """The arguments' element types, each once: "f32,i32"."""
    import numpy as np
    short = {"float": "f", "int": "i", "uint": "u", "complex": "c", "bfloat": "bf"}
    seen = []
    for a in args:
        name = str(np.asarray(a).dtype)
        kind = re.match(r"[a-z]+", name).group()
        name = short.get(kind, kind) + name[len(kind):]
        seen += [name] if name not in seen else []
    return ",".join(seen)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", default="host,x86-64-v3", help="comma-separated CPU levels ('host' = this CPU)")
    parser.add_argument("--only", default="", help="regex: the case names to run")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one case may take (all levels)")
    parser.add_argument("--via", choices=("lower", "export", "artifact", "symbolic"), default="lower",
                        help="how the program is exported: jax.jit(f).lower(...).as_text(), "
                             "jax.export's text, its serialized portable artifact, or that "
                             "artifact with the first argument's leading dim symbolic")
    parser.add_argument("--json", default="", help="also write the rows to this JSON file")
    parser.add_argument("--list", action="store_true", help="list the case names and exit")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--names", default="", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    cpus = opts.cpu.split(",")
    if opts.worker:
        worker(opts.names.split(","), cpus, opts.via)
        return 0
    sys.path.insert(0, str(HERE))
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from jax_surface_cases import all_cases
    cases = [(n, arg_dtypes(args)) for n, _, args in all_cases() if re.search(opts.only, n)]
    names, dtypes = [n for n, _ in cases], dict(cases)
    if opts.list:
        print("\n".join(names))
        return 0
    rows, failed = {}, 0
    print(f"{'function':28} {'dtype':16} {'cpu':10} result")
    for name, result in survey(names, cpus, opts.timeout, opts.via):
        rows[name] = result
        for cpu in cpus:
            status, detail = result[cpu]
            failed += status != "ok"
            shown = f"ok (max err {detail})" if status == "ok" else f"{status}: {detail}"
            print(f"{name:28} {dtypes[name]:16} {cpu:10} {shown}", flush=True)
    total = len(names) * len(cpus)
    print(f"\n{total - failed}/{total} ok")
    if opts.json:
        Path(opts.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
