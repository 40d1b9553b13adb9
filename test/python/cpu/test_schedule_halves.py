"""xla-apply-schedules' interpreter and cleanup on two halves of the kernels,
one in a piece worker (``schedule_halves``), give the module the whole run
gives; a half that fails is run whole.

Why it matters: the halves run on both cores of a cold compile, and the
compiled code must not change for it (docs/compile-time.md). The worker is
stood in for by its own request handler (``piece_worker.scheduled``) run here.
"""

from __future__ import annotations

import io

import pytest

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.passes.cpu.plans import schedule_halves
from xlac.pipeline import pipelines
from xlac.pipeline.pass_manager import run_passes
from xlac.targets.cpu import piece_worker

# kernels of several schedule families on shapes that keep them apart: a
# transpose, a batch of rows' maxima, a matmul, elementwise ops
_PROGRAM = """
func.func public @main(%x: tensor<96x160xf32>, %y: tensor<128x256xf32>, %p: tensor<64x48xf32>,
                       %q: tensor<48x40xf32>) -> (tensor<160x96xf32>, tensor<128xf32>,
                       tensor<64x40xf32>, tensor<96x160xf32>, tensor<128x256xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<96x160xf32>) -> tensor<160x96xf32>
  %m = stablehlo.reduce(%y init: %ninf) applies stablehlo.maximum across dimensions = [1]
    : (tensor<128x256xf32>, tensor<f32>) -> tensor<128xf32>
  %pq = stablehlo.dot_general %p, %q, contracting_dims = [1] x [0]
    : (tensor<64x48xf32>, tensor<48x40xf32>) -> tensor<64x40xf32>
  %tx = stablehlo.tanh %x : tensor<96x160xf32>
  %sy = stablehlo.sqrt %y : tensor<128x256xf32>
  return %t, %m, %pq, %tx, %sy : tensor<160x96xf32>, tensor<128xf32>, tensor<64x40xf32>,
    tensor<96x160xf32>, tensor<128x256xf32>
}
"""


class _StandIn:
    """A lent worker that answers with the worker's own handler, here."""

    def __init__(self, fail: bool = False):
        self.fail, self.sent = fail, 0

    def send(self, bytecode: bytes) -> None:
        self.sent += 1
        self.answer = piece_worker.scheduled(bytecode)

    def receive(self) -> tuple[bytes, str]:
        if self.fail:
            return b"", "the piece worker died"
        return self.answer[0], self.answer[1].decode()


def _scheduled(lent: _StandIn | None) -> str:
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg()
               + ["xla-apply-schedules{threads=2 vector-bytes=32}"],
               lender=(lambda: lent) if lent is not None else None)
    return module.operation.get_asm(enable_debug_info=False)


@pytest.fixture
def few_kernels(monkeypatch):
    monkeypatch.setattr(schedule_halves, "MIN_KERNELS", 2)


def test_halves_give_the_module_the_whole_run_gives(few_kernels):
    whole = _scheduled(None)
    lent = _StandIn()
    assert _scheduled(lent) == whole
    assert lent.sent == 1 and lent.answer[1] == b""     # a half was scheduled there


def test_a_failed_half_is_run_whole(few_kernels):
    lent = _StandIn(fail=True)
    assert _scheduled(lent) == _scheduled(None)
    assert lent.sent == 1


def test_few_kernels_are_not_split():
    lent = _StandIn()
    _scheduled(lent)
    assert lent.sent == 0


def test_the_worker_says_why_a_half_failed():
    module = parse_module(new_context(), b"func.func @f() {\n  return\n}\n", "m.mlir")
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    code, why = piece_worker.scheduled(buffer.getvalue())      # no script in it
    assert code == b"" and b"__transform_main" in why


@pytest.mark.heavy
def test_a_real_worker_schedules_a_half(few_kernels):
    from xlac.targets.cpu import pieces, schedule_worker
    pieces.start_workers(1)
    taken = []

    def lend():
        taken.append(schedule_worker.lend())
        return taken[-1]
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    run_passes(module, pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg()
               + ["xla-apply-schedules{threads=2 vector-bytes=32}"], lender=lend)
    split = module.operation.get_asm(enable_debug_info=False)
    assert taken and taken[0] is not None
    assert split == _scheduled(None)
    again = pieces.take_idle()
    pieces.give_back(again)
    assert again is taken[0].worker                   # given back once it answered


def _run_by_stage_runner(lender) -> None:
    from xlac.options import Options
    from xlac.pipeline.runner import StageRunner
    runner = StageRunner(Options.from_env())
    runner.lender = lender
    module = parse_module(new_context(), _PROGRAM.encode(), "program.mlir")
    runner.run(module, "scheduled", pipelines.ingest() + pipelines.fuse() + pipelines.lower_to_linalg()
               + ["xla-apply-schedules{threads=2 vector-bytes=32}"])


def test_only_the_compile_that_lends_borrows(few_kernels):
    """The lender is the compile's (its runner's), not the process's: a compile
    that lent its workers left them lent to every later compile in the process,
    whose schedules then went to workers it had not started."""
    lent = _StandIn()
    _run_by_stage_runner(lambda: lent)
    assert lent.sent == 1
    _run_by_stage_runner(None)                        # the next compile lends nothing
    assert lent.sent == 1
    assert schedule_halves._lender.get() is None


def test_the_cpu_target_lends_to_its_own_compile(monkeypatch):
    """A big program's compile starts the workers and lends them to its runner
    alone; the process-wide lender stays unset."""
    from types import SimpleNamespace

    from xlac.options import Options
    from xlac.targets.cpu import compile as cpu_compile
    from xlac.targets.cpu import pieces, schedule_worker
    monkeypatch.setattr(pieces, "likely_big", lambda module: True)
    monkeypatch.setattr(pieces, "start_workers", lambda count: None)
    monkeypatch.setattr(cpu_compile, "WrapperObject", lambda *args: None)
    runner = SimpleNamespace(lender=None)
    cpu_compile.CpuCompiler(Options.from_env(), None).ingested(None, "main", None, runner)
    assert runner.lender is schedule_worker.lend
    assert schedule_halves._lender.get() is None
