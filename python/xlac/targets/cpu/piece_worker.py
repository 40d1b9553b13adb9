"""The process that makes pieces' object code (``xlac.targets.cpu.pieces``).

Requests come on stdin, answers go on stdout, in frames (``xlac.pipes``). A
request is two frames (a JSON header, the piece's bytecode); an answer is one
status byte (0: object code, 1: an error message) and one frame. A plain
process of its own, not ``multiprocessing``: that would import the user's
``__main__`` again.
"""

from __future__ import annotations

import functools
import io
import json
import os
import select
import sys
import tempfile
from pathlib import Path

import xlac.pipes as pipes

_DUMMY_ADDRESS = 0x1000           # what a piece's outside symbols resolve to: never run

# A serving worker's ExecutionEngines whose objects were answered, freed once it is idle:
# an engine's destructor runs the JIT's deinitializers, which compiles the ORC platform's
# own module (2.7-2.9 ms of CPU per engine, half a tiny piece's cost), in the compile's
# critical path when done as each piece ends. None: freed as they go (the compiling process).
_RETIRED: list | None = None
IDLE_S = 0.02                     # no request for this long: the compile is over, free them
RETIRED_MAX = 64                  # a compile of more pieces frees them as it goes


def compile_piece(bytecode: bytes, external: tuple[str, ...], opt_level: int) -> bytes:
    """Object code of one piece, its relocations to ``external`` left open."""
    from xlac.mlir import ir
    with _context() as context:
        return _object_code(ir.Module.parse(bytecode, context), external, opt_level)


def lower_and_compile(bytecode: bytes, steps: list[str], opt_level: int
                      ) -> tuple[bytes, tuple[str, ...]]:
    """Object code of a piece split after outlining (``early_pieces``): the rest of
    the llvm stage (``steps``) run on it first; and what it leaves undefined."""
    from xlac.mlir import ir
    from xlac.pipeline.pass_manager import run_passes
    from xlac.signature import CONSTANTS_ATTR
    with _context() as context:
        module = ir.Module.parse(bytecode, context)
        given = {_name(op) for op in module.body.operations if "sym_name" in op.operation.attributes}
        run_passes(module, steps, verify_each=False, built=_pass_manager(context, tuple(steps)))
        _keep_added_functions_local(module, given)
        if CONSTANTS_ATTR in module.operation.attributes:    # the table's length, read
            del module.operation.attributes[CONSTANTS_ATTR]
        external = tuple(_name(op) for op in module.body.operations if _undefined(op.operation))
        return _object_code(module, external, opt_level), external


def scheduled(bytecode: bytes) -> tuple[bytes, bytes]:
    """xla-apply-schedules' interpreter and cleanup on a half of a module's kernels
    (``schedule_halves``): its bytecode after them, or why they failed."""
    from xlac.mlir import ir
    from xlac.pipeline.schedule_halves import schedule_half
    with _context() as context:
        module = ir.Module.parse(bytecode, context).operation
        why = schedule_half(module)
        if why:
            return b"", why.encode()
        buffer = io.BytesIO()
        module.write_bytecode(buffer)
        return buffer.getvalue(), b""


@functools.lru_cache(maxsize=4)
def _pass_manager(context, steps: tuple[str, ...]):
    """The pass manager of ``steps``, built once per worker (the warm-up's
    serves the compile's pieces when the steps are the same): building it,
    every Python pass configured from its options, cost 2-4 ms of each piece."""
    from xlac.pipeline.pass_manager import build_pass_manager
    return build_pass_manager(context, list(steps))


def _keep_added_functions_local(module, given: set[str]) -> None:
    """Functions the steps defined in this piece (``xla-expm1-to-libm``'s helpers)
    internal: every piece that needs one defines its own copy, and global
    copies would clash when the pieces are linked."""
    from xlac.mlir import ir
    internal = ir.Attribute.parse("#llvm.linkage<internal>", module.context)
    for op in module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and op.regions[0].blocks and _name(op) not in given:
            op.attributes["linkage"] = internal


