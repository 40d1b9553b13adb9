"""CUDA graphs of a program's device work, one per set of buffer pointers.

A graph launch replaces one Python driver call per kernel with one call. A graph
has its buffers' pointers built in, and a call on device arrays binds new ones
(its inputs, results from the pool): so one graph is kept per set of pointers,
the least recently used dropped beyond ``KEPT``. Results taken from the
stream-ordered pool come back at the same few addresses in a steady loop, so the
same graphs serve call after call. Pointers seen once are launched kernel by
kernel: capturing costs about what that does, and pays only when reused.
"""

from __future__ import annotations

import sys
from collections import OrderedDict

from xlac.targets.cuda.errors import CudaError

KEPT = 8


class GraphCache:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._graphs: OrderedDict = OrderedDict()      # pointers -> executable graph
        self._seen: OrderedDict = OrderedDict()        # pointers of recent calls

    def __len__(self) -> int:
        return len(self._graphs)

    def launch(self, driver, stream: int, key: tuple, enqueue) -> bool:
        """Launch the graph for ``key`` on ``stream`` (capturing ``enqueue()``, which
        enqueues the work, on the second call with these pointers); False when
        there is none: the caller runs ``enqueue()`` itself."""
        graph = self._graphs.get(key)
        if graph is None and self.enabled and self._seen_before(key):
            graph = self._capture(driver, stream, key, enqueue)
        if graph is None:
            return False
        self._graphs.move_to_end(key)
        driver.launch_graph(graph, stream)
        return True

    def close(self, driver) -> None:
        for graph in self._graphs.values():
            driver.destroy_graph(graph)
        self._graphs.clear()

    def _seen_before(self, key: tuple) -> bool:
        if key in self._seen:
            return True
        self._seen[key] = None
        if len(self._seen) > 8 * KEPT:
            self._seen.popitem(last=False)
        return False

    def _capture(self, driver, stream: int, key: tuple, enqueue) -> int | None:
        """Record the work as a graph; if the driver refuses, say so and launch
        kernel by kernel from then on."""
        try:
            driver.begin_capture(stream)
        except CudaError as error:
            return self._no_graph(error)
        try:
            enqueue()
        except CudaError:
            driver.end_capture(stream)
            raise
        try:
            graph = self._graphs[key] = driver.end_capture(stream)
        except CudaError as error:
            return self._no_graph(error)
        if len(self._graphs) > KEPT:
            driver.destroy_graph(self._graphs.popitem(last=False)[1])
        return graph

    def _no_graph(self, error: CudaError) -> None:
        self.enabled = False
        print(f"xlac: CUDA graph capture failed ({error}); launching kernels one by one",
              file=sys.stderr)
