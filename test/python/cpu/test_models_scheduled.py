"""Every schedule xla-apply-schedules plans for the shared real models applies.

A planned schedule that fails is not wrong (its ops run as scalar loops and the
numbers stay right), so only the fusion report says so; but it costs the run
time of that kernel and, since the module's schedules are then tried one by
one, the compile time of all (ViT's 4-D softmax failing made its compile 1.6 ->
4.1 s). The models are compiled here and their reports read."""

from __future__ import annotations

import pytest

import xlac
from conftest import REPO

SHARED_MODELS = REPO.parent / "shared" / "models"
MODELS = ["flax_cnn_train_step", "flax_resnet18", "hf_bert", "hf_gpt2", "hf_vit", "jax_nbody"]


@pytest.mark.heavy
@pytest.mark.parametrize("cpu", ["x86-64-v3", "x86-64-v4"])     # the plans differ per vector width
@pytest.mark.parametrize("name", MODELS)
def test_every_planned_schedule_applies(name, cpu):
    """Compiled only (no run): the same check on any host."""
    path = SHARED_MODELS / f"{name}.mlir"
    if not path.exists():
        pytest.skip(f"the shared models are not at {SHARED_MODELS}")
    report = xlac.compile(path.read_text(), cpu=cpu, cache=False).fusion_report()
    failed = [line for line in report.splitlines() if "did not apply" in line]
    assert not failed, "\n".join(failed[:5])
