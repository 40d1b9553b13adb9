"""A timeline of one cold compile of a big program: when the compiling process
reaches each phase (wall and its own CPU), when the piece workers start,
get each piece and answer it (and their CPU at the cut: warmed up or not),
and the critical path: the compiling process's time until every piece is
made (what follows is the workers' queue, which an idle machine's wall
adds). Only the pieces lowered in the workers (``early_pieces``) are timed.

    python bench/compile_timeline.py hf_bert hf_vit [--repeat 3] [--json out.json]

Each model is compiled in a fresh process (``--one``): the first compile of
the process, ``cache=False`` (the micro-kernel library comes from
``XLAC_CACHE_DIR`` as users have it; ``--empty-cache``: a new empty one per
process, so the micro-kernels are built, as on a machine's first compile).
``link_kernels``: the link's wait for the micro-kernels' objects (built there
on an empty cache before ``kernel_builds``; then built ahead on a worker).
Host level unless ``XLAC_CPU`` says.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"


class Timeline:
    """Events stamped with the wall (since the start) and this process's CPU."""

    def __init__(self):
        self.start_wall, self.start_cpu = time.perf_counter(), time.process_time()
        self.events: list[dict] = []
        self.lock = threading.Lock()

    def mark(self, name: str, **extra) -> None:
        event = {"name": name, "wall": time.perf_counter() - self.start_wall,
                 "cpu": time.process_time() - self.start_cpu, **extra}
        with self.lock:
            self.events.append(event)

    def first(self, name: str) -> dict | None:
        return next((e for e in self.events if e["name"] == name), None)

    def last(self, name: str) -> dict | None:
        return next((e for e in reversed(self.events) if e["name"] == name), None)


def _wrap(owner, attribute: str, timeline: Timeline, label: str, describe=None) -> None:
    """``owner.attribute`` marks ``label`` start/end around each call."""
    original = getattr(owner, attribute)

    def wrapped(*args, **kwargs):
        extra = describe(*args) if describe else {}
        timeline.mark(f"{label} start", **extra)
        try:
            return original(*args, **kwargs)
        finally:
            timeline.mark(f"{label} end", **extra)
    setattr(owner, attribute, wrapped)


def _worker_cpu(pid: int) -> float | None:
    """A worker's CPU seconds so far (Linux), None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def instrument(timeline: Timeline) -> None:
    """Marks in the CPU target's pieces path (see python/xlac/targets/cpu)."""
    from xlac.pipeline.runner import StageRunner
    from xlac.targets.cpu import compile as cpu_compile
    from xlac.targets.cpu import early_pieces, pieces
    _wrap(StageRunner, "run", timeline, "stage", lambda _runner, _module, stage, *_: {"stage": stage})
    _wrap(cpu_compile.CpuCompiler, "ingested", timeline, "workers started")
    _wrap(early_pieces, "make_piece", timeline, "make piece")
    _wrap(pieces._Worker, "compile", timeline, "piece",
          lambda worker, piece, _level: {"piece": piece.name, "pid": worker.process.pid,
                                         "bytes": len(piece.bytecode)})
    from xlac.targets.cpu import library, serialize
    _wrap(pieces, "_link_relocatable", timeline, "link pieces")
    _wrap(serialize, "link_code", timeline, "link library")
    _wrap(library, "open_library", timeline, "load library")
    original_cut = cpu_compile.CpuCompiler.stage_cut

    def stage_cut(self, stage, entry):
        found = original_cut(self, stage, entry)
        if found is None:
            return None
        cuts = [found] if isinstance(found, tuple) else found     # a list: cuts that only look first
        *looks, (after, take) = cuts

        def timed_take(module, steps):
            timeline.mark("cut", workers_cpu=[_worker_cpu(w.process.pid) for w in pieces._IDLE])
            return take(module, steps)
        return [*looks, (after, timed_take)] if looks else (after, timed_take)   # as the tree takes it
    cpu_compile.CpuCompiler.stage_cut = stage_cut
    from xlac.targets.cpu import micro_kernels
    _wrap(micro_kernels, "objects_for", timeline, "link kernels")   # built there, or waited for


def without_piece_cache() -> None:
    """Every piece compiled, as on the program's first compile: the pieces'
    cache is kept even with ``cache=False``."""
    from xlac import compiler
    compiler._Compile._piece_cache = lambda self: None


def one(name: str) -> dict:
    """One model's cold compile timed in this process."""
    timeline = Timeline()
    import xlac
    timeline.mark("imported")
    instrument(timeline)
    without_piece_cache()
    text = (MODELS / f"{name}.mlir").read_text()
    timeline.mark("compile start")
    xlac.compile(text, cache=False, options=xlac.Options.from_env())
    timeline.mark("compile end")
    return summary(timeline)


