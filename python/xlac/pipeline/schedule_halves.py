"""What the CPU target's piece workers do for xla-apply-schedules
(``xlac.passes.cpu.plans.schedule_halves``): the target lends them to the pass,
and a worker schedules the half of the kernels it is given. Here because the
targets reach the passes through the pipeline (test/support/house.py)."""

from __future__ import annotations

from xlac.mlir import ir
from xlac.passes.cpu.plans.schedule_halves import Lender, lent_workers
from xlac.passes.cpu.plans.schedule_script import clean_up, interpret

__all__ = ["Lender", "lent_workers", "schedule_half"]


def schedule_half(module: ir.Operation) -> str:
    """The schedules appended to ``module`` applied and cleaned up: why not, or ""."""
    return interpret(module) or clean_up(module)
