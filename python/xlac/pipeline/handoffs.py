"""What a pass leaves for the target's compiler right after it (the targets
reach the passes only through the pipeline's layer)."""

from __future__ import annotations


def printed_kernels(module) -> dict[str, str]:
    """The kernels' texts ``xla-outline-kernels`` printed in its last run, if that
    run was on ``module`` (an ``ir.Operation``), for the pieces' keys made right
    after it (``xlac.passes.cpu.outline_kernels.printed_texts``); taken once."""
    from xlac.passes.cpu.outline_kernels import printed_texts
    return printed_texts(module)
