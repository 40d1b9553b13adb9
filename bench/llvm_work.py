"""Where a big program's LLVM work goes: its pieces, their functions, and what LLVM does with each.

    python bench/llvm_work.py                               # hf_bert, hf_gpt2, hf_vit
    python bench/llvm_work.py --models hf_vit --levels 3,2  # and whether -O2 makes other code

The program is compiled once (cache off) and the pieces its workers get are kept; then,
in this process, each piece is lowered as its worker lowers it (the llvm stage's rest) and
compiled by an ExecutionEngine at each ``--levels``, timed in CPU seconds: the ExecutionEngine's
creation (translation to LLVM IR and the IR pipeline), the lookup that makes the machine
code, and the engine's destruction (the JIT's deinitializers). Per piece: functions, LLVM
dialect bytes, lowering and LLVM CPU, object bytes, and whether another level makes another
object. Over the program: its functions, how many are distinct by text (the name left out)
and distinct once every number is left out too (kernels that differ only in a shape or
constant: what sharing them with the numbers as arguments could save), and the largest
functions' machine code (``nm -S``; a kernel's ``omp.parallel`` body is a function of its own,
``<kernel>..omp_par``, counted with it).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import re
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

MODELS = Path(__file__).resolve().parent.parent.parent / "shared" / "models"
clock = time.process_time
_NUMBER = re.compile(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b")


def captured_pieces(text: str) -> list:
    """The pieces a compile of ``text`` hands its workers (cache off)."""
    import xlac
    from xlac.targets.cpu import pieces
    captured: list = []
    real = pieces.compile_pieces

    def keep(found, *args, **kwargs):
        made = list(found)        # the pieces come as a generator, made while the first compile
        captured.extend(made)
        return real(made, *args, **kwargs)
    pieces.compile_pieces = keep
    try:
        xlac.compile(text, cache=False)
    finally:
        pieces.compile_pieces = real
    return captured


def lowered(piece, context):
    """``piece`` as its worker compiles it: its LLVM-dialect module and what it leaves undefined."""
    from xlac.mlir import ir
    from xlac.pipeline.pass_manager import run_passes
    from xlac.signature import CONSTANTS_ATTR
    from xlac.targets.cpu import piece_worker as worker
    module = ir.Module.parse(piece.bytecode, context)
    if piece.steps:
        given = {worker._name(op) for op in module.body.operations if "sym_name" in op.operation.attributes}
        run_passes(module, list(piece.steps), verify_each=False,
                   built=worker._pass_manager(context, tuple(piece.steps)))
        worker._keep_added_functions_local(module, given)
        if CONSTANTS_ATTR in module.operation.attributes:
            del module.operation.attributes[CONSTANTS_ATTR]
    external = tuple(worker._name(op) for op in module.body.operations if worker._undefined(op.operation))
    return module, external


def function_texts(module) -> dict[str, str]:
    from xlac.targets.cpu.piece_worker import _name
    return {_name(op.operation): op.operation.get_asm(enable_debug_info=False, use_local_scope=True,
                                                      assume_verified=True)
            for op in module.body.operations
            if op.operation.name == "llvm.func" and op.operation.regions[0].blocks}


def engine_phases(module, external: tuple[str, ...], level: int) -> tuple[dict[str, float], bytes]:
    """CPU seconds of an ExecutionEngine's creation, lookup (machine code) and
    destruction on ``module``, and the object it makes (as ``piece_worker._object_code``)."""
    from xlac.mlir import ExecutionEngine
    from xlac.targets.cpu.piece_worker import _DUMMY_ADDRESS, _exported, _name
    defined = [_name(op.operation) for op in module.body.operations if _exported(op.operation)]
    start = clock()
    engine = ExecutionEngine(module, opt_level=level, enable_pic=True)
    created = clock()
    for name in external:
        engine.raw_register_runtime(name, ctypes.c_void_p(_DUMMY_ADDRESS))
    engine.raw_lookup(defined[0])
    looked_up = clock()
    with tempfile.TemporaryDirectory(prefix="xlac-llvm-work-") as workdir:
        path = Path(workdir) / "piece.o"
        engine.dump_to_object_file(str(path))
        code = path.read_bytes()
    dumped = clock()
    del engine
    return {"create": created - start, "lookup": looked_up - created,
            "destroy": clock() - dumped}, code


def code_sizes(code: bytes) -> dict[str, int]:
    """Machine-code bytes per function of an object, a kernel's ``..omp_par`` bodies counted with it."""
    with tempfile.NamedTemporaryFile(suffix=".o") as handle:
        handle.write(code)
        handle.flush()
        listing = subprocess.run(["nm", "-S", "--defined-only", handle.name],
                                 capture_output=True, text=True).stdout
    sizes: dict[str, int] = defaultdict(int)
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            sizes[parts[3].split("..omp_par")[0]] += int(parts[1], 16)
    return dict(sizes)


