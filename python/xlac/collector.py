"""Python's cyclic garbage collector paused while a program compiles.

Why: a compile makes and drops hundreds of thousands of binding objects (an
``ir.Operation`` per op each pass reads), none of them in reference cycles,
so the collector's passes over them find nothing to free; in a fresh
process (a cold compile) they also scan every object the imports made.
Measured on ViT, BERT and ResNet-18 in a fresh process (gc.callbacks,
thread CPU; AMD EPYC Zen 4): about 110 young, 10 middle and one full
collection per cold compile, 0.06-0.07 s of its 1.2-1.6 s of serial CPU
(docs/compile-time.md, twenty-eighth round). What a compile drops is freed
by reference counts as before; a cycle made meanwhile waits for the next
collection after it. Only built-in modules here: a cache hit imports this.
"""

from __future__ import annotations

import _thread
import gc

_lock = _thread.allocate_lock()
_depth = 0                        # compiles running now (nested, or in several threads)
_was_enabled = False              # the collector's state before the first of them


class collector_paused:  # noqa: N801 - used as a context manager, named as one
    """The collector off inside, then as it was: only the outermost of nested
    (or concurrent) pauses turns it back on, and only if it was on."""

    def __enter__(self) -> None:
        global _depth, _was_enabled
        with _lock:
            if _depth == 0:
                _was_enabled = gc.isenabled()
                gc.disable()
            _depth += 1

    def __exit__(self, *exc_info) -> None:
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