def _exported(op) -> bool:
    """A function this piece defines for others (the JIT looks up no internal one)."""
    return op.name == "llvm.func" and bool(op.regions[0].blocks) \
        and not ("linkage" in op.attributes and "internal" in str(op.attributes["linkage"]))


def _name(op) -> str:
    from xlac.mlir import ir
    return ir.StringAttr(op.attributes["sym_name"]).value


def _undefined(op) -> bool:
    """A function declared and not defined, or data declared (a constant's table)."""
    if op.name == "llvm.func":
        return not op.regions[0].blocks
    return op.name == "llvm.mlir.global" and "value" not in op.attributes \
        and not op.regions[0].blocks


def _object_code(module, external: tuple[str, ...], opt_level: int) -> bytes:
    """``module``'s object code at ``opt_level``, its relocations to ``external`` open."""
    import ctypes

    from xlac.mlir import ExecutionEngine
    from xlac.targets.cpu.libraries import openmp_library
    openmp_library()                                  # the __kmpc_* calls omp.parallel makes
    defined = [_name(op.operation) for op in module.body.operations if _exported(op.operation)]
    engine = ExecutionEngine(module, opt_level=opt_level, enable_pic=True)
    for name in external:                         # linked later, with the other pieces
        engine.raw_register_runtime(name, ctypes.c_void_p(_DUMMY_ADDRESS))
    engine.raw_lookup(defined[0])                 # compiles the whole module
    with tempfile.TemporaryDirectory(prefix="xlac-piece-") as workdir:
        path = Path(workdir) / "piece.o"
        engine.dump_to_object_file(str(path))     # taken before linking: relocatable
        code = path.read_bytes()
    if _RETIRED is not None and len(_RETIRED) < RETIRED_MAX:
        _RETIRED.append(engine)                   # freed when idle (``_free_retired_when_idle``)
    return code


def _free_retired_when_idle(requests) -> None:
    """Free the retired engines unless a request comes within ``IDLE_S``: the
    next piece of a compile comes at once, so they are freed once its pieces
    are done (while the compiling process links them), not between them."""
    if _RETIRED and not select.select([requests], [], [], IDLE_S)[0]:
        _RETIRED.clear()


@functools.cache
def _context():
    """One context for every piece: a new one (its dialects loaded, a pass run
    to load CHLO) took 4 ms of each piece's 16 ms of fixed cost."""
    from xlac.context import new_context
    return new_context()


def _end_with_parent() -> None:
    """A worker whose compile was abandoned (the parent killed) must not go on."""
    import ctypes
    import signal
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)         # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


_WARM_UP = "llvm.func @xlac_warm_up(%a: i64) -> i64 {\n  llvm.return %a : i64\n}\n"


def _warm_up() -> None:
    """Import the bindings and make one tiny object before the first request:
    the worker starts while the passes run, and its imports and LLVM's first
    set-up (0.1-0.2 s) then overlap them instead of delaying the first piece."""
    from xlac.mlir import ir
    with _context() as context:
        buffer = io.BytesIO()
        ir.Module.parse(_WARM_UP, context).operation.write_bytecode(buffer)
    compile_piece(buffer.getvalue(), (), 3)
    lower_and_compile(_TINY_KERNEL_MODULE, _lowering_steps(), 3)


# a kernel module as a piece is before its lowering: the passes imported and run once
_TINY_KERNEL_MODULE = (
    b"func.func @main(%a: memref<8xf32>) {\n"
    b"  %c = arith.constant 1.0 : f32\n"
    b"  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)\n"
    b"  return\n}\n")


