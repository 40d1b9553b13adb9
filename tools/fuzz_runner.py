"""Where the fuzzer's inputs run: ``xlac.compile`` in a child process (restarted
after a crash or a hang), and the CLIs; each run ends as one outcome."""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import sys
from pathlib import Path

OUTCOMES = ("ok", "error", "crash", "hang", "traceback")
CLIS = ("xla-opt", "xla-compile", "xla-run")
# The child's address space: a runaway allocation fails instead of taking the
# shared machine's memory.
_MEMORY = 8 << 30

# The child: one path a line in, one outcome a line out (on a private copy of
# stdout, so nothing the compiler prints can garble the answers). argv: the
# isolation setting and the parse time limit.
_CHILD = r"""
import os, sys
answers = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
import pathlib, xlac
options = xlac.Options.from_env().replace(cache_dir=None, progress="off")
if hasattr(options, "isolate_input"):
    options = options.replace(isolate_input=sys.argv[1] == "1", parse_timeout=float(sys.argv[2]))
for line in sys.stdin:
    try:
        xlac.compile(pathlib.Path(line.rstrip("\n")), cache=False, options=options)
        answer = "ok"
    except xlac.XlacError as exc:
        answer = "error " + type(exc).__name__
    except BaseException as exc:
        answer = "traceback " + type(exc).__name__ + ": " + repr(str(exc)[:200])
    answers.write(answer.replace("\n", " ") + "\n")
"""
# A CLI parses under its default time limit (20 s), then compiles: it gets this much more.
_CLI_GRACE = 25.0


def _limit_memory(process: subprocess.Popen) -> subprocess.Popen:
    """Set after the start (no ``preexec_fn``: that would fork a threaded caller)."""
    try:
        resource.prlimit(process.pid, resource.RLIMIT_AS, (_MEMORY, _MEMORY))
    except (ProcessLookupError, PermissionError, OSError):
        pass
    return process


def _environment(workdir: Path | None = None) -> dict:
    """The caller's environment; the CLIs' compile cache in ``workdir``."""
    env = dict(os.environ)
    if workdir is not None:
        env["XDG_CACHE_HOME"] = str(workdir / "cache")
    return env


class ApiChild:
    """A Python process compiling the inputs it is sent, one at a time."""

    def __init__(self, python: str, timeout: float, isolate: str = "1"):
        self.python, self.timeout, self.isolate = python, timeout, isolate
        self.process: subprocess.Popen | None = None

    def compile(self, path: Path) -> tuple[str, str]:
        if self.process is None:
            self.process = _limit_memory(subprocess.Popen(
                [self.python, "-c", _CHILD, self.isolate, str(self.timeout / 4)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, env=_environment(),
                start_new_session=True))
        try:
            self.process.stdin.write(f"{path}\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return self._died()
        ready = select.select([self.process.stdout], [], [], self.timeout)[0]
        if not ready:
            self.close()
            return "hang", f"no answer in {self.timeout:.0f} s"
        answer = self.process.stdout.readline()
        if not answer:
            return self._died()
        kind, _, detail = answer.strip().partition(" ")
        return kind, detail

    def _died(self) -> tuple[str, str]:
        code = self.process.wait()
        self.process = None
        return "crash", _death(code)

    def close(self) -> None:
        if self.process is not None:
            _kill_group(self.process)
            self.process = None


def run_cli(bin_dir: str, tool: str, path: Path, workdir: Path, timeout: float):
    """One CLI run: ok (0), error (1 and a diagnostic), traceback, crash or hang."""
    command = [str(Path(bin_dir) / tool), str(path)]
    if tool == "xla-compile":
        command += ["-o", str(workdir / "out.so")]
    process = _limit_memory(subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_environment(workdir),
        start_new_session=True))
    try:
        _, stderr = process.communicate(timeout=timeout + _CLI_GRACE)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        return "hang", f"{tool}: no exit in {timeout + _CLI_GRACE:.0f} s"
    text = stderr.decode(errors="replace")
    if process.returncode < 0:
        return "crash", f"{tool}: {_death(process.returncode)}"
    if "Traceback (most recent call last)" in text or "internal error" in text:
        return "traceback", f"{tool}: {text.strip().splitlines()[-1] if text.strip() else ''}"
    if process.returncode == 0:
        return "ok", ""
    if process.returncode == 1 and text.strip():
        return "error", text.strip().splitlines()[0][:200]
    return "crash", f"{tool}: exit status {process.returncode}: {text.strip()[-200:]}"


def _death(code: int) -> str:
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


if __name__ == "__main__":
    sys.exit("run python -m xlac.tools.fuzz")
