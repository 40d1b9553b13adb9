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

from xlac.cpu_model import LEVELS, cpu_model  # noqa: E402
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
  printf("avx512bf16=%d avx512vnni=%d avx512vbmi=%d avx512f=%d avx512bw=%d avx512vl=%d "
         "avx2=%d avx=%d sse4.2=%d\n", !!__builtin_cpu_supports("avx512bf16"),
         !!__builtin_cpu_supports("avx512vnni"), !!__builtin_cpu_supports("avx512vbmi"),
         !!__builtin_cpu_supports("avx512f"), !!__builtin_cpu_supports("avx512bw"),
         !!__builtin_cpu_supports("avx512vl"), !!__builtin_cpu_supports("avx2"),
         !!__builtin_cpu_supports("avx"), !!__builtin_cpu_supports("sse4.2"));
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


ABOVE_V4 = ("avx512bf16", "avx512vnni", "avx512vbmi")
V4 = ("avx512f", "avx512bw", "avx512vl")
V3 = ("avx2", "avx")


@pytest.mark.parametrize("level", ["x86-64-v4", "x86-64-v3", "x86-64-v2"])
def test_the_masked_process_sees_no_feature_above_the_level(probe, level):
    reason = cpu_mask.why_not(level)
    if reason:
        pytest.skip(f"CPUID cannot be masked to {level} here: {reason}")
    host = _features(_run(probe, None).stdout)
    seen = _features(_run(probe, level).stdout)
    kept = {"x86-64-v4": V4 + V3, "x86-64-v3": V3, "x86-64-v2": ()}[level] + ("sse4.2",)
    hidden = set(seen) - set(kept)
    assert {name: seen[name] for name in kept} == {name: host[name] for name in kept}
    assert {name: seen[name] for name in hidden} == dict.fromkeys(hidden, 0)


def test_a_real_fault_reaches_the_programs_handler(probe):
    proc = _run(probe, "x86-64-v3", "handled")
    assert proc.returncode == 3 and "their handler: 11" in proc.stdout, proc.stdout + proc.stderr


def test_a_real_fault_without_a_handler_still_crashes(probe):
    proc = _run(probe, "x86-64-v3", "crash")
    assert proc.returncode == -signal.SIGSEGV, proc.stdout + proc.stderr


def test_x86_64_v4_is_masked_only_on_an_avx512_host():
    reason = cpu_mask.why_not("x86-64-v4")
    host_has_avx512 = set(cpu_mask.AVX512) <= set(cpu_model("host").features)
    if host_has_avx512 or reason is None:
        assert reason is None or "AVX-512" not in reason
    else:
        assert "no AVX-512" in reason


def test_host_means_the_masked_cpu_in_a_masked_process():
    level = "x86-64-v4"
    script = "from xlac.cpu_model import cpu_model; print(' '.join(cpu_model('host').features))"
    env = dict(os.environ, **{cpu_mask.MARK: level})
    seen = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True).stdout.split()
    above = {flag for flag in seen if flag.startswith(("avx", "amx"))} - set(LEVELS[level])
    assert not above
    assert set(LEVELS[level]) & set(cpu_model("host").features) <= set(seen)
