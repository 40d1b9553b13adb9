"""A user's script forks its isolated parser when its only other threads are
numpy's pool (``xlac.mlir.fork_is_safe``), and spawns one beside any other thread.
Each case runs in a fresh interpreter: what counts is what imported numpy first."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

COMPILE = """
import xlac
from xlac.frontend import isolation, worker_process
PROGRAM = (b"func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\\n"
           b"  %0 = stablehlo.add %a, %a : tensor<4xf32>\\n  return %0 : tensor<4xf32>\\n}\\n")
exe = xlac.compile(PROGRAM, options=xlac.Options().replace(cache_dir=None, progress="off"))
import numpy as np
assert exe.run(np.ones(4, np.float32))[0].tolist() == [2.0] * 4
print(type(isolation._WORKER._process).__name__)
"""
DEEP = """
try:
    isolation.vet(b"func.func @main(%a: " + b"tuple<" * 200000 + b"tensor<4xf32>"
                  + b">" * 200000 + b") {\\n  return\\n}\\n", "deep.mlir", timeout=60)
except xlac.CompileError as exc:
    print(str(exc).splitlines()[0])
"""


def _run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


def test_a_script_forks_its_parser_beside_numpys_pool_and_a_crash_is_still_an_error():
    lines = _run(COMPILE + DEEP)
    assert lines[0] == "ForkedWorker"
    assert lines[1].startswith("deep.mlir: error: the MLIR parser crashed (SIGSEGV)")


def test_a_script_with_a_thread_of_its_own_spawns_its_parser():
    started = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    assert _run(started + COMPILE)[0] == "Popen"


def test_numpy_imported_first_forks_beside_its_pool():
    assert _run("import numpy\n" + COMPILE)[0] == "ForkedWorker"


def test_numpy_imported_first_and_a_thread_of_the_scripts_spawns():
    started = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    assert _run("import numpy\n" + started + COMPILE)[0] == "Popen"


def test_a_thread_started_from_c_beside_numpys_pool_spawns():
    # a native thread Python does not know of (as a runtime's are) makes the count one too many
    native = ("import ctypes, ctypes.util\nlibc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
              "pause = ctypes.cast(libc.pause, ctypes.c_void_p)\n"
              "assert libc.pthread_create(ctypes.byref(ctypes.c_ulong()), None, pause, None) == 0\n")
    assert _run("import numpy\n" + native + COMPILE)[0] == "Popen"


def test_jax_running_spawns():
    pytest.importorskip("jax")
    # its runtime's threads started with the first array (its import alone starts none)
    lines = _run("import jax\nimport xlac.mlir\nprint(xlac.mlir.fork_is_safe())\n"
                 "jax.numpy.ones(1).block_until_ready()\nprint(xlac.mlir.fork_is_safe())\n")
    assert lines[:2] == ["True", "False"]


def test_the_threads_the_bindings_import_started_are_safe_and_one_more_is_not():
    lines = _run("import threading, time\nimport xlac.mlir\nprint(xlac.mlir.fork_is_safe())\n"
                 "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
                 "print(xlac.mlir.fork_is_safe())\n")
    assert lines[:2] == ["True", "False"]


def test_the_forked_parser_holds_no_descriptor_of_the_caller():
    # a pipe the script opened before its first compile ends when the script closes it
    lines = _run("import os, select\nreads, writes = os.pipe()\n" + COMPILE +
                 "os.close(writes)\nprint(select.select([reads], [], [], 10)[0] == [reads] "
                 "and os.read(reads, 1) == b'')\n")
    assert lines[:2] == ["ForkedWorker", "True"]


PIECE_WORKERS = """
import io, os
from xlac.mlir import ir
from xlac.targets.cpu import pieces, piece_worker
with piece_worker._context() as context:
    buffer = io.BytesIO()
    ir.Module.parse(piece_worker._WARM_UP, context).operation.write_bytecode(buffer)
piece = pieces.Piece("piece0", buffer.getvalue(), "key", ())
seed = pieces._Worker(siblings=1)
sibling, = seed.siblings
started = sibling.started()                      # its pid: its first frame
objects = {worker.compile(piece, 3)[0][:4] for worker in (seed, sibling)}
print(type(seed.process).__name__, started, objects == {b"\\x7fELF"})
for worker in (seed, sibling):
    worker.end_requests()
for worker in (seed, sibling):
    worker.close()
print(seed.process.returncode, sibling.process.poll() is not None)    # both ended
"""


def test_the_piece_workers_seed_is_forked_beside_numpys_pool_and_its_sibling_from_it():
    assert _run("import numpy\n" + PIECE_WORKERS)[:2] == ["ForkedWorker True True", "0 True"]


def test_the_piece_workers_seed_is_started_beside_a_thread_of_the_scripts():
    started = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    assert _run("import numpy\n" + started + PIECE_WORKERS)[:2] == ["Popen True True", "0 True"]
