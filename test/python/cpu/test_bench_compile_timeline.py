"""bench/compile_timeline.py's summary of a timeline (in this process: quick)."""

from __future__ import annotations

import importlib
import sys

from conftest import REPO


def _tool():
    if str(REPO / "bench") not in sys.path:
        sys.path.insert(0, str(REPO / "bench"))
    return importlib.import_module("compile_timeline")


def _timeline(marks):
    tool = _tool()
    timeline = tool.Timeline()
    timeline.events = [{"name": name, "wall": wall, "cpu": cpu, **extra}
                       for name, wall, cpu, extra in marks]
    return tool.summary(timeline)


def test_the_critical_path_ends_when_the_last_piece_is_made():
    found = _timeline([
        ("compile start", 0.5, 0.2, {}),
        ("stage start", 0.6, 0.3, {"stage": "bufferized"}),
        ("stage end", 0.9, 0.5, {"stage": "bufferized"}),
        ("cut", 1.0, 0.6, {"workers_cpu": [0.1]}),
        ("make piece start", 1.01, 0.61, {}), ("make piece end", 1.02, 0.62, {}),
        ("piece start", 1.03, 0.63, {}),
        ("make piece start", 1.04, 0.63, {}), ("make piece end", 1.10, 0.68, {}),
        ("piece start", 1.11, 0.69, {}),
        ("piece end", 1.5, 0.7, {}), ("piece end", 1.8, 0.71, {}),
        ("compile end", 1.9, 0.75, {})])
    assert found["critical_path"] == 1.10 - 0.5 and found["critical_path_cpu"] == 0.68 - 0.2
    assert found["front_and_lowering"] == 0.5 and round(found["cut_to_first_piece"], 6) == 0.03
    assert round(found["split"], 6) == 0.09 and round(found["workers"], 6) == 1.8 - 1.03
    assert found["stages_cpu"] == {"bufferized": 0.2} and found["pieces"] == 2


def test_the_links_wait_for_the_micro_kernels_is_its_own_span():
    found = _timeline([
        ("compile start", 0.5, 0.2, {}),
        ("cut", 1.0, 0.6, {"workers_cpu": [0.1]}),
        ("make piece start", 1.01, 0.61, {}), ("make piece end", 1.02, 0.62, {}),
        ("piece start", 1.03, 0.63, {}), ("piece end", 1.5, 0.7, {}),
        ("link kernels start", 1.6, 0.72, {}), ("link kernels end", 1.66, 0.78, {}),
        ("compile end", 1.9, 0.8, {})])
    assert round(found["link_kernels"], 6) == 0.06 and found["link_kernels_cpu"] == 0.06
    assert _timeline([("compile start", 0.5, 0.2, {}), ("cut", 1.0, 0.6, {}),
                      ("make piece start", 1.01, 0.61, {}), ("make piece end", 1.02, 0.62, {}),
                      ("piece start", 1.03, 0.63, {}), ("piece end", 1.5, 0.7, {}),
                      ("compile end", 1.9, 0.8, {})])["link_kernels"] is None
