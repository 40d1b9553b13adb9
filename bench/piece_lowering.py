"""What lowering the kernels in the piece workers would save: a projection, and its check.

    python bench/piece_lowering.py                          # the five shared real models
    python bench/piece_lowering.py --models hf_vit --repeat 3

Today a big program's llvm stage runs whole in the compiling process, which then prints
each LLVM function (``pieces.function_texts``), splits the module (``pieces.split``) and
waits while the workers make each piece's machine code. The alternative measured here
splits right after ``xla-outline-kernels`` instead (each piece: its functions, bodiless
declarations of the others, the module's attributes and globals) and lets each worker
run the rest of the llvm stage on its piece before LLVM.

In one process, CPU seconds of each step (``time.process_time``): today's tail of the
stage on the whole module, the texts, the split and each piece's LLVM; then the early
split, and each piece's parse, tail of the stage and LLVM. The workers' share is
scheduled largest first on ``--workers`` workers, as ``compile_pieces`` hands them out;
the critical path after outlining is the compiling process's share plus that. The checks:
every kernel's LLVM-dialect function from its piece equals the one from the whole
module (``same``/``differ``), and every function's machine code from both paths' objects
disassembles alike but for the pieces' layout (``machine code``; needs objdump).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = HERE.parent.parent / "shared" / "models"
DEFAULT = "hf_vit,hf_bert,hf_gpt2,flax_resnet18,flax_cnn_train_step"
clock = time.process_time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT, help="comma-separated ../shared/models names")
    parser.add_argument("--repeat", type=int, default=1, help="rounds over the models")
    parser.add_argument("--workers", type=int, default=2, help="piece workers (cores)")
    args = parser.parse_args(argv)
    for _ in range(args.repeat):
        for name in args.models.split(","):
            print(project(name, args.workers), flush=True)
    return 0


def project(name: str, workers: int) -> str:
    from xlac.context import new_context
    from xlac.mlir import ir
    from xlac.options import Options
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu.pipeline import llvm_stage
    from xlac.targets.cpu.target import CPU
    context, options = new_context(), Options.from_env()
    with context:
        module = ir.Module.parse((MODELS / f"{name}.mlir").read_text())
    run_passes(module, CPU.steps_until("bufferized", "main", options), verify_each=False)
    steps = llvm_stage("main", options)
    cut = steps.index("xla-outline-kernels") + 1
    run_passes(module, steps[:cut], verify_each=False)
    today, whole = split_late(copy(module), steps[cut:], 4 * workers)
    early, jobs, tails, objects, same, differ = split_early(module, steps[cut:], 4 * workers, whole)
    main_today = today["tail"] + today["texts"] + today["split"]
    late_path = main_today + schedule(today["llvm"], workers)
    early_path = early + schedule(jobs, workers)
    return (f"{name}: today {late_path:.3f} s = compiling process {main_today:.3f} (tail "
            f"{today['tail']:.3f}, texts {today['texts']:.3f}, split {today['split']:.3f}) + "
            f"pieces {schedule(today['llvm'], workers):.3f} (CPU {sum(today['llvm']):.3f}, largest "
            f"{max(today['llvm']):.3f}) | early {early_path:.3f} s = compiling process {early:.3f} + "
            f"pieces {schedule(jobs, workers):.3f} (CPU {sum(jobs):.3f}, of it the tail {tails:.3f}; "
            f"largest {max(jobs):.3f}) | "
            f"saved {late_path - early_path:.3f} s | functions same {same}, differ {differ} | "
            f"machine code {same_code(today['objects'], objects)}")


def split_late(module, tail: list[str], count: int):
    """Today's path: CPU seconds of its steps, and the final LLVM functions' texts."""
    from xlac.pipeline.pass_manager import run_passes
    from xlac.targets.cpu import pieces
    start = clock()
    run_passes(module, tail, verify_each=False)
    tail_s, start = clock() - start, clock()
    texts = pieces.function_texts(module, "main")
    texts_s, start = clock() - start, clock()
    found = pieces.split(module, "main", count, texts)
    split_s = clock() - start
    llvm, objects = zip(*(machine_code(p.bytecode, p.external) for p in found))
    return {"tail": tail_s, "texts": texts_s, "split": split_s, "llvm": list(llvm),
            "objects": objects}, texts


def split_early(module, tail: list[str], count: int, whole: dict[str, str]):
    """The split after outlining: the compiling process's CPU seconds, each piece's
    (parse, tail, LLVM), their parses' and tails' sum, and how many kernels come out as the whole module makes them."""
    from xlac.mlir import ir
    from xlac.pipeline.pass_manager import run_passes
    start = clock()
    blobs = early_pieces(module, count)
    early = clock() - start
    jobs, tails, objects, same, differ = [], [], [], 0, 0
    for members, blob in blobs:
        start = clock()
        piece = ir.Module.parse(blob, module.context)
        run_passes(piece, tail, verify_each=False)
        lowered = clock() - start
        tails.append(lowered)
        defined = {symbol(op): op for op in top_ops(piece) if op.name == "llvm.func"}
        external = tuple(name for name, op in defined.items() if not op.regions[0].blocks)
        for member in members:
            text = defined[member].get_asm(enable_debug_info=False, use_local_scope=True,
                                           assume_verified=True)
            same, differ = (same + 1, differ) if text == whole[member] else (same, differ + 1)
        seconds, code = machine_code(bytecode(piece), external)
        jobs.append(lowered + seconds)
        objects.append(code)
    return early, jobs, sum(tails), objects, same, differ


def early_pieces(module, count: int) -> list[tuple[list[str], bytes]]:
    """The entry alone, the kernels by a hash of their text (as ``pieces.split``):
    each piece its members' bodies, declarations of the other functions, the rest as is."""
    from xlac.mlir import ir
    top = top_ops(module)
    functions = {symbol(op): op for op in top if op.name == "func.func" and op.regions[0].blocks}
    buckets: dict[int, list[str]] = {}
    for name, op in sorted(functions.items()):
        if name != "main":
            body = op.get_asm(use_local_scope=True, assume_verified=True).split("(", 1)[1]
            digest = hashlib.sha256(body.encode()).digest()[:4]
            buckets.setdefault(int.from_bytes(digest, "little") % count, []).append(name)
    result = []
    for members in [["main"]] + [buckets[b] for b in sorted(buckets)]:
        piece = ir.Module.create(loc=ir.Location.unknown(module.context))
        for attr in named(module.operation):
            piece.operation.attributes[attr.name] = attr.attr
        with module.context, ir.InsertionPoint(piece.body):
            for op in top:
                if symbol(op) in functions and symbol(op) not in members:
                    attributes = {a.name: a.attr for a in named(op)}
                    attributes["sym_visibility"] = ir.StringAttr.get("private")
                    ir.Operation.create("func.func", attributes=attributes, regions=1, loc=op.location)
                else:
                    op.clone()
        result.append((members, bytecode(piece)))
    return result


