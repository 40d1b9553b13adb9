"""What a long compile shows while it runs: which stage, which pass, how far.

Nothing is shown for a compile that ends within ``DELAY`` seconds. Past that,
on a terminal (``progress=auto`` with stderr a TTY, or ``bar``) a tqdm bar
counts the passes run out of the pipeline's, names the stage and the pass
running, and its clock keeps ticking through a long pass (LLVM's codegen is
one "pass" of many seconds); elsewhere (``auto`` into a file or pipe, or
``log``) one line per stage goes to stderr. ``off`` (``--quiet``) shows nothing.

The runner calls the progress with ``(stage, step, passes)`` as each step (or
a whole stage of ``passes`` passes) starts and
``close()`` when the compile ends or fails (``xlac.pipeline.runner``).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import weakref

from xlac.forking import register_pauser

DELAY = 2.0                    # seconds of silence before anything is shown
_TICK = 0.5                    # how often the bar's clock is redrawn
MODES = ("auto", "bar", "log", "off")
_LIVE: weakref.WeakSet = weakref.WeakSet()       # the displays whose clock may be ticking
# One pause at a time: piece workers start from several threads at once, and a
# second pauser could otherwise join the clock thread the first has just made
# and not yet started ("cannot join thread before it is started").
_PAUSING = threading.RLock()


def compile_progress(mode: str, title: str, stages: list[str], total_steps: int,
                     stream=None) -> CompileProgress | None:
    """The progress display ``mode`` asks for (None: ``off``)."""
    stream = stream if stream is not None else sys.stderr
    if mode not in MODES:
        raise ValueError(f"XLAC_PROGRESS / --progress: '{mode}' is not one of {', '.join(MODES)}")
    if mode == "off":
        return None
    if mode == "auto":
        mode = "bar" if _is_terminal(stream) else "log"
    return CompileProgress(mode, title, stages, total_steps, stream)


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class CompileProgress:
    """One compile's display: silent until ``delay`` seconds have passed."""

    def __init__(self, mode: str, title: str, stages: list[str], total_steps: int, stream,
                 delay: float | None = None):
        self.mode = mode
        self.title = title
        self.stages = stages
        self.total = max(total_steps, 1)
        self.stream = stream
        self.delay = DELAY if delay is None else delay
        self.lines: list[str] = []           # what log mode wrote (tests read it)
        self._start = time.perf_counter()
        self._stage, self._step, self._done, self._running = "", "", 0, 0
        self._logged_stage = ""
        self._bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._halt = threading.Event()           # set: the ticker ends (closed, or paused)
        self._start_ticker()
        _LIVE.add(self)

    def _start_ticker(self) -> None:
        self._halt.clear()
        self._ticker = threading.Thread(target=self._tick, name="xlac-progress", daemon=True)
        self._ticker.start()

    @property
    def wants_steps(self) -> bool:
        """Should the runner run a stage pass by pass (so the bar can count passes)?"""
        return self.mode == "bar"

    def __call__(self, stage: str, step: str, passes: int = 1) -> None:
        """``step`` starts: one pass, or a whole stage of ``passes`` passes."""
        with self._lock:
            self._done += self._running
            self._stage, self._step, self._running = stage, step, passes
            if self._done + passes > self.total:      # machine code in pieces: a step more
                self.total = self._done + passes
                if self._bar is not None:
                    self._bar.total = self.total
            self._show()

    def close(self) -> None:
        """The compile ended (or failed): stop the clock, finish the display."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._halt.set()
        with self._lock:
            seconds = time.perf_counter() - self._start
            if self._bar is not None:
                self._bar.n = self._done + self._running
                self._bar.set_postfix_str("done", refresh=False)
                self._bar.close()
            elif self.mode == "log" and self._logged_stage:
                self._write(f"xlac: {self.title}: compiled in {seconds:.1f} s")

    def _tick(self) -> None:
        while not self._halt.wait(_TICK):
            with self._lock:
                if not self._stop.is_set():
                    self._show()

    def _show(self) -> None:
        """Draw (under the lock) what is running, once the delay has passed."""
        seconds = time.perf_counter() - self._start
        if seconds < self.delay or not self._stage:
            return
        if self.mode == "log":
            if self._stage != self._logged_stage:
                self._logged_stage = self._stage
                what = "" if self._step == self._stage else f" ({self._step})"
                self._write(f"xlac: {self.title}: [{seconds:5.1f} s] stage "
                            f"{self._stage_number()} {self._stage}{what}: "
                            f"{self._done}/{self.total} passes done")
            return
        if self._bar is None:
            self._bar = _new_bar(self.title, self.total, self.stream, self._start)
        self._bar.n = self._done
        step = self._step.split("{")[0]        # a pass's options would crowd the line out
        self._bar.set_postfix_str(f"{self._stage_number()} {self._stage}: {step}",
                                  refresh=False)
        self._bar.refresh()

    def _stage_number(self) -> str:
        if self._stage in self.stages:
            return f"{self.stages.index(self._stage) + 1}/{len(self.stages)}"
        return f"?/{len(self.stages)}"

    def _write(self, line: str) -> None:
        self.lines.append(line)
        print(line, file=self.stream, flush=True)


@contextlib.contextmanager
def tickers_paused():
    """No display's clock thread runs inside (each ended, joined, then started
    again): a fork there copies no thread of theirs that held a lock (the
    stream's, the display's), so ``xlac.mlir.fork_is_safe`` may say yes."""
    with _PAUSING:
        paused = [display for display in list(_LIVE) if display._ticker.is_alive()]
        for display in paused:
            display._halt.set()
            display._ticker.join()
        try:
            yield
        finally:
            for display in paused:
                if not display._stop.is_set():
                    display._start_ticker()


register_pauser(tickers_paused)


def _new_bar(title: str, total: int, stream, start: float):
    from tqdm import tqdm  # here: only a long compile on a terminal needs it
    bar = tqdm(total=total, desc=f"xlac {title}", unit="pass", file=stream, leave=True,
               ncols=_size(stream)[0], nrows=_size(stream)[1], mininterval=0,
               delay=1e-3,                 # no "0%" line before this is positioned
               bar_format="{desc}: {percentage:3.0f}%|{bar:16}| {n_fmt}/{total_fmt} passes "
                          "[{elapsed}]{postfix}")
    bar.start_t -= time.perf_counter() - start     # the clock counts from the compile's start
    return bar


def _size(stream) -> tuple[int, int]:
    """The terminal's columns and lines; 100 x 24 where it says 0 (a pty nobody sized,
    as ``script`` or a CI runner makes: tqdm hides a bar below line 0)."""
    import os
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return 100, 24
    return size.columns or 100, size.lines or 24