def groups(texts: dict[str, str], numbers: bool) -> list[list[str]]:
    """Functions of the same text, names left out (and every number, unless ``numbers``)."""
    by_key: dict[str, list[str]] = defaultdict(list)
    for name, text in texts.items():
        body = text.split("(", 1)[1]
        body = body if numbers else _NUMBER.sub("N", body)
        by_key[hashlib.sha256(body.encode()).hexdigest()].append(name)
    return list(by_key.values())


def report(name: str, levels: list[int]) -> None:
    from xlac.targets.cpu import piece_worker as worker
    pieces = captured_pieces((MODELS / f"{name}.mlir").read_text())
    texts: dict[str, str] = {}
    sizes: dict[str, int] = {}
    totals: dict[str, float] = defaultdict(float)
    print(f"## {name}: {len(pieces)} pieces")
    print("| piece | functions | LLVM dialect kB | lowering s | " +
          " | ".join(f"O{lv} create / lookup / destroy s" for lv in levels) + " | object bytes | other levels |")
    print("|---" * (6 + len(levels)) + "|")
    for piece in pieces:
        with worker._context() as context:
            start = clock()
            module, external = lowered(piece, context)
            lowering = clock() - start
            piece_texts = function_texts(module)
            text = module.operation.get_asm(enable_debug_info=False)
            from xlac.mlir import ir
            phases, objects = [], []
            for level in levels:
                spent, code = engine_phases(ir.Module.parse(text, context), external, level)
                phases.append(spent)
                objects.append(code)
        texts.update(piece_texts)
        sizes.update(code_sizes(objects[0]))
        totals["lowering"] += lowering
        for level, spent in zip(levels, phases):
            for phase, seconds in spent.items():
                totals[f"O{level} {phase}"] += seconds
        differ = [f"O{lv}: {len(c)} bytes" for lv, c in zip(levels[1:], objects[1:]) if c != objects[0]]
        print(f"| {piece.name} | {len(piece_texts)} | {sum(map(len, piece_texts.values())) / 1e3:.0f} | "
              f"{lowering:.3f} | " + " | ".join(
                  f"{p['create']:.3f} / {p['lookup']:.3f} / {p['destroy']:.4f}" for p in phases) +
              f" | {len(objects[0])} | {', '.join(differ) or 'same'} |")
    print("\ntotals (CPU s): " + ", ".join(f"{k} {v:.3f}" for k, v in totals.items()))
    exact, near = groups(texts, True), groups(texts, False)
    print(f"functions {len(texts)}, distinct by text {len(exact)}, distinct leaving numbers out "
          f"{len(near)}; machine code {sum(sizes.values())} bytes")
    for group in near:
        if len(group) > 1:
            print(f"  alike but for numbers: {', '.join(sorted(group))} "
                  f"({', '.join(str(sizes.get(n, 0)) for n in sorted(group))} bytes of code)")
    print("largest functions (machine code bytes): " + ", ".join(
        f"{n} {s}" for n, s in sorted(sizes.items(), key=lambda item: -item[1])[:8]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="hf_bert,hf_gpt2,hf_vit", help="names of ../shared/models")
    parser.add_argument("--levels", default="3", help="LLVM opt levels, the first the one compared against")
    args = parser.parse_args()
    for name in args.models.split(","):
        report(name, [int(level) for level in args.levels.split(",")])


if __name__ == "__main__":
    main()
