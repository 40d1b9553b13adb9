"""The architecture holds: no import circles, imports only down the layers of
docs/architecture.md, one module reading XLAC_*, no pass reading the
environment, no private names across modules, small files, the linter clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import house
import pytest

from conftest import REPO

KNOWN = house.modules()
GRAPH = house.imports(KNOWN)


def test_no_import_circles():
    assert house.circles(GRAPH) == []


def test_imports_run_down_the_layers():
    assert house.wrong_way(GRAPH) == []


def test_the_architecture_picture_is_drawn_from_the_code():
    page = (REPO / "docs" / "architecture.md").read_text()
    assert house.mermaid(GRAPH) in page, "regenerate: python test/support/house.py"


def test_only_the_options_record_reads_xlac_variables():
    readers = {m for m, uses in house.environment_reads(KNOWN).items()
               if any(u.startswith('"XLAC_') for u in uses)}
    assert readers == {"xlac.options"}


def test_no_pass_reads_the_environment():
    assert [m for m in house.environment_reads(KNOWN) if m.startswith("xlac.passes")] == []


def test_no_target_is_told_apart_by_its_name_outside_the_targets():
    assert house.target_name_comparisons(KNOWN) == []


def test_no_private_name_is_imported_across_modules():
    assert house.private_imports(KNOWN) == []


@pytest.mark.parametrize("root", ["python", "passes", "dialects", "tools", "bench", "test"])
def test_no_file_over_400_lines(root):
    long = [f"{p.relative_to(REPO)}: {n}" for p in (REPO / root).rglob("*.py")
            if "Output" not in p.parts and (n := len(p.read_text().splitlines())) > 400]
    assert long == []


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run([str(ruff), "check", str(REPO)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