def _lowering_steps() -> list[str]:
    """The llvm stage's steps after ``xla-outline-kernels`` as a compile with
    the environment's options makes them for this host: the pass manager the
    warm-up builds for them is the one that compile's pieces run."""
    from xlac.options import Options
    from xlac.targets.cpu.pipeline import KERNELS_OUTLINED, llvm_stage
    steps = llvm_stage("main", Options.from_env())
    return steps[steps.index(KERNELS_OUTLINED) + 1:]


def packed(code: bytes, external: tuple[str, ...]) -> bytes:
    """A lowered piece's object code as the cache keeps it: what it leaves
    undefined (known only once lowered) in front."""
    head = json.dumps(list(external)).encode()
    return len(head).to_bytes(4, "little") + head + code


def unpacked(blob: bytes) -> tuple[bytes, tuple[str, ...]]:
    """``packed``'s code and undefined symbols."""
    size = int.from_bytes(blob[:4], "little")
    return bytes(blob[4 + size:]), tuple(json.loads(bytes(blob[4:4 + size])))


def _warm_up_in_turn(lock_path: str | None) -> None:
    """``_warm_up`` holding ``lock_path`` locked: the workers of one compile
    take turns, so at most one competes with the passes for the cores (two at
    once on 2 cores made xla-fuse take 0.17 s instead of 0.08 on BERT)."""
    if lock_path is None:
        _warm_up()
        return
    import fcntl
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)          # released when the file closes
        _warm_up()


def _without_numpy() -> None:
    """Keep numpy out of this process: the bindings import it (a third of a
    worker's start-up CPU, 0.1 s, paid by every compile in pieces) only to
    offer builders of dense attributes from Python lists, which compiling a
    piece never calls; without numpy they leave those out."""
    sys.modules.setdefault("numpy", None)           # None: `import numpy` raises ImportError


def serve(lock_path: str | None = None, sibling_spec: str = "", requests=None, answers=None) -> None:
    """Answer requests until they end; first, warmed up, fork a sibling
    worker on each set of pipes ``sibling_spec`` names. Started (``python -m``):
    requests on stdin, answers on stdout; forked (``serve_forked``): the streams given."""
    _end_with_parent()
    if requests is None:
        _without_numpy()
        requests, answers = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                     # whatever LLVM prints goes to stderr, not into a frame
    try:
        _warm_up_in_turn(lock_path)
    except Exception:  # noqa: BLE001 - a real request reports whatever is wrong
        pass
    siblings = _sibling_pipes(sibling_spec)
    forked = _fork_siblings(siblings, answers)
    _answer(*(forked or (requests, answers)))
    _reap_siblings()


def serve_forked(lock_path: str | None, sibling_spec: str, requests, answers) -> None:
    """``serve`` in a worker forked from the compiling process (``pieces._Worker``):
    its imports are the caller's already. The caller's objects are frozen out
    of the collector: a collection would write to every page of them, copying
    the pages the fork shares."""
    import gc
    gc.freeze()
    serve(lock_path, sibling_spec, requests, answers)


def _sibling_pipes(spec: str) -> list[tuple[int, int, int]]:
    """``"requests,answers,errors;..."``: each sibling's descriptors."""
    return [tuple(int(fd) for fd in one.split(",")) for one in spec.split(";") if one]


def _fork_siblings(siblings: list[tuple[int, int, int]], answers):
    """Fork a worker on each sibling's pipes: its imports, context and LLVM's
    set-up are this one's, made once (each worker's start was 0.13-0.24 s of
    CPU; a fork is a few ms). Returns, in a forked sibling, its requests and
    answers streams; None here. Only a process of one thread may fork (the copy gets only the
    calling thread, and the locks others held): one with more closes the
    pipes, and the compiling process starts those workers itself."""
    compiling_process = os.getppid()
    if siblings and _threads() == 1:
        for index in range(len(siblings)):
            if os.fork() == 0:
                return _become_sibling(siblings, index, answers, compiling_process)
    for fds in siblings:
        for fd in fds:
            os.close(fd)
    return None


