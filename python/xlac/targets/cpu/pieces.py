"""Machine code for a big program in pieces, as XLA splits its LLVM module.

After ``xla-outline-kernels`` every kernel is an ``llvm.func`` of its own. A
program past ``PIECES_MIN_BYTES`` of LLVM dialect is split into a few
modules: its kernels shared out by a hash of their text (so a kernel lands
in the same piece whatever else changed), the entry alone. Each piece holds
its functions, declarations of the others it calls and the globals it uses.
Worker processes (one per core: one ExecutionEngine compiles on one thread
and holds the GIL) make each piece's object code at -O3; each object is
kept in the compilation cache under its piece's text, so a program that
changed in one layer compiles only the pieces that changed. The objects are
linked into one relocatable object (``cc -r``), which becomes the artifact
the cache stores and the library the program runs from.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

import xlac.pipes as pipes
from xlac.cpu_model import check_runnable, cpu_model
from xlac.errors import CompileError, Diagnostic, error
from xlac.mlir import ir
from xlac.targets.cpu import constant_data
from xlac.targets.cpu.constant_data import fill_table
from xlac.targets.cpu.piece_modules import Piece, bucket, late_copy, make_piece, with_local_callees
from xlac.targets.cpu.piece_modules import symbol_name as _name
from xlac.targets.cpu.piece_siblings import SiblingPipes, start_seed

PIECES_MIN_BYTES = 400_000       # LLVM-dialect text below which one JIT is quicker
LIBRARY_NAME, LIBRARY_ORIGIN = "libxlac_module.so", "<compiled program>"   # what the pieces link into


def is_big(module: ir.Module, min_bytes: int | None = None) -> bool:
    """Whether ``module`` is worth compiling in pieces: the size of its text,
    constants and resource blobs elided (printing the module whole walked every
    blob: 0.8 s per 64 MB of weights)."""
    from xlac.mlir import text_without_blobs
    from xlac.signature import CONSTANTS_ATTR
    return len(text_without_blobs(module, leave_out=CONSTANTS_ATTR)) >= \
        (PIECES_MIN_BYTES if min_bytes is None else min_bytes)


def likely_big(module: ir.Module) -> bool:
    """Whether a StableHLO ``module`` will likely be big in the LLVM dialect
    (measured 34-93x its size: N-body 34x, the transformer block 46x, attention
    93x): then workers start, and warm up, while the pipeline runs. At 30x the
    transformer block (10 KB, 473 KB of LLVM dialect) started them only when
    its first pieces were ready, and waited 0.2 s for them."""
    return is_big(module, PIECES_MIN_BYTES // 50)


def function_texts(module: ir.Module, entry: str, kind: str = "llvm.func", shareable=None,
                   expansion: int = 1, printed: dict[str, str] | None = None) -> dict[str, str] | None:
    """Each function of ``module`` printed once (its text sizes the program, and
    picks its piece and, with the rest of its piece, the piece's key), or None
    when the program cannot be split or is too small to be worth it (under
    ``PIECES_MIN_BYTES`` of LLVM dialect, ``expansion`` times the text of
    functions of ``kind``: one JIT is quicker): it has what a piece cannot share
    (a mutable global, a constructor), or only one function. ``printed``: texts
    of functions printed already, the same flags, the functions unchanged since."""
    top = [op.operation for op in module.body.operations]
    if any(not (shareable or _shareable)(op) for op in top):
        return None
    functions = {_name(op): op for op in top if op.name == kind and op.regions[0].blocks}
    if entry not in functions or len(functions) < 2:
        return None
    printed = printed or {}
    texts = {name: printed.get(name) or
             op.get_asm(enable_debug_info=False, use_local_scope=True, assume_verified=True)
             for name, op in functions.items()}
    return texts if sum(map(len, texts.values())) * expansion >= PIECES_MIN_BYTES else None


def split(module: ir.Module, entry: str, count: int, texts: dict[str, str]) -> list[Piece]:
    """The pieces of ``module``: the entry, then its other functions (``texts``,
    from ``function_texts``) in at most ``count`` pieces, by a hash of their text."""
    top = [op.operation for op in module.body.operations]
    local = {_name(op) for op in top if op.name == "llvm.func" and "linkage" in op.attributes
             and "internal" in str(op.attributes["linkage"])}
    buckets: dict[int, list[str]] = {}
    for name in sorted(texts):
        if name != entry and name not in local:
            buckets.setdefault(bucket(texts[name], count), []).append(name)
    groups = [[entry]] + [buckets[b] for b in sorted(buckets)]
    return [_piece(module, top, with_local_callees(members, texts, local), texts, f"piece{i}")
            for i, members in enumerate(groups)]


def _shareable(op: ir.Operation) -> bool:
    """Whether a copy of ``op`` in every piece that uses it means the same."""
    if op.name == "llvm.mlir.global":
        return "constant" in op.attributes
    return op.name not in ("llvm.mlir.global_ctors", "llvm.mlir.global_dtors")


def _piece(module: ir.Module, top: list[ir.Operation], members: list[str],
           texts: dict[str, str], name: str) -> Piece:
    """A module with ``members``' bodies and what they refer to."""
    return make_piece(module, top, members, texts, name, late_copy)


class _Worker:
    """One ``piece_worker`` process, kept for the next piece and the next compile.
    ``siblings`` more are forked from it once it has warmed up (``self.siblings``)."""

    def __init__(self, siblings: int = 0):
        self.errors = tempfile.TemporaryFile()      # its last words, if it dies
        pipes_of = [SiblingPipes() for _ in range(siblings)]
        try:
            self.process = start_seed(self.errors, _warm_up_lock(), ";".join(p.spec() for p in pipes_of),
                                          [fd for p in pipes_of for fd in p.theirs()])
        finally:
            for sibling_pipes in pipes_of:
                sibling_pipes.close_theirs()          # the worker holds them now
        self.siblings = [_Worker._of(p.sibling(), p.errors) for p in pipes_of]

    @classmethod
    def _of(cls, process, errors) -> _Worker:
        worker = cls.__new__(cls)
        worker.process, worker.errors, worker.siblings = process, errors, []
        return worker

    def started(self) -> bool:
        """Whether it runs: False for a sibling its seed could not fork."""
        return getattr(self.process, "started", lambda: True)()

    def compile(self, piece: Piece, opt_level: int) -> tuple[bytes, tuple[str, ...]]:
        """``piece``'s object code and what it leaves undefined."""
        header = json.dumps({"external": list(piece.external), "opt_level": opt_level,
                             "steps": list(piece.steps)})
        try:
            pipes.write_frames(self.process.stdin, header.encode(), piece.bytecode)
            status = self.process.stdout.read(1)
            payload = pipes.read_frames(self.process.stdout, 2) if status else None
        except (OSError, EOFError):
            status, payload = b"", None
        if payload is None:
            self.process.kill()
            last_words = self._last_words()
            self.close()
            raise CompileError([error(f"the process compiling {piece.name} of the program "
                                      "died (LLVM crashed, or it could not start)"),
                                *[Diagnostic("", "note", line) for line in last_words]],
                               "set XLAC_PIECES=0 to compile it in one piece, and please "
                               "report it with the input program")
        if status == b"\2":                   # a pass of the piece's lowering failed
            raise CompileError([Diagnostic(*d) for d in json.loads(payload[0])])
        if status != b"\0":
            raise CompileError(error(f"the LLVM JIT rejected {piece.name} of the program: "
                                     f"{payload[0].decode(errors='replace')}"))
        return payload[0], tuple(json.loads(payload[1]))

    def _last_words(self) -> list[str]:
        self.process.wait()
        self.errors.seek(0)
        lines = self.errors.read()[-4000:].decode(errors="replace").strip().splitlines()
        return lines[-3:]

    def alive(self) -> bool:
        return self.process.poll() is None

    def end_requests(self) -> None:
        """Close its input: it exits once its siblings have (a seed reaps them)."""
        try:
            self.process.stdin.close()
        except OSError:                      # a dead worker's pipe: nothing to flush into
            pass

    def close(self) -> None:
        """End the worker: it exits when its input closes."""
        for stream in (self.process.stdin, self.process.stdout, self.errors):
            try:
                stream.close()
            except OSError:                  # a dead worker's pipe: nothing to flush into
                pass
        try:
            self.process.wait(timeout=2)
        except Exception:  # noqa: BLE001 - it is going away either way
            self.process.kill()


@functools.cache
def _warm_up_lock() -> str:
    """The file this process's workers lock in turn while they warm up."""
    path = Path(tempfile.gettempdir()) / f"xlac-warm-up-{os.getpid()}.lock"
    path.touch()
    atexit.register(path.unlink, missing_ok=True)
    return str(path)


_IDLE: list[_Worker] = []
_IDLE_LOCK = threading.Lock()
_RETURNED = threading.Condition(_IDLE_LOCK)   # notified as a worker lent for a job comes back
_OUT_FOR_JOBS = [0]                  # workers lent by ``lend_for_job``, not yet ``returned``


@atexit.register
def _close_workers() -> None:
    with _IDLE_LOCK:
        for worker in _IDLE:                 # every input first: a seed waits for its siblings
            worker.end_requests()
        for worker in _IDLE:
            worker.close()
        _IDLE.clear()


def start_workers(count: int) -> None:
    """Have ``count`` workers idle (starting: their imports run meanwhile): one
    started, the others forked from it once it is warmed up (``piece_siblings``)."""
    with _IDLE_LOCK:
        for dead in [w for w in _IDLE if not w.alive()]:
            dead.close()
        alive = [w for w in _IDLE if w.alive()]
        started = []
        if count > len(alive) and hasattr(os, "pidfd_open"):     # Linux: siblings are watched so
            seed = _Worker(siblings=count - len(alive) - 1)
            started = [seed, *seed.siblings]
        elif count > len(alive):
            started = [_Worker() for _ in range(count - len(alive))]
        _IDLE[:] = alive + started


def take_idle() -> _Worker | None:
    """An idle worker that runs, taken (``give_back`` it), or None: none is idle."""
    with _IDLE_LOCK:
        ready = [w for w in _IDLE if w.alive() and w.started()]
        if ready:
            _IDLE.remove(ready[-1])
        return ready[-1] if ready else None


def give_back(worker: _Worker) -> None:
    with _IDLE_LOCK:
        _IDLE.append(worker)


def lend_for_job() -> _Worker | None:
    """``take_idle``, for a job that ``returned`` it whatever happens (a thread's
    ``finally``): until then a piece waits for it rather than start a worker."""
    worker = take_idle()
    if worker is not None:
        with _IDLE_LOCK:
            _OUT_FOR_JOBS[0] += 1
    return worker


def returned(worker: _Worker) -> None:
    """A worker ``lend_for_job`` lent, back (idle if it still runs)."""
    with _RETURNED:
        _OUT_FOR_JOBS[0] -= 1
        if worker.alive():
            _IDLE.append(worker)
        _RETURNED.notify_all()


def _compile_on_worker(piece: Piece, opt_level: int) -> tuple[bytes, tuple[str, ...]]:
    """``piece`` compiled by an idle worker (a new one if none is idle and none
    is out on a job: then the piece waits for it)."""
    with _RETURNED:
        _RETURNED.wait_for(lambda: _IDLE or not _OUT_FOR_JOBS[0])
        worker = _IDLE.pop() if _IDLE else None
    if worker is not None and not (worker.alive() and worker.started()):
        worker.close()                       # died, or a sibling its seed could not fork
        worker = None
    worker = worker or _Worker()
    try:
        return worker.compile(piece, opt_level)
    finally:                                 # one that answered an error serves the next piece
        if worker.alive():
            with _RETURNED:
                _IDLE.append(worker)
                _RETURNED.notify_all()


def piece_index(name: str) -> int:
    """A piece's place among its program's (``piece<i>``): the link's order."""
    return int(name.removeprefix("piece"))


def largest_first(groups: list[list[str]], texts: dict[str, str]) -> list[int]:
    """The indices of ``groups`` (of function names) by their text, largest
    first: the order pieces are made and handed out in, which balances the
    workers (the largest last would leave one worker alone at the end)."""
    size = lambda i: sum(len(texts[name]) for name in groups[i])
    return sorted(range(len(groups)), key=lambda i: (-size(i), i))


def compile_pieces(pieces: Iterable[Piece], workdir: Path, workers: int, opt_level: int = 3,
                   cache=None) -> tuple[Path, set[str]]:
    """One relocatable object of every piece's code, and what it leaves undefined;
    pieces in ``cache`` (an ``xlac.cache.keys.ContentCache``, keyed by each
    piece's text) are not compiled. Each piece goes to a worker as soon as
    ``pieces`` gives it: where they are made one at a time (``early_pieces.
    made_largest_first``) the workers compile the first while the rest are
    made; a list is handed out largest first (by bytecode)."""
    from concurrent.futures import ThreadPoolExecutor

    from xlac.targets.cpu.piece_worker import packed, unpacked
    if isinstance(pieces, list):
        pieces = sorted(pieces, key=lambda p: -len(p.bytecode))
    objects: dict[str, tuple[bytes, tuple[str, ...]]] = {}
    made: list[Piece] = []
    with ThreadPoolExecutor(workers) as threads:        # each waits on a process
        compiling = {}
        for piece in pieces:
            made.append(piece)
            found = cache.get(piece.key, f"machine code {piece.name}") if cache is not None else None
            if found is not None:         # a lowered piece's undefined symbols are kept with it
                objects[piece.name] = unpacked(found) if piece.steps else (found, piece.external)
            else:
                compiling[piece.name] = threads.submit(_compile_on_worker, piece, opt_level)
        for piece in made:
            if piece.name in compiling:
                code, external = objects[piece.name] = compiling[piece.name].result()
                if cache is not None:
                    kept = packed(code, external) if piece.steps else code
                    cache.put(piece.key, lambda b=kept: b, f"machine code {piece.name}")
    paths = []
    for piece in sorted(made, key=lambda p: piece_index(p.name)):
        path = workdir / f"{piece.name}.o"
        path.write_bytes(objects[piece.name][0])
        paths.append(str(path))
    combined = workdir / "pieces.o"
    _link_relocatable(paths, combined)
    return combined, {name for _, external in objects.values() for name in external}


def _link_relocatable(paths: list[str], output: Path) -> None:
    from xlac.targets.cpu.serialize import c_compiler
    done = subprocess.run([c_compiler(), "-r", "-nostdlib", "-o", str(output), *paths],
                          capture_output=True, text=True)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-4:]
        raise CompileError([error(f"linking the pieces failed: {line}") for line in detail]
                           or [error("linking the pieces failed")])


