"""Ahead-of-time compilation: StableHLO in, a shared library with a C ABI out.

The code is what the JIT makes (same pipeline, same LLVM at -O3, for this
CPU): each entry is compiled, its object code dumped, its symbols made
private but for the entry, and everything is linked by the system C
compiler with a small generated wrapper (``xlac.artifact.csrc``) and the
runtime libraries the JIT uses (``runtime.cpu.runtime_libraries``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from xlac.artifact import container as artifact
from xlac.artifact import csrc as artifact_csrc
from xlac.artifact.loader import signature_to_json
from xlac.errors import CompileError
from xlac.signature import Signature


@dataclass(frozen=True)
class EntryObject:
    """One compiled entry: its object file and signature."""

    entry: str
    object_path: Path
    signature: Signature


def compile_library(data: bytes, source_name: str, output: Path, header: Path | None = None,
                    entries: tuple[str, ...] = ("main",), prefix: str = "",
                    target: str = "cpu", disable_passes: tuple[str, ...] = ()) -> str:
    """``xla-compile``: write the library (and header); returns the symbol prefix."""
    output = Path(output)
    prefix = artifact_csrc.c_identifier(prefix or _default_prefix(output))
    with tempfile.TemporaryDirectory(prefix="xlac-aot-") as workdir:
        objects = compile_entries(data, source_name, list(entries), target, disable_passes,
                                  Path(workdir))
        blob, header_text = link_library(objects, prefix, output.name, target, source_name,
                                         Path(workdir))
    write_atomically(output, blob, mode=0o755)
    if header is not None:
        write_atomically(Path(header), header_text)
    return prefix


def _default_prefix(output: Path) -> str:
    """``libmodel.so`` and ``model.so`` -> ``model``."""
    stem = output.name.split(".")[0]
    return stem[3:] if stem.startswith("lib") and len(stem) > 3 else stem


def compile_entries(data: bytes, source_name: str, entries: list[str], target: str,
                    disable_passes: tuple[str, ...], workdir: Path) -> list[EntryObject]:
    """Compile each entry of a program into an object file under ``workdir``."""
    from xlac.compiler import compile_bytes
    objects = []
    for entry in entries:
        exe = compile_bytes(data, source_name, target, entry, disable_passes, cache=False)
        objects.append(entry_object(exe, workdir))
    return objects


def entry_object(exe, workdir: Path) -> EntryObject:
    """The object code of a JIT-compiled executable, written under ``workdir``."""
    if not hasattr(exe._function, "write_object"):
        raise CompileError("<unknown>: error: this executable holds no object code to link")
    path = Path(workdir) / f"{artifact_csrc.c_identifier(exe.entry)}.o"
    exe._function.write_object(str(path))
    return EntryObject(exe.entry, path, exe.signature)


def link_library(objects: list[EntryObject], prefix: str, soname: str, target: str,
                 origin: str, workdir: Path, extra: dict | None = None) -> tuple[bytes, str]:
    """``(artifact bytes, header text)``: a shared library exporting ``prefix_<entry>``."""
    workdir = Path(workdir)
    signatures = {o.entry: o.signature for o in objects}
    version = artifact.environment()["xlac"]
    header_text = artifact_csrc.header(prefix, signatures, origin, version)
    (workdir / f"{prefix}.h").write_text(header_text)
    wrapper = workdir / f"{prefix}_wrapper.c"
    wrapper.write_text(artifact_csrc.wrapper(prefix, signatures, f"{prefix}.h"))
    private = [_localize(o, prefix, workdir) for o in objects]
    library = workdir / soname
    _run([c_compiler(), "-shared", "-fPIC", "-O2", "-o", str(library), str(wrapper), *private,
          f"-Wl,--version-script={_version_script(objects, prefix, workdir)}",
          f"-Wl,-soname,{soname}", "-Wl,--no-undefined", "-Wl,-z,noexecstack",
          *link_flags()], "linking the library")
    metadata = artifact.environment() | {
        "target": target, "prefix": prefix, "source": origin,
        "entries": {o.entry: {"symbol": artifact_csrc.api_symbol(prefix, o.entry),
                              **signature_to_json(o.signature)} for o in objects}} | (extra or {})
    return artifact.pack(library.read_bytes(), metadata), header_text


def serialize_executable(exe) -> bytes:
    """``Executable.serialize``: the artifact it was loaded from, or a new one."""
    existing = getattr(exe._function, "artifact", None)
    if existing is not None:
        return existing
    with tempfile.TemporaryDirectory(prefix="xlac-serialize-") as workdir:
        obj = entry_object(exe, Path(workdir))
        blob, _ = link_library([obj], "xlac", "libxlac_module.so", exe.target,
                               "<serialized executable>", Path(workdir))
    return blob


def link_flags() -> list[str]:
    """Linker arguments for the runtime libraries (a path or a soname each)."""
    from xlac.targets.cpu.runtime import runtime_libraries
    flags = []
    for library in runtime_libraries():
        if os.sep in library:
            flags += [library, f"-Wl,-rpath,{Path(library).parent}"]
        else:
            flags.append(f"-l:{library}")
    return flags


def c_compiler() -> str:
    """The C compiler that links artifacts: ``$CC``, else cc, gcc or clang."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise CompileError("<unknown>: error: no C compiler found to link the library",
                       "install cc/gcc/clang or point $CC at one")


def write_atomically(path: Path, data: bytes | str, mode: int = 0o644) -> None:
    """Write ``path`` so that readers see the old file or the new one, never half."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _localize(obj: EntryObject, prefix: str, workdir: Path) -> str:
    """A copy of the object whose only global symbol is the renamed entry.

    Every entry's object has its own helpers and constants; made local, they
    cannot clash with each other or with the program the library goes into.
    """
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        raise CompileError("<unknown>: error: objcopy (binutils) not found",
                           "it ships with the C toolchain; install binutils")
    impl = artifact_csrc.impl_symbol(prefix, obj.entry)
    out = workdir / f"{obj.object_path.stem}.private.o"
    _run([objcopy, f"--redefine-sym={obj.entry}={impl}", f"--keep-global-symbol={impl}",
          str(obj.object_path), str(out)], "renaming the entry's symbols")
    return str(out)


def _version_script(objects: list[EntryObject], prefix: str, workdir: Path) -> Path:
    names = []
    for obj in objects:
        name = artifact_csrc.api_symbol(prefix, obj.entry)
        names += [name, f"{name}_signature"]
    script = workdir / "exports.map"
    script.write_text("{\n  global: " + "; ".join(names) + ";\n  local: *;\n};\n")
    return script


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise CompileError([f"<unknown>: error: {what} failed: {line}" for line in detail[-8:]]
                           or [f"<unknown>: error: {what} failed"],
                           "command: " + " ".join(command))