def summary(timeline: Timeline) -> dict:
    """The phases of ``timeline`` in seconds (see the module's doc)."""
    start, cut = timeline.first("compile start"), timeline.first("cut")
    end = timeline.last("compile end")
    handed = [e for e in timeline.events if e["name"] == "piece start"]
    answered = [e for e in timeline.events if e["name"] == "piece end"]
    made = [e for e in timeline.events if e["name"] == "make piece end"]
    result = {"wall": end["wall"] - start["wall"], "cpu": end["cpu"] - start["cpu"],
              "import": start["wall"], "pieces": len(handed)}
    if cut and handed:
        result.update(
            front_and_lowering=cut["wall"] - start["wall"],
            front_and_lowering_cpu=cut["cpu"] - start["cpu"],
            cut_to_first_piece=handed[0]["wall"] - cut["wall"],
            split=made[-1]["wall"] - timeline.first("make piece start")["wall"] if made else None,
            critical_path=made[-1]["wall"] - start["wall"],
            critical_path_cpu=made[-1]["cpu"] - start["cpu"],
            last_handed=handed[-1]["wall"] - start["wall"],
            workers=answered[-1]["wall"] - handed[0]["wall"],
            after_workers=end["wall"] - answered[-1]["wall"],
            workers_cpu_at_cut=cut.get("workers_cpu"),
            stages_cpu=_stages_cpu(timeline),
            after_workers_parts=_spans(timeline, ("link pieces", "link library", "load library")),
            link_kernels=_spans(timeline, ("link kernels",)).get("link kernels"),
            link_kernels_cpu=_cpu_span(timeline, "link kernels"))
    result["events"] = [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in e.items()}
                        for e in timeline.events]
    return result


def _spans(timeline: Timeline, labels) -> dict[str, float]:
    """The wall seconds of each of ``labels`` (its first call)."""
    found = {}
    for label in labels:
        start, end = timeline.first(f"{label} start"), timeline.first(f"{label} end")
        if start and end:
            found[label] = round(end["wall"] - start["wall"], 4)
    return found


def _cpu_span(timeline: Timeline, label: str) -> float | None:
    """The compiling process's CPU seconds in ``label``'s first call."""
    start, end = timeline.first(f"{label} start"), timeline.first(f"{label} end")
    return round(end["cpu"] - start["cpu"], 4) if start and end else None


def _stages_cpu(timeline: Timeline) -> dict[str, float]:
    """The compiling process's CPU seconds in each stage (the llvm stage: until the cut)."""
    starts = {e["stage"]: e for e in timeline.events if e["name"] == "stage start"}
    ends = {e["stage"]: e for e in timeline.events if e["name"] == "stage end"}
    return {stage: round(ends[stage]["cpu"] - starts[stage]["cpu"], 4)
            for stage in starts if stage in ends}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--one", action="store_true", help="time in this process (one model)")
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per model")
    parser.add_argument("--python", default=sys.executable, help="the interpreter timed")
    parser.add_argument("--json", help="keep every run's figures and events here")
    parser.add_argument("--empty-cache", action="store_true",
                        help="each process's cache directory new and empty: the micro-kernels built too")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.models[0])))
        return 0
    runs: dict[str, list[dict]] = {}
    for _ in range(args.repeat):
        for name in args.models:
            with tempfile.TemporaryDirectory(prefix="xlac-timeline-") as cache:
                env = dict(os.environ, **({"XLAC_CACHE_DIR": cache} if args.empty_cache else {}))
                done = subprocess.run([args.python, __file__, "--one", name], capture_output=True,
                                      text=True, check=True, env=env)
            runs.setdefault(name, []).append(json.loads(done.stdout.strip().splitlines()[-1]))
    for name, found in runs.items():
        print(name, " ".join(f"{key} {_median(found, key)}" for key in
                             ("wall", "cpu", "front_and_lowering", "front_and_lowering_cpu",
                              "cut_to_first_piece", "split", "critical_path", "workers",
                              "after_workers", "link_kernels", "link_kernels_cpu")),
              "| stages CPU", " ".join(f"{stage} {statistics.median(f['stages_cpu'][stage] for f in found):.3f}"
                                       for stage in found[0].get("stages_cpu", {})))
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    return 0


def _median(found: list[dict], key: str) -> str:
    values = [f[key] for f in found if f.get(key) is not None]
    return f"{statistics.median(values):.3f}" if values else "-"


if __name__ == "__main__":
    sys.exit(main())