class PiecesFunction:
    """A program compiled in pieces, called like ``CpuFunction``: it runs from
    the library its linked pieces make (the artifact the cache keeps)."""

    grid = None                      # SPMD programs take the JIT (their MPI shim)
    stage_texts: dict = {}
    mpi_library = None
    clock = None

    def __init__(self, pieces: Iterable[Piece], entry: str, signature, cpu_features, workers: int,
                 cache=None, wrapper=None, constants: tuple = (), cache_dir=None):
        from xlac.targets.cpu.library import LibraryFunction, open_library
        from xlac.targets.cpu.serialize import EntryObject, link_code
        with tempfile.TemporaryDirectory(prefix="xlac-pieces-") as workdir:
            combined, undefined = compile_pieces(pieces, Path(workdir), workers, cache=cache)
            self._object = combined.read_bytes()
            # what the pieces call and do not define: no nm run to find LAPACK's calls
            undefined = tuple(sorted(undefined))
            entry_object = EntryObject(entry, combined, signature, undefined=undefined,
                                       constants=constants, cache_dir=cache_dir)
            # the constants stay out of the library: its loader (here, and a
            # cache hit's) points the code's table at bytes it owns
            library_bytes, meta, _ = link_code([entry_object], "xlac", LIBRARY_NAME,
                                               LIBRARY_ORIGIN, Path(workdir), cpu_features,
                                               wrapper_object=wrapper, constants_beside=True)
        self._runnable = not cpu_model("host").lacks(cpu_features)   # else: refused, not SIGILL
        self._features = cpu_features
        self.constants = constants           # the code reads these arrays; xla-compile links them
        symbol = meta["entries"][entry]["symbol"]
        library = open_library(library_bytes)
        if constants:
            fill_table(library, symbol, [c.address for c in constants], LIBRARY_ORIGIN)
        self._library = LibraryFunction(library, symbol, len(signature.inputs),
                                        constant_data.PackedLater(library_bytes, meta, {entry: constants}))

    def __call__(self, pointers: list[int]) -> None:
        if not self._runnable:
            check_runnable(self._features)
        self._library(pointers)

    def array_caller(self, count: int):
        """The library's ``array_caller``; None where the code must not run here."""
        return self._library.array_caller(count) if self._runnable else None

    def write_object(self, path: str) -> None:
        """The linked pieces as one relocatable object (``xla-compile`` links it)."""
        Path(path).write_bytes(self._object)

    def serializer(self, entry: str, signature):
        return self._library.serializer(entry, signature)

    def start_collectives(self) -> None:
        pass

