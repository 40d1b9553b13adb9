"""Generated documentation stays in step with the code."""

from __future__ import annotations

from conftest import REPO
from xlac.passes.ingest.op_table import all_ops, markdown

DOCS = REPO / "docs"


def test_op_support_page_is_current():
    assert (DOCS / "op-support.md").read_text() == markdown(), \
        "regenerate it: python -m xlac.passes.ingest.op_table > docs/op-support.md"


def test_op_table_knows_the_common_ops():
    ops = set(all_ops())
    assert {"stablehlo.add", "stablehlo.scatter", "chlo.erf", "stablehlo.while"} <= ops


def test_targets_page_is_generated_from_the_tables():
    from xlac.targets.docs import markdown as targets_markdown
    assert (DOCS / "targets.md").read_text() == targets_markdown(), \
        "regenerate it: python -m xlac.targets.docs > docs/targets.md"
