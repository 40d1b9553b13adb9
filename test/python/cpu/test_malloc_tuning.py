"""The CPU runtime's malloc tuning: large temporaries come from glibc's heap,
kept warm between calls, not from fresh mappings that fault in page by page."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

# In a fresh process: the tuning is process-wide and once, and this one has
# already compiled. Prints how many blocks glibc mapped on their own for one
# malloc of 64 MiB (past the 32 MiB that its mmap threshold can reach).
_PROBE = """
import ctypes, sys
from xlac.targets.cpu.libraries import keep_freed_memory

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Mallinfo2
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
tuned = keep_freed_memory(sys.argv[1] == "on")
before = libc.mallinfo2().hblks
block = libc.malloc(64 << 20)
mapped = libc.mallinfo2().hblks - before
libc.free(block)
print(tuned, mapped)
"""


def _mapped_blocks(tuning: str) -> tuple[str, int]:
    out = subprocess.run([sys.executable, "-c", _PROBE, tuning], capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], int(out[1])


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc 2.33+ (mallinfo2)")
def test_a_block_past_the_mmap_threshold_comes_from_the_heap():
    assert _mapped_blocks("on") == ("True", 0)
    # untuned, glibc maps such a block on its own: the probe sees the difference
    assert _mapped_blocks("off") == ("False", 1)
