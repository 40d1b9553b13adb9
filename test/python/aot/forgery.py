"""Forged artifacts for the trust tests: real xlac metadata on libraries that
run code when opened, and damaged metadata with the checksum recomputed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from xlac.artifact import container
from xlac.targets.cpu.serialize import c_compiler

# Each writes its marker when opened, by a different route.
CONSTRUCTOR = r"""
#include <stdio.h>
__attribute__((constructor)) static void mark(void) { fclose(fopen(MARKER, "w")); }
int SYMBOL(void **in, void **out) { return 0; }
"""
IFUNC = r"""
/* The resolver runs while the library is relocated, before libc calls work
   from it: raw system calls. */
static long sys4(long n, long a, long b, long c, long d) {
#if defined(__x86_64__)
  long r; register long r10 __asm__("r10") = d;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return r;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c, x3 __asm__("x3") = d;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
#endif
}
#if defined(__x86_64__)
enum { OPENAT = 257, CLOSE = 3 };
#else
enum { OPENAT = 56, CLOSE = 57 };
#endif
static int impl(void **in, void **out) { return 0; }
static void *pick(void) {
  sys4(CLOSE, sys4(OPENAT, -100, (long)MARKER, 0101, 0600), 0, 0, 0);
  return (void *)impl;
}
int chosen(void **in, void **out) __attribute__((ifunc("pick")));
int SYMBOL(void **in, void **out) { return chosen(in, out); }
"""
PLAIN = "int SYMBOL(void **in, void **out) { return 0; }\nint helper(void) { return 1; }\n"


def build(directory: Path, source: str, marker: Path, symbol: str, *flags: str) -> bytes:
    """A shared library of C ``source`` (its MARKER and SYMBOL macros set)."""
    c_file = directory / f"forged{len(list(directory.iterdir()))}.c"
    c_file.write_text(source)
    output = c_file.with_suffix(".so")
    subprocess.run([c_compiler(), "-shared", "-fPIC", "-O1", f"-DMARKER=\"{marker}\"",
                    f"-DSYMBOL={symbol}", "-o", str(output), str(c_file), *flags],
                   check=True, capture_output=True)
    return output.read_bytes()


def repack(blob: bytes, library: bytes | None = None, **changes) -> bytes:
    """``blob`` with another library and/or metadata fields, checksum recomputed
    (``None`` deletes a field)."""
    original, metadata = container.unpack(blob)
    metadata = dict(metadata)
    for field, value in changes.items():
        if value is None:
            metadata.pop(field.replace("_", "-") if field == "torch_mlir" else field, None)
        else:
            metadata[field.replace("_", "-") if field == "torch_mlir" else field] = value
    return container.pack(original if library is None else library, metadata)


def with_entry(blob: bytes, **fields) -> bytes:
    """``blob`` whose entry ``main`` has ``fields`` changed, checksum recomputed."""
    _, metadata = container.unpack(blob)
    entry = dict(metadata["entries"]["main"]) | fields
    return repack(blob, entries={"main": entry})


def raw_metadata(blob: bytes, text: bytes) -> bytes:
    """``blob``'s library with ``text`` as its metadata: any bytes, checksum right."""
    library, _ = container.unpack(blob)
    import hashlib
    import struct
    digest = hashlib.sha256(library + text).digest()
    return library + text + struct.pack("<Q32s8s", len(text), digest, container.MAGIC)
