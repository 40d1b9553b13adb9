"""``bench/pass_costs.py --workers``: the fingerprints of a run whose
xla-apply-schedules takes the halves (a worker lent) are those of a run that
schedules whole, on a program with enough kernels to be split."""

from __future__ import annotations

import json

import pytest

from conftest import REPO


@pytest.mark.heavy
def test_fingerprints_with_workers_lent_are_those_without(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import pass_costs

    from xlac.passes.cpu.plans import schedule_halves
    taken = []
    real = schedule_halves.applied_in_halves
    monkeypatch.setattr("xlac.passes.cpu.apply_schedules.applied_in_halves",
                        lambda module, planned: taken.append(real(module, planned)) or taken[-1])
    program = ["--programs", "transformer_block", "--no-per-pass"]
    pass_costs.main([*program, "--fingerprints", str(tmp_path / "whole.json")])
    assert taken and not any(taken)          # no worker: whole (a warm-up run first)
    pass_costs.main([*program, "--workers", "1", "--fingerprints", str(tmp_path / "halves.json")])
    assert taken[-1] is True
    whole, halves = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("whole", "halves"))
    assert whole == halves
