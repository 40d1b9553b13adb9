"""Where the piece workers' LLVM time goes by kernel kind, and in the code generator by pass.

    python bench/llvm_kinds.py --models hf_bert,hf_vit --levels 3,1   # per kind, -O3 against -O1
    python bench/llvm_kinds.py --models hf_vit --time-passes           # the code generator's passes

The pieces a compile hands its workers are kept and lowered as ``bench/llvm_work.py``
does. ``--levels``: every function is compiled alone (its own module, the functions it
calls declared, as a piece holds them) by an ExecutionEngine at each level, best of
``--repeat``, CPU seconds of creation + lookup; the functions are summed by kind
(``kernel_kind``), with how many of them another level compiles to other bytes. Alone,
each function carries an engine's fixed cost (~4 ms) that a piece shares among its
functions, so the sums are above the pieces'. ``--time-passes``: each piece compiled
whole at -O3 with LLVM's pass timers on (``-time-passes``, set through
``LLVMParseCommandLineOptions``; the legacy code generator's passes: MLIR's IR pipeline
registers no timers), the timers summed by pass name over the pieces and the program.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llvm_work  # noqa: E402 - the pieces and engine timing this tool shares

_CALLS_MICRO_KERNEL = re.compile(r"llvm\.call @xlac_ukernel_")
_FMA = re.compile(r"llvm\.intr\.(fma|fmuladd)\b")
# an OpenMP loop of its own, or (xla-shared-parallel-dispatch) a call of the module's one region
_PARALLEL = re.compile(r"\bomp\.(wsloop|parallel)\b|llvm\.call @xla_parallel_for")
_ADDRESSED = re.compile(r"llvm\.mlir\.addressof @([\w.$-]+)")
_TIMER_ROW = re.compile(r"^\s*(?:[\d.]+ \(\s*[\d.]+%\)\s+){2}([\d.]+) \(\s*[\d.]+%\)\s+"
                        r"[\d.]+ \(\s*[\d.]+%\)\s+(.+?)(?: #\d+)?\s*$")
CONTRACTION_FMAS = 16             # FMAs in one function: a register tile's, not an epilogue's


def kernel_kind(name: str, text: str, entry: str = "main") -> str:
    """A function's kind for LLVM's sake: the entry; a contraction (it calls a
    micro-kernel or holds a register tile's FMAs); a parallel kernel (an OpenMP
    loop: its body becomes a function of its own); or a serial one."""
    if name == entry:
        return "entry"
    if _CALLS_MICRO_KERNEL.search(text) or len(_FMA.findall(text)) >= CONTRACTION_FMAS:
        return "contraction"
    return "parallel" if _PARALLEL.search(text) else "serial"


def loop_bodies(name: str, texts: dict[str, str]) -> list[str]:
    """The functions of the piece whose address ``name`` takes: the loop bodies it
    hands the shared parallel region (xla-shared-parallel-dispatch)."""
    return [found for found in _ADDRESSED.findall(texts[name]) if found in texts]


def with_loop_bodies(name: str, texts: dict[str, str]) -> str:
    """``name``'s text and its loop bodies': what its kind is told from."""
    return "\n".join([texts[name], *(texts[body] for body in loop_bodies(name, texts))])


def summed_pass_times(report: str, section: str = "Pass execution timing report") -> dict[str, float]:
    """User+system seconds per pass name in one section of LLVM's ``-time-passes``
    report, a pass's instances (``Name #3``, one per pass manager) summed."""
    part = report.split(section, 1)[1] if section in report else ""
    part = part.split("===---", 2)[1] if "===---" in part else part   # up to the next section
    sums: dict[str, float] = defaultdict(float)
    for line in part.splitlines():
        match = _TIMER_ROW.match(line)
        if match and match.group(2) != "Total":
            sums[match.group(2)] += float(match.group(1))
    return dict(sums)


def alone(module, name: str, texts: dict[str, str], context):
    """Function ``name`` of a lowered piece in a module of its own, with the loop
    bodies it hands the shared parallel region (``@<name>_chunk``: its own code), and
    what it leaves undefined (the region itself is a function of the piece's own)."""
    from xlac.mlir import ir
    from xlac.targets.cpu import piece_worker as worker
    from xlac.targets.cpu.pieces import _piece
    top = [op.operation for op in module.body.operations]
    members = [name, *loop_bodies(name, texts)]
    single = ir.Module.parse(_piece(module, top, members, texts, name).bytecode, context)
    external = tuple(worker._name(op) for op in single.body.operations if worker._undefined(op.operation))
    return single.operation.get_asm(enable_debug_info=False), external


