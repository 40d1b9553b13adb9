"""The NVPTX worker process: LLVM IR kernels in, PTX out (``xlac.targets.cuda.nvptx``).

Started once per compiling process by ``xlac.targets.cuda.ptx_isolation`` and
reused. Each request is one frame (``xlac.pipes``): JSON ``{"kernels": {name:
LLVM IR text}}``; each answer two frames: a JSON header (``{"ok": true}`` or
the CompileError's diagnostics and hint) and the PTX. An abort in LLVM kills
only this process; the caller says which kernel did it.
"""

from __future__ import annotations

import json
import os
import sys

import xlac.pipes as pipes


def serve() -> None:
    reader, writer = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                      # anything printed goes to stderr, never into the frames
    from xlac.errors import CompileError
    from xlac.targets.cuda.nvptx import compile_ptx
    while (request := pipes.read_frame(reader)) is not None:
        kernels = json.loads(request)["kernels"]
        try:
            ptx, header = compile_ptx(kernels).encode(), {"ok": True}
        except CompileError as exc:
            ptx, header = b"", {"ok": False, "diagnostics": exc.diagnostics, "hint": exc.hint}
        except Exception as exc:  # noqa: BLE001 - any failure is answered, the worker lives on
            ptx, header = b"", {"ok": False, "diagnostics": [f"error: NVPTX code generation "
                                                             f"failed: {type(exc).__name__}: {exc}"],
                                "hint": ""}
        pipes.write_frames(writer, json.dumps(header).encode(), ptx)


if __name__ == "__main__":
    serve()
    sys.exit(0)
