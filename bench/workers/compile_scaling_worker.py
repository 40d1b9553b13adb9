"""One cold xlac compile for compile_scaling.py: ``worker.py PROGRAM THREADS``.

Prints one JSON line: ``{"seconds": wall, "times": [[stage, step, seconds], ...]}``.
The compile cache is off and the compile is traced pass by pass (``Options.trace_to``);
xlac's start-up (imports, a tiny compile) stays out of the seconds.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

TINY = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


def main(path: str, threads: int) -> None:
    import xlac

    xlac.compile(TINY, cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        options = xlac.Options.from_env().replace(trace_to=str(trace), cache_dir=None,
                                                  num_threads=threads)
        source = Path(path).read_text()
        start = time.perf_counter()
        xlac.compile(source, cache=False, options=options)
        seconds = time.perf_counter() - start
        events = json.loads(trace.read_text())["traceEvents"]
    times = [[event["cat"], event["name"], event["dur"] / 1e6] for event in events
             if event.get("ph") == "X" and event["cat"] != "stage"]
    print(json.dumps({"seconds": seconds, "times": times}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
