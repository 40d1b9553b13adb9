"""The fuzz harness (xlac.tools.fuzz): a short seeded run finds no crash, hang or
traceback, and every input a longer run ever found bad (test/fuzz/corpus) is
now a clean error or a success, through the API and the CLIs."""

from __future__ import annotations

import argparse
import gzip
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xlac.tools import fuzz, fuzz_inputs
from xlac.tools.fuzz_runner import ApiChild, run_cli

CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus"
BIN = str(Path(sys.executable).parent)


def corpus_inputs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.name != "README.md")


def _materialized(path: Path, tmp_path: Path) -> Path:
    """A corpus file as the bytes a user would pass (big ones are stored gzipped)."""
    if path.suffix != ".gz":
        return path
    out = tmp_path / path.stem
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def test_mutations_are_reproducible():
    forms = fuzz_inputs.seed_forms(fuzz_inputs.OWN_SEEDS["add_mul"])
    assert set(forms) == set(fuzz_inputs.FORMS)
    assert forms["bytecode"].startswith(b"ML\xefR") and b"StableHLO" in forms["vhlo"][:64]
    made = [fuzz_inputs.mutate(forms[form], form, random.Random(f"7:{i}"), [])
            for i, form in enumerate(fuzz_inputs.FORMS * 5)]
    again = [fuzz_inputs.mutate(forms[form], form, random.Random(f"7:{i}"), [])
             for i, form in enumerate(fuzz_inputs.FORMS * 5)]
    assert made == again and len({data for data, _ in made}) > 15


def test_a_short_fuzz_run_has_no_crash_hang_or_traceback(tmp_path):
    args = argparse.Namespace(n=200, seed=11, timeout=20.0, cli_every=0, python=sys.executable,
                              bin=BIN, shared="", isolate="1", corpus=str(tmp_path), progress=0)
    start = time.monotonic()
    table = fuzz.run(args)
    bad = {key: count for key, count in table.items() if key[1] in fuzz.BAD}
    assert bad == {}, f"{fuzz.format_table(table)}\ninputs kept in {tmp_path}"
    assert sum(count for (row, _), count in table.items() if row == "driver:api") == 200
    assert time.monotonic() - start < 120


def test_every_corpus_input_is_a_clean_error_or_a_success_through_the_api(tmp_path):
    inputs = corpus_inputs()
    assert inputs, "the corpus is empty"
    child = ApiChild(sys.executable, timeout=12.0)        # parses get 3 s each
    try:
        outcomes = {p.name: child.compile(_materialized(p, tmp_path)) for p in inputs}
    finally:
        child.close()
    bad = {name: outcome for name, outcome in outcomes.items() if outcome[0] not in ("ok", "error")}
    assert bad == {}


def _one_of_each_kind_and_form() -> list[Path]:
    chosen = {}
    for path in corpus_inputs():
        kind, form = path.name.split("-")[:2]
        chosen.setdefault((kind, form), path)
    return list(chosen.values())


@pytest.mark.heavy
def test_corpus_inputs_through_the_clis_exit_1_with_diagnostics(tmp_path, monkeypatch):
    # one input of each kind (crash, hang) and form, each through one CLI in turn:
    # a CLI run is a process start
    monkeypatch.setenv("XLAC_PARSE_TIMEOUT", "3")          # the hangs end sooner
    tools = ("xla-opt", "xla-run", "xla-compile")
    for index, path in enumerate(_one_of_each_kind_and_form()):
        tool = tools[index % len(tools)]
        outcome, detail = run_cli(BIN, tool, _materialized(path, tmp_path), tmp_path, 20.0)
        assert outcome in ("ok", "error"), f"{tool} {path.name}: {outcome}: {detail}"


@pytest.mark.heavy
@pytest.mark.parametrize("tool", ["xla-opt", "xla-run", "xla-compile"])
def test_every_corpus_input_through_every_cli(tool, tmp_path, monkeypatch):
    monkeypatch.setenv("XLAC_PARSE_TIMEOUT", "3")
    for path in corpus_inputs():
        outcome, detail = run_cli(BIN, tool, _materialized(path, tmp_path), tmp_path, 20.0)
        assert outcome in ("ok", "error"), f"{path.name}: {outcome}: {detail}"


def test_the_harness_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "xlac.tools.fuzz", "--n", "8", "--seed", "2",
                           "--cli-every", "0", "--shared", ""],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| driver:api" in done.stdout and "traceback" in done.stdout.splitlines()[0]