def machine_code(piece_bytecode: bytes, external: tuple[str, ...]) -> tuple[float, bytes]:
    """CPU seconds of one piece's object code, as a worker makes it, and the code."""
    from xlac.targets.cpu.piece_worker import compile_piece
    start = clock()
    code = compile_piece(piece_bytecode, external, 3)
    return clock() - start, code


def same_code(today: list[bytes], early: list[bytes]) -> str:
    """How many functions disassemble alike from both paths' objects, with what only the
    pieces' layout moves left out: offsets into sections in relocations and operands,
    the nops that pad loop heads to their alignment, the addresses' symbol names."""
    if shutil.which("objdump") is None:
        return "not compared (no objdump)"
    before, after = disassembly(today), disassembly(early)
    alike = sum(after.get(name) == text for name, text in before.items())
    return f"{alike} of {len(before)} functions alike, {len(after)} after"


def padding(line: str) -> bool:
    """Whether ``line`` is an alignment nop (``xchg %ax,%ax`` is the 2-byte one)."""
    instruction = line.split("#")[0]
    return "nop" in instruction or instruction.split() == ["xchg", "%ax,%ax"]


def disassembly(objects: list[bytes]) -> dict[str, str]:
    """Each function symbol's instructions (``objdump -d -r``), layout left out."""
    functions = {}
    for code in objects:
        with tempfile.NamedTemporaryFile(suffix=".o") as file:
            file.write(code)
            file.flush()
            text = subprocess.run(["objdump", "-d", "-r", "--no-show-raw-insn", "--no-addresses",
                                   file.name], capture_output=True, text=True, check=True).stdout
        for chunk in re.split(r"\n(?=<)", text):
            if (head := re.match(r"<([^>]+)>:", chunk)) is not None:
                lines = (re.sub(r"<[^>]*>", "<>", re.sub(r"(\.[\w.]+)[+-]0x[0-9a-f]+", r"\1", line))
                         for line in chunk.splitlines()[1:])
                functions[head[1]] = "\n".join(line for line in lines if not padding(line))
    return functions


def schedule(jobs: list[float], workers: int) -> float:
    """The wall of ``jobs`` handed out largest first to the first free worker."""
    ends = [0.0] * workers
    for job in sorted(jobs, reverse=True):
        ends[ends.index(min(ends))] += job
    return max(ends)


def copy(module):
    from xlac.mlir import ir
    return ir.Module.parse(bytecode(module), module.context)


def bytecode(module) -> bytes:
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return buffer.getvalue()


def top_ops(module) -> list:
    return [op.operation for op in module.body.operations]


def named(op) -> list:
    return [op.attributes[i] for i in range(len(op.attributes))]


def symbol(op) -> str | None:
    from xlac.mlir import ir
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else None


if __name__ == "__main__":
    raise SystemExit(main())