def lowered_pieces(name: str):
    """Each piece of model ``name`` lowered: its function texts and its module's text, in a
    shared context (``piece_worker._context``)."""
    from xlac.targets.cpu import piece_worker as worker
    for piece in llvm_work.captured_pieces((llvm_work.MODELS / f"{name}.mlir").read_text()):
        with worker._context() as context:
            module, external = llvm_work.lowered(piece, context)
            yield piece.name, module, external, context


def by_kind(name: str, levels: list[int], repeat: int) -> None:
    from xlac.mlir import ir
    seconds: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(levels))
    counts: dict[str, int] = defaultdict(int)
    changed: dict[str, list[int]] = defaultdict(lambda: [0] * len(levels))
    for _, module, _, context in lowered_pieces(name):
        texts = llvm_work.function_texts(module)
        for function, text in texts.items():
            if "internal" in text.split("(", 1)[0]:          # a helper the steps added: compiled with its caller
                continue
            kind = kernel_kind(function, with_loop_bodies(function, texts))
            source, external = alone(module, function, texts, context)
            counts[kind] += 1
            first = None
            for i, level in enumerate(levels):
                best, code = min((_create_and_lookup(ir.Module.parse(source, context), external, level)
                                  for _ in range(repeat)), key=lambda found: found[0])
                seconds[kind][i] += best
                first = code if first is None else first
                changed[kind][i] += code != first
    print(f"## {name}: functions compiled alone, by kind (CPU s, create + lookup, best of {repeat})")
    print("| kind | functions | " + " | ".join(f"-O{lv} s" for lv in levels) + " | " +
          " | ".join(f"other bytes at -O{lv}" for lv in levels[1:]) + " |")
    print("|---" * (2 + 2 * len(levels) - 1) + "|")
    for kind in sorted(counts, key=lambda k: -seconds[k][0]):
        print(f"| {kind} | {counts[kind]} | " + " | ".join(f"{s:.3f}" for s in seconds[kind]) + " | " +
              " | ".join(str(n) for n in changed[kind][1:]) + " |")


def _create_and_lookup(module, external, level: int) -> tuple[float, bytes]:
    spent, code = llvm_work.engine_phases(module, external, level)
    return spent["create"] + spent["lookup"], code


def pass_times(name: str, top: int) -> None:
    """``-time-passes`` over every piece of model ``name``, read from the report
    ``LLVMShutdown`` writes (so once per process: ``main`` runs one per model)."""
    from xlac.mlir import ir
    from xlac.targets.cpu.libraries import openmp_library
    openmp_library()
    library = _llvm_library()
    with tempfile.TemporaryDirectory(prefix="xlac-llvm-kinds-") as workdir:
        report = Path(workdir) / "timers.txt"
        _llvm_options(library, ["-time-passes", f"-info-output-file={report}"])
        total = 0.0
        for _, module, external, context in lowered_pieces(name):
            source = module.operation.get_asm(enable_debug_info=False)
            total += _create_and_lookup(ir.Module.parse(source, context), external, 3)[0]
        library.LLVMShutdown()
        sums = summed_pass_times(report.read_text())
    coded = sum(sums.values())
    print(f"## {name}: LLVM CPU {total:.3f} s at -O3, of it the code generator's passes {coded:.3f} s")
    print("| pass | s | share of the code generator |\n|---|---|---|")
    for pass_name, spent in sorted(sums.items(), key=lambda item: -item[1])[:top]:
        print(f"| {pass_name} | {spent:.4f} | {100 * spent / coded:.1f}% |")


def _llvm_library():
    from xlac.mlir import native_library_path
    return ctypes.CDLL(native_library_path())


def _llvm_options(library, options: list[str]) -> None:
    argv = [b"llvm_kinds", *(o.encode() for o in options)]
    library.LLVMParseCommandLineOptions(len(argv), (ctypes.c_char_p * len(argv))(*argv), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="hf_bert,hf_gpt2,hf_vit", help="names of ../shared/models")
    parser.add_argument("--levels", default="3,1", help="LLVM opt levels, the first the one compared against")
    parser.add_argument("--repeat", type=int, default=2, help="compiles of each function per level (the best kept)")
    parser.add_argument("--time-passes", action="store_true", help="the code generator's passes instead")
    parser.add_argument("--top", type=int, default=12, help="passes listed with --time-passes")
    args = parser.parse_args()
    names = args.models.split(",")
    if args.time_passes and len(names) > 1:          # LLVM's timers are read at its shutdown
        for name in names:
            subprocess.run([sys.executable, __file__, "--time-passes", "--models", name,
                            "--top", str(args.top)], check=True)
        return
    if args.time_passes:
        pass_times(names[0], args.top)
        return
    for name in names:
        by_kind(name, [int(level) for level in args.levels.split(",")], args.repeat)


if __name__ == "__main__":
    main()