def _threads() -> int:
    """This process's threads (0: unknown, where there is no /proc)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def _become_sibling(siblings: list[tuple[int, int, int]], index: int, seed_answers,
                    compiling_process: int):
    """In a forked sibling: its own pipes as stdin and stderr (and stdout),
    every other worker's closed (so their ends see their writers only), its pid
    announced. It ends when its requests close, as the seed does, or when the
    compiling process ends; its seed reaps it, so its CPU is counted with the
    compiling process's children."""
    requests, answers, errors = siblings[index]
    os.setsid()           # a session, so a scheduler group, of its own, as a started worker's:
    seed_answers.close()  # in its seed's, the two shared one core's time (1.5x the wall)
    os.dup2(requests, 0)
    os.dup2(errors, 2)
    os.dup2(2, 1)
    for fds in siblings:
        for fd in fds:
            if fd != answers:
                os.close(fd)
    stream = os.fdopen(answers, "wb")
    pipes.write_frames(stream, str(os.getpid()).encode())
    _end_with(compiling_process)
    return os.fdopen(0, "rb"), stream   # not sys.stdin: a forked seed's is the caller's stream


def _end_with(pid: int) -> None:
    """End when process ``pid`` does, as a started worker ends with its parent:
    a sibling's parent is its seed (whose LLVM abort must not end it), so a
    thread watches the compiling process through a pidfd (it exits once it
    has the GIL: at once when idle, after the piece it is on otherwise)."""
    import threading
    try:
        watched = os.pidfd_open(pid)
    except ProcessLookupError:              # gone already
        os._exit(0)
    except (OSError, AttributeError):       # no pidfds: the end of its requests it is
        return

    def watch() -> None:
        select.select([watched], [], [])
        os._exit(0)
    threading.Thread(target=watch, daemon=True, name="end-with-compiling-process").start()


def _reap_siblings() -> None:
    """Wait for the siblings this worker forked (they end as their requests close)."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


def _answer(requests, answers) -> None:
    global _RETIRED
    _RETIRED = []
    while True:
        _free_retired_when_idle(requests)
        frames = pipes.read_frames(requests, 2)
        if frames is None:
            return
        request, bytecode = json.loads(frames[0]), frames[1]
        try:
            status, payload = 0, _compiled(request, bytecode)
        except Exception as exc:  # noqa: BLE001 - reported to the compiling process
            status, payload = _failure(exc)
        answers.write(bytes([status]))
        pipes.write_frames(answers, *payload)


def _compiled(request: dict, bytecode: bytes) -> tuple[bytes, bytes]:
    """The answer's frames: the object code, then the symbols it leaves undefined
    (a ``schedule`` request: the scheduled module's bytecode, then why it failed)."""
    if request.get("schedule"):
        return scheduled(bytecode)
    if request.get("micro_kernels"):                  # kernel_builds.build_ahead's
        from xlac.targets.cpu.micro_kernels import built_on_worker
        return built_on_worker(request["micro_kernels"])
    if request.get("steps"):
        code, external = lower_and_compile(bytecode, request["steps"], request["opt_level"])
    else:
        external = tuple(request["external"])
        code = compile_piece(bytecode, external, request["opt_level"])
    return code, json.dumps(list(external)).encode()


def _failure(exc: Exception) -> tuple[int, tuple[bytes, bytes]]:
    """Status 2 and the diagnostics of a pass's CompileError; 1 and a message otherwise."""
    from xlac.errors import CompileError
    if isinstance(exc, CompileError):
        records = [[r.location, r.severity, r.message] for r in exc.records]
        if exc.hint:
            records.append(["", "note", exc.hint])
        return 2, (json.dumps(records).encode(), b"[]")
    return 1, (f"{type(exc).__name__}: {exc}".encode(), b"[]")


if __name__ == "__main__":
    serve(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None, sys.argv[2] if len(sys.argv) > 2 else "")
