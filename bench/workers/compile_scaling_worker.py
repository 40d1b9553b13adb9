"""One xlac compile for compile_scaling.py: ``worker.py PROGRAM THREADS MODE [CACHE_DIR|TRACE] [TARGET]``.

Prints one JSON line. MODE:

``cold``  the compile a user's first run does: a fresh process, ``import xlac`` then
          ``xlac.compile`` with the cache at CACHE_DIR (empty: nothing to find; the
          entry and its pieces are stored there, as a user's first compile stores them).
          ``{"seconds": the compile call, "cpu": this process's CPU seconds in it,
          "workers_cpu": its child processes' (piece workers, parser, cc), "import":
          import xlac and the modules the compile loads (the MLIR bindings; imported
          here to wrap them), "spans", "stages"}``:
          the phases are timed by wrapping the functions that do them (below), so the
          compile runs as users run it: each stage one pass manager, no trace.
``warm``  the same in a fresh process on the cache ``cold`` filled: a hit.
``second`` ``cold``'s compile in a process that has compiled another program first
          (``WARM_UP``, into a cache of its own): what a notebook's or a server's later
          compiles pay, and how compile_scaling.py times XLA (after a warm-up compile).
          ``workers_cpu`` counts only the measured compile's share.
``passes`` the compile traced pass by pass (``Options.trace_to``, cache off) after a tiny
          warm-up compile: ``{"seconds", "times": [[stage, step, seconds], ...]}``; with
          TRACE, the Chrome trace (Perfetto) is copied there.
"""

from __future__ import annotations

import functools
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

TINY = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")

# a convolution, a dot, a reduction and elementwise math: the warm-up of ``second`` loads
# the modules a model's compile uses and starts the parser and the piece workers
WARM_UP = """\
func.func public @main(%x: tensor<1x16x16x8xf32>, %w: tensor<3x3x8x16xf32>, %a: tensor<64x64xf32>,
                       %b: tensor<64x64xf32>) -> (tensor<1x16x16x16xf32>, tensor<64xf32>) {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
         window = {stride = [1, 1], pad = [[1, 1], [1, 1]]}
         {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
         : (tensor<1x16x16x8xf32>, tensor<3x3x8x16xf32>) -> tensor<1x16x16x16xf32>
  %r = stablehlo.maximum %c, %c : tensor<1x16x16x16xf32>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
         : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = stablehlo.exponential %d : tensor<64x64xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1]
         : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
  return %r, %s : tensor<1x16x16x16xf32>, tensor<64xf32>
}
"""

# phase -> the functions whose calls are its time ("module:attribute" or "module:Class.method");
# each is looked up by its module at call time, so wrapping the module's attribute is seen.
TIMED = {
    "parse": ["xlac.frontend.isolation:parse_untrusted"],
    "link": ["xlac.targets.cpu.pieces:_link_relocatable", "xlac.targets.cpu.serialize:link_library"],
    "load": ["xlac.targets.cpu.library:open_library"],
    "cache store": ["xlac.cache:CompilationCache.put"],
}


def timed_calls(spans: dict[str, float]) -> None:
    """Wrap each function of ``TIMED`` to add its calls' seconds to ``spans``."""
    import importlib
    for phase, names in TIMED.items():
        for name in names:
            module_name, attribute = name.split(":")
            owner = importlib.import_module(module_name)
            *classes, function = attribute.split(".")
            for part in classes:
                owner = getattr(owner, part)
            setattr(owner, function, _timer(getattr(owner, function), phase, spans))


_active: list[str] = []          # the timed calls under way: a nested one is its caller's time


def _timer(function, phase: str, spans: dict[str, float]):
    @functools.wraps(function)
    def timed(*args, **kwargs):
        if _active:                  # e.g. a link while the cache stores the entry: a store's time
            return function(*args, **kwargs)
        _active.append(phase)
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spans[phase] = spans.get(phase, 0.0) + time.perf_counter() - start
            _active.pop()
    return timed


def runner_times(spans: list) -> None:
    """Keep each StageRunner's ``times`` (stage, step, start, seconds) when it finishes."""
    from xlac.pipeline.runner import StageRunner
    finish = StageRunner.finish

    def kept(self):
        spans.extend(self.times)
        return finish(self)
    StageRunner.finish = kept


def user_compile(path: str, threads: int, cache_dir: str, target: str,
                 warm_up: bool = False) -> dict:
    """``cold`` / ``warm``: import xlac and compile, as a user's script does;
    ``second`` (``warm_up``): after another program's compile in this process."""
    source = Path(path).read_text()
    start = time.perf_counter()
    import xlac
    from xlac.options import Options
    spans: dict[str, float] = {}
    times: list = []
    timed_calls(spans)          # imports the modules it wraps: the MLIR bindings among them
    runner_times(times)
    imported = time.perf_counter() - start      # so the import is counted here, not in the compile
    options = Options.from_env().replace(cache_dir=cache_dir, num_threads=threads)
    children_before = 0.0
    if warm_up:
        from xlac.cache import flush
        with tempfile.TemporaryDirectory(prefix="xlac-warm-up-") as other:
            xlac.compile(WARM_UP, target, options=options.replace(cache_dir=other))
            flush()                          # its writer done before the directory goes
        times.clear()
        spans.clear()
        children_before = children_cpu()
    start, cpu_start = time.perf_counter(), time.process_time()
    xlac.compile(source, target, options=options)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    stages: dict[str, float] = {}
    for stage, _, _, spent in times:
        stages[stage] = stages.get(stage, 0.0) + spent
    return {"seconds": seconds, "cpu": cpu, "workers_cpu": workers_cpu() - children_before,
            "import": imported,
            "spans": spans, "stages": stages}


def workers_cpu() -> float:
    """CPU seconds of the compile's child processes (the piece workers' LLVM and
    start-up, the parser, cc): ended first, as the kernel counts only reaped ones."""
    import resource

    from xlac.frontend import isolation
    from xlac.targets.cpu import pieces
    pieces._close_workers()
    isolation._WORKER._kill()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def children_cpu() -> float:
    """CPU seconds of this process's descendants so far: the reaped ones' (the kernel's
    count) and the live ones' (the parser, the piece workers and their seed)."""
    import os
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:                      # ended meanwhile: counted once it is reaped
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks     # utime, stime
    return total


def descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def traced_compile(path: str, threads: int, trace_copy: str, target: str) -> dict:
    """``passes``: pass by pass, traced, cache off; xlac's start-up out of the seconds."""
    import xlac

    xlac.compile(TINY, target, cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        options = xlac.Options.from_env().replace(trace_to=str(trace), cache_dir=None,
                                                  num_threads=threads)
        source = Path(path).read_text()
        start = time.perf_counter()
        xlac.compile(source, target, cache=False, options=options)
        seconds = time.perf_counter() - start
        events = json.loads(trace.read_text())["traceEvents"]
        if trace_copy:
            shutil.copyfile(trace, trace_copy)
    times = [[event["cat"], event["name"], event["dur"] / 1e6] for event in events
             if event.get("ph") == "X" and event["cat"] != "stage"]
    return {"seconds": seconds, "times": times}


def main(argv: list[str]) -> None:
    path, threads, mode = argv[0], int(argv[1]), argv[2] if len(argv) > 2 else "passes"
    extra = argv[3] if len(argv) > 3 else ""
    target = argv[4] if len(argv) > 4 else "cpu"
    result = traced_compile(path, threads, extra, target) if mode == "passes" else \
        user_compile(path, threads, extra, target, warm_up=mode == "second")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
