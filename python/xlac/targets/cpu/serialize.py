"""CPU code as an artifact: the JIT's object code, made private but for the
entry, linked by the system C compiler with the C-ABI wrapper
(``xlac.artifact.csrc``) and the runtime libraries the JIT uses, then packed
with its metadata (``xlac.artifact.container``).

What ``xla-compile``, ``Executable.serialize`` and the compilation cache write.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path

from xlac.artifact import container, csrc
from xlac.errors import CompileError, error
from xlac.files import find_c_compiler
from xlac.record import record
from xlac.signature import CONSTANT_ALIGNMENT, CONSTANT_TABLE_SYMBOL, Signature
from xlac.spmd.grid import DeviceGrid
from xlac.targets.cpu import amx_kernels, constant_data, micro_kernels
from xlac.targets.cpu.libraries import (
    LAPACK_HINT,
    LAPACK_PREFIX,
    lapack_library,
    lapack_names,
    runtime_libraries,
)


@record
class EntryObject:
    """One compiled entry: its object file and signature."""

    entry: str
    object_path: Path
    signature: Signature
    grid: DeviceGrid | None = None        # an SPMD program: calls the MPI shim
    mpi_library: str | None = None
    undefined: tuple[str, ...] | None = None   # the symbols it uses but lacks, when known (else nm)
    constants: tuple = ()                 # xlac.targets.cpu.constants: the data its code reads
    cache_dir: Path | None = None         # where the micro-kernels it calls are kept (None: cache off)


class PendingArtifact:
    """The object code of a JIT-compiled entry, taken now; linked when called.

    The link is the slow part (a C compiler run): the cache calls this on a
    background thread. The temporary directory goes when this object does.
    """

    def __init__(self, write_object, entry: str, signature: Signature, cpu_features,
                 grid: DeviceGrid | None = None, mpi_library: str | None = None,
                 constants: tuple = (), cache_dir: Path | None = None):
        self._workdir = Path(tempfile.mkdtemp(prefix="xlac-link-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._workdir, True)
        path = self._workdir / f"{csrc.c_identifier(entry)}.o"
        try:
            write_object(str(path))
        except BaseException:
            self._cleanup()
            raise
        self._object = EntryObject(entry, path, signature, grid, mpi_library, constants=constants,
                                   cache_dir=cache_dir)
        self._features = cpu_features
        self._extra: dict = {}

    def keep_metadata(self, extra: dict) -> None:
        """Add ``extra`` to the artifact's metadata (e.g. the fusion report)."""
        self._extra.update(extra)

    def __call__(self) -> bytes:
        try:
            library, metadata, _ = link_code([self._object], "xlac", "libxlac_module.so",
                                             "<serialized executable>", self._workdir,
                                             self._features, self._extra, constants_beside=True)
            return constant_data.pack(library, metadata, _constants_by_entry([self._object]))
        finally:
            self._cleanup()


