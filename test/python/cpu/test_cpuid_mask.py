"""bench/cpuid_mask.c: a process sees a smaller CPU, and its own crashes stay crashes.

These run on any host that has CPUID faulting and a C compiler (the check says why not
elsewhere); what they assert holds whichever CPU that is: the masked answer has
no feature above the level, and every feature at or below it the host has.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import cpu_mask  # noqa: E402

from xlac.files import find_c_compiler  # noqa: E402

PROBE = r"""
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void theirs(int sig) { printf("their handler: %d\n", sig); fflush(stdout); _exit(3); }
int main(int argc, char **argv) {
  __builtin_cpu_init();
  printf("avx512f=%d avx2=%d avx=%d sse4.2=%d\n", !!__builtin_cpu_supports("avx512f"),
         !!__builtin_cpu_supports("avx2"), !!__builtin_cpu_supports("avx"),
         !!__builtin_cpu_supports("sse4.2"));
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "handled") == 0) signal(SIGSEGV, theirs);
  if (argc > 1) *(volatile int *)0 = 1;
  return 0;
}
"""


def _features(text: str) -> dict[str, int]:
    line = text.splitlines()[0]
    return {key: int(value) for key, value in (pair.split("=") for pair in line.split())}


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    reason = cpu_mask.why_not("x86-64-v3")
    if reason:
        pytest.skip(f"CPUID cannot be masked here: {reason}")
    folder = tmp_path_factory.mktemp("cpuid")
    (folder / "probe.c").write_text(PROBE)
    subprocess.run([find_c_compiler(), "-O1", "-o", str(folder / "probe"), str(folder / "probe.c")], check=True)
    return folder / "probe"


def _run(probe, level: str | None, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if level:
        env.update(XLAC_CPUID_MASK=level, LD_PRELOAD=str(cpu_mask._library()))
    return subprocess.run([str(probe), *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("level", ["x86-64-v3", "x86-64-v2"])
def test_the_masked_process_sees_no_feature_above_the_level(probe, level):
    host = _features(_run(probe, None).stdout)
    seen = _features(_run(probe, level).stdout)
    assert seen["avx512f"] == 0
    assert seen["sse4.2"] == host["sse4.2"]
    if level == "x86-64-v3":
        assert (seen["avx2"], seen["avx"]) == (host["avx2"], host["avx"])
    else:
        assert (seen["avx2"], seen["avx"]) == (0, 0)


def test_a_real_fault_reaches_the_programs_handler(probe):
    proc = _run(probe, "x86-64-v3", "handled")
    assert proc.returncode == 3 and "their handler: 11" in proc.stdout, proc.stdout + proc.stderr


def test_a_real_fault_without_a_handler_still_crashes(probe):
    proc = _run(probe, "x86-64-v3", "crash")
    assert proc.returncode == -signal.SIGSEGV, proc.stdout + proc.stderr


def test_the_widest_level_is_not_masked():
    assert "no wider level" in cpu_mask.why_not("x86-64-v4")
