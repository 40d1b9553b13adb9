"""An idle piece worker lent to xla-apply-schedules for half of its kernels
(``xlac.passes.cpu.plans.schedule_halves``): the pass runs while the workers
a big program started (``CpuCompiler.ingested``) wait for their pieces."""

from __future__ import annotations

import json

import xlac.pipes as pipes
from xlac.targets.cpu import pieces


class LentWorker:
    """A worker taken from the idle ones for one request, back once answered."""

    def __init__(self, worker):
        self.worker = worker

    def send(self, bytecode: bytes) -> None:
        try:
            pipes.write_frames(self.worker.process.stdin, json.dumps({"schedule": True}).encode(), bytecode)
        except OSError:
            pass                              # receive finds it dead

    def receive(self) -> tuple[bytes, str]:
        """The scheduled module's bytecode, or why not ("": none)."""
        try:
            status = self.worker.process.stdout.read(1)
            frames = pipes.read_frames(self.worker.process.stdout, 2) if status else None
        except (OSError, EOFError):
            frames = None
        if frames is None:                    # died: the whole module is scheduled here
            self.worker.process.kill()
            self.worker.close()
            return b"", "the piece worker died"
        pieces.give_back(self.worker)
        if status != b"\0":
            return b"", frames[0].decode(errors="replace")
        return frames[0], frames[1].decode()


def lend() -> LentWorker | None:
    """An idle, started worker, or None (none was started: a small program)."""
    worker = pieces.take_idle()
    return LentWorker(worker) if worker is not None else None