class WrapperObject:
    """The C wrapper of one entry compiled ahead, on a thread of its own: a
    big program's compile starts it when the entry's signature is known, and
    its C compiler run (30 ms) overlaps the passes, which leave the second
    core idle, instead of adding to the link at the end."""

    def __init__(self, prefix: str, entry: str, signature: Signature, origin: str):
        from concurrent.futures import ThreadPoolExecutor
        self._workdir = Path(tempfile.mkdtemp(prefix="xlac-wrapper-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._workdir, True)
        self.sources = _c_sources(prefix, {entry: signature}, origin, {})
        self._path = _write_sources(self.sources, prefix, self._workdir)
        pool = ThreadPoolExecutor(1, thread_name_prefix="xlac-wrapper")
        self._compiled = pool.submit(self._compile)
        pool.shutdown(wait=False)                     # its thread ends with the compile

    def _compile(self) -> Path | None:
        output = self._path.with_suffix(".o")
        done = subprocess.run([c_compiler(), "-c", "-fPIC", "-O2", "-o", str(output), str(self._path)],
                              capture_output=True)
        return output if done.returncode == 0 else None

    def object_for(self, sources: tuple[str, str]) -> Path | None:
        """The compiled wrapper if it was made from ``sources``, else None
        (the link then compiles the wrapper itself, as without one)."""
        return self._compiled.result() if sources == self.sources else None


def _c_sources(prefix: str, signatures: dict, origin: str, grids: dict,
               amx: bool = False) -> tuple[str, str]:
    """``(header text, wrapper text)`` of a library exporting ``prefix_<entry>``;
    ``amx``: its code calls the AMX kernel."""
    identity = container.build_identity()
    return (csrc.header(prefix, signatures, origin, identity["xlac"], grids, amx),
            csrc.wrapper(prefix, signatures, f"{prefix}.h", grids, amx))


def _write_sources(sources: tuple[str, str], prefix: str, workdir: Path) -> Path:
    (workdir / f"{prefix}.h").write_text(sources[0])
    wrapper = workdir / f"{prefix}_wrapper.c"
    wrapper.write_text(sources[1])
    return wrapper


def link_library(objects: list[EntryObject], prefix: str, soname: str, origin: str,
                 workdir: Path, cpu_features, extra: dict | None = None) -> tuple[bytes, str]:
    """``(artifact bytes, header text)``: a shared library exporting
    ``prefix_<entry>``, its constants linked in (what ``xla-compile`` writes:
    a C program loads it alone)."""
    library, metadata, header_text = link_code(objects, prefix, soname, origin, workdir,
                                               cpu_features, extra)
    return container.pack(library, metadata), header_text


def _constants_by_entry(objects: list[EntryObject]) -> dict[str, tuple]:
    return {o.entry: o.constants for o in objects if o.constants}


def link_code(objects: list[EntryObject], prefix: str, soname: str, origin: str,
              workdir: Path, cpu_features, extra: dict | None = None,
              wrapper_object: WrapperObject | None = None,
              constants_beside: bool = False) -> tuple[bytes, dict, str]:
    """``(library bytes, metadata, header text)``: a shared library exporting
    ``prefix_<entry>``. ``constants_beside``: the entries' constants are not
    linked; each entry's table of their addresses is exported, zeroed, for
    xlac's loader to fill (``xlac.targets.cpu.constant_data``)."""
    workdir = Path(workdir)
    signatures = {o.entry: o.signature for o in objects}
    grids = {o.entry: o.grid for o in objects if o.grid is not None}
    undefined = {n for o in objects
                 for n in (o.undefined if o.undefined is not None else _undefined(o.object_path))}
    sources = _c_sources(prefix, signatures, origin, grids, amx_kernels.SYMBOL in undefined)
    header_text = sources[0]
    wrapper = (wrapper_object.object_for(sources) if wrapper_object is not None else None) \
        or _write_sources(sources, prefix, workdir)
    lapack = sorted(lapack_names(undefined))
    private = [_localize(o, prefix, workdir, lapack) for o in objects]
    # the prebuilt matmul micro-kernels the code calls, linked in: the library needs no cache
    kernels = micro_kernels.objects_for(undefined, cpu_features, objects[0].cache_dir)
    data = [_constants_source(o, prefix, workdir, constants_beside)
            for o in objects if o.constants]
    library = workdir / soname
    # -nostartfiles: no initializers at all, so a library that has one is not
    # xlac's and is refused before it is opened (xlac.artifact.elf).
    _run([c_compiler(), "-shared", "-fPIC", "-O2", "-nostartfiles", "-o", str(library), str(wrapper),
          *private, *kernels, *data,
          f"-Wl,--version-script={_version_script(objects, prefix, workdir, constants_beside)}",
          f"-Wl,-soname,{soname}", "-Wl,--no-undefined", "-Wl,-z,noexecstack",
          *link_flags(_mpi_libraries(objects)), *_lapack_flags(lapack)], "linking the library")
    metadata = container.metadata_for(
        "cpu", {o.entry: (csrc.api_symbol(prefix, o.entry), o.signature, o.grid) for o in objects},
        cpu_features, {"prefix": prefix, "source": origin} | (extra or {}))
    return library.read_bytes(), metadata, header_text


def _mpi_libraries(objects: list[EntryObject]) -> list[str]:
    return sorted({o.mpi_library for o in objects if o.mpi_library})


def link_flags(extra_libraries: list[str] = ()) -> list[str]:
    """Linker arguments for the runtime libraries (a path or a soname each)."""
    flags = []
    for library in [*runtime_libraries(), *extra_libraries]:
        if os.sep in library:
            flags += [library, f"-Wl,-rpath,{Path(library).parent}"]
        else:
            flags.append(f"-l:{library}")
    return flags


def c_compiler() -> str:
    """The C compiler that links artifacts: ``$CC``, else cc, gcc or clang."""
    compiler = find_c_compiler()
    if compiler is not None:
        return compiler
    raise CompileError(error("no C compiler found to link the library"),
                       "install cc/gcc/clang or point $CC at one")


def _lapack_flags(names: list[str]) -> list[str]:
    """Link SciPy's OpenBLAS when the code calls LAPACK (docs/lapack.md)."""
    if not names:
        return []
    path = lapack_library()
    if path is None:
        raise CompileError(error(f"the code calls LAPACK ({', '.join(names)}) and no LAPACK "
                                 "was found to link"), LAPACK_HINT)
    return [path, f"-Wl,-rpath,{Path(path).parent}"]


def _undefined(object_path: Path) -> list[str]:
    """The symbols an object file uses but does not define."""
    nm = shutil.which("nm")
    if nm is None:
        raise CompileError(error("nm (binutils) not found"),
                           "it ships with the C toolchain; install binutils")
    done = subprocess.run([nm, "-u", "--format=posix", str(object_path)], capture_output=True,
                          text=True)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def _localize(obj: EntryObject, prefix: str, workdir: Path, lapack: list[str] = ()) -> str:
    """A copy of the object whose only global symbol is the renamed entry.

    Every entry's object has its own helpers and constants; made local, they
    cannot clash with each other or with the program the library goes into.
    Its LAPACK calls (``ssyevd_``) get the names SciPy's OpenBLAS exports.
    """
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        raise CompileError(error("objcopy (binutils) not found"),
                           "it ships with the C toolchain; install binutils")
    impl = csrc.impl_symbol(prefix, obj.entry)
    out = workdir / f"{obj.object_path.stem}.private.o"
    renames = [f"--redefine-sym={name}={LAPACK_PREFIX}{name}" for name in lapack]
    init = [f"--redefine-sym=__xlac_init={impl}_init", f"--keep-global-symbol={impl}_init"] \
        if obj.grid is not None else []
    if obj.constants:                     # one entry's table apart from another's
        renames.append(f"--redefine-sym={CONSTANT_TABLE_SYMBOL}="
                       f"{csrc.constant_table_symbol(prefix, obj.entry)}")
    _run([objcopy, f"--redefine-sym={obj.entry}={impl}", f"--keep-global-symbol={impl}",
          *renames, *init, str(obj.object_path), str(out)], "renaming the entry's symbols")
    return str(out)


def _constants_source(obj: EntryObject, prefix: str, workdir: Path, beside: bool) -> str:
    """Assembly of the entry's table of constants and, unless they are carried
    ``beside`` the library, of the constants: each one's bytes in a file it
    includes, so they go from memory to the library without passing through LLVM."""
    table = csrc.constant_table_symbol(prefix, obj.entry)
    source = workdir / f"{csrc.impl_symbol(prefix, obj.entry)}_constants.s"
    if beside:
        source.write_text(csrc.empty_table_source(table, len(obj.constants)))
        return str(source)
    listed = []
    for k, constant in enumerate(obj.constants):
        symbol = csrc.constant_symbol(prefix, obj.entry, k)
        path = workdir / f"{symbol}.bin"
        path.write_bytes(constant.data)
        listed.append((symbol, constant.data.size, str(path)))
    source.write_text(csrc.constants_source(table, listed, CONSTANT_ALIGNMENT))
    return str(source)


def _version_script(objects: list[EntryObject], prefix: str, workdir: Path,
                    constants_beside: bool = False) -> Path:
    names = []
    for obj in objects:
        name = csrc.api_symbol(prefix, obj.entry)
        names += [name, f"{name}_signature"] + ([f"{name}_init"] if obj.grid is not None else [])
        if constants_beside and obj.constants:
            names.append(csrc.constant_table_symbol(prefix, obj.entry))
    script = workdir / "exports.map"
    script.write_text("{\n  global: " + "; ".join(names) + ";\n  local: *;\n};\n")
    return script


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise CompileError([error(f"{what} failed: {line}") for line in detail[-8:]]
                           or [error(f"{what} failed")], "command: " + " ".join(command))
