"""compile_scaling.py's results as text: a line per program as it finishes, the
tables at the end (the columns are described in compile_scaling.py's docstring)."""

from __future__ import annotations

# the passes named in the per-pass table; the rest are summed per stage
NAMED = ("xla-fuse", "xla-apply-schedules", "one-shot-bufferize")


def kernels_cell(result: dict) -> str:
    """The cold compile with the micro-kernels built already, seconds; n/a without them."""
    library = result.get("kernels")
    if library is None:
        return "n/a"
    return library["error"] if "error" in library else f"{library['seconds']:.2f}"


def second_cells(result: dict, xla: float) -> list[str]:
    """The process's second compile: wall s, its CPU s, wall against XLA's."""
    second = result.get("second")
    if second is None or "error" in second:
        return [second["error"] if second else "n/a", "-", "-"]
    return [f"{second['seconds']:.2f}", f"{all_cpu(second):.2f}",
            f"{second['seconds'] / max(xla, 1e-9):.1f}"]


PHASES = ("front", "lowering", "LLVM codegen", "link/load", "cache store", "rest")


def user_phases(cold: dict) -> dict[str, float]:
    """The cold compile's seconds per phase (see the module's docstring)."""
    stages, spans = cold.get("stages", {}), cold.get("spans", {})
    link_load = spans.get("link", 0.0) + spans.get("load", 0.0)
    out = {"front": spans.get("parse", 0.0) + sum(stages.get(s, 0.0) for s in FRONT_STAGES),
           "lowering": sum(t for s, t in stages.items() if s not in FRONT_STAGES + ("machine code",)),
           "LLVM codegen": stages.get("machine code", 0.0) - link_load,
           "link/load": link_load, "cache store": spans.get("cache store", 0.0)}
    out["rest"] = cold["seconds"] - sum(out.values())
    return out


FRONT_STAGES = ("stablehlo", "fused", "linalg")

def phases(result: dict) -> dict[str, float]:
    """Seconds per named pass and per stage (the stage minus its named passes)."""
    out: dict[str, float] = {}
    for stage, step, seconds in result.get("times", []):
        named = next((n for n in NAMED if step.startswith(n)), None)
        key = named or stage
        out[key] = out.get(key, 0.0) + seconds
    return out


def top_passes(result: dict, count: int = 4) -> str:
    total: dict[str, float] = {}
    for _, step, seconds in result.get("times", []):
        name = step.split("{")[0]
        total[name] = total.get(name, 0.0) + seconds
    best = sorted(total.items(), key=lambda item: -item[1])[:count]
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in best)



def format_row(row: dict, interpreters) -> str:
    parts = [f"{row['case'].name}: {row['case'].ops} ops, XLA {row['xla']:.2f} s"]
    for label, _ in interpreters:
        cold, warm = row["xlac"][label]["cold"], row["xlac"][label]["warm"]
        if "error" in cold:
            parts.append(f"{label} {cold['error']}")
            continue
        split = ", ".join(f"{k} {v:.2f}" for k, v in user_phases(cold).items())
        parts.append(f"{label} cold {cold['seconds']:.2f} s ({split}), warm "
                     + (warm["error"] if "error" in warm else f"{warm['seconds'] * 1e3:.0f} ms")
                     + f", second {second_cells(row['xlac'][label], row['xla'])[0]} s")
        passes = row["passes"].get(label)
        if passes and "error" not in passes:
            parts.append(f"{label} per pass {passes['seconds']:.2f} s ({top_passes(passes)})")
    return "; ".join(parts)


def table(rows: list[dict], interpreters) -> str:
    """Per program and interpreter: cold, warm, XLA, their ratio, the cold compile's phases."""
    header = ["program", "ops", "xlac", "cold s", "cold CPU s", "workers CPU s", "warm ms",
              "micro-kernel library", "library CPU s", "XLA s", "XLA CPU s", "cold/XLA",
              "library/XLA", "CPU/CPU", "second s", "second CPU s", "second/XLA", "import s",
              *PHASES]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        for label, _ in interpreters:
            cold, warm = row["xlac"][label]["cold"], row["xlac"][label]["warm"]
            cells = [row["case"].name, str(row["case"].ops), label]
            if "error" in cold:
                lines.append("| " + " | ".join(cells + [cold["error"]] + ["-"] * (len(header) - 4))
                             + " |")
                continue
            split = user_phases(cold)
            library = row["xlac"][label].get("kernels") or cold      # none built: cold is it
            library = cold if "error" in library else library
            cells += [f"{cold['seconds']:.2f}", f"{cold.get('cpu', 0.0):.2f}",
                      f"{cold.get('workers_cpu', 0.0):.2f}",
                      warm["error"] if "error" in warm else f"{warm['seconds'] * 1e3:.0f}",
                      kernels_cell(row["xlac"][label]), f"{all_cpu(library):.2f}",
                      f"{row['xla']:.2f}", f"{row['xla_cpu']:.2f}",
                      f"{cold['seconds'] / max(row['xla'], 1e-9):.1f}",
                      f"{library['seconds'] / max(row['xla'], 1e-9):.1f}",
                      f"{all_cpu(library) / max(row['xla_cpu'], 1e-9):.1f}",
                      *second_cells(row["xlac"][label], row["xla"]),
                      f"{cold['import']:.2f}", *(f"{split[p]:.2f}" for p in PHASES)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def all_cpu(result: dict) -> float:
    """A compile's CPU seconds, its own and its child processes'."""
    return result.get("cpu", 0.0) + result.get("workers_cpu", 0.0)


def pass_table(rows: list[dict], interpreters) -> str:
    """``--per-pass``: seconds per stage and named pass of the traced compile."""
    stages = ["stablehlo", "xla-fuse", "linalg", "xla-apply-schedules", "one-shot-bufferize",
              "bufferized", "llvm", "machine code"]
    lines = ["Per pass (traced, pass by pass, cache off), seconds; a stage's column is what "
             "its named passes leave:", ""]
    header = ["program", "xlac", "s", *stages]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        for label, _ in interpreters:
            result = row["passes"].get(label, {})
            if "error" in result or not result:
                continue
            split = phases(result)
            lines.append("| " + " | ".join([row["case"].name, label, f"{result['seconds']:.2f}"]
                                           + [f"{split.get(s, 0.0):.2f}" for s in stages]) + " |")
    return "\n".join(lines)
