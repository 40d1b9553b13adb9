"""Ahead-of-time compilation (``xla-compile``): StableHLO in, a shared library
with a C ABI (and a header) out.

Each entry is compiled as for the JIT (same pipeline, same LLVM at -O3, for
the chosen CPU), its object code taken, and everything linked by the CPU
target's serializer (``xlac.targets.cpu.serialize``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from xlac.artifact import csrc
from xlac.compiler import compile_bytes
from xlac.cpu_model import cpu_model
from xlac.errors import CompileError, error
from xlac.files import write_atomically
from xlac.options import Options
from xlac.targets import get_target
from xlac.targets.cpu.serialize import EntryObject, link_library


def compile_library(data: bytes, source_name: str, output: Path, header: Path | None = None,
                    entries: tuple[str, ...] = ("main",), prefix: str = "",
                    target: str = "cpu", options: Options | None = None) -> str:
    """Write the library (and header); returns the symbol prefix."""
    if not get_target(target).aot:
        raise CompileError(error(f"xla-compile makes C libraries; target '{target}' has no "
                                 "ahead-of-time form"),
                           f"use target cpu, or xlac.compile(..., target='{target}') at run time")
    options = options or Options.from_env()
    output = Path(output)
    prefix = csrc.c_identifier(prefix or _default_prefix(output))
    with tempfile.TemporaryDirectory(prefix="xlac-aot-") as workdir:
        compiled = [_entry_object(data, source_name, target, entry, options, Path(workdir))
                    for entry in entries]
        objects = [obj for obj, _ in compiled]
        reports = {obj.entry: report for obj, report in compiled if report is not None}
        blob, header_text = link_library(objects, prefix, output.name, source_name,
                                         Path(workdir), cpu_model(options.cpu).features,
                                         {"fusion_reports": reports})
    write_atomically(output, blob, mode=0o755)
    if header is not None:
        write_atomically(Path(header), header_text)
    return prefix


def _entry_object(data: bytes, source_name: str, target: str, entry: str, options: Options,
                  workdir: Path) -> tuple[EntryObject, str | None]:
    """The entry's object code, and its fusion report (kept in the artifact)."""
    exe = compile_bytes(data, source_name, target, entry, options, cache=False, start=False)
    if not hasattr(exe.function, "write_object"):
        raise CompileError(error(f"@{entry} has no object code to link (dynamic shapes?)"),
                           "export the program with static shapes")
    path = workdir / f"{csrc.c_identifier(entry)}.o"
    exe.function.write_object(str(path))
    obj = EntryObject(entry, path, exe.signature, getattr(exe.function, "grid", None),
                      getattr(exe.function, "mpi_library", None),
                      constants=getattr(exe.function, "constants", ()),
                      cache_dir=options.cache_dir)            # its micro-kernels are kept there
    return obj, exe.fusion_report()


def _default_prefix(output: Path) -> str:
    """``libmodel.so`` and ``model.so`` -> ``model``."""
    stem = output.name.split(".")[0]
    return stem[3:] if stem.startswith("lib") and len(stem) > 3 else stem
