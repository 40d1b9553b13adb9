"""bench/sweep.py's --before-tree refuses a tree whose xlac would import this
tree's passes: a plain git worktree has no python/xlac/passes link, and its
'before' column then timed the new code (found timing issue 39's converts)."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
try:
    import sweep
finally:
    sys.path.remove(str(REPO / "bench"))


def test_before_tree_without_linked_passes_is_refused(tmp_path):
    (tmp_path / "python" / "xlac").mkdir(parents=True)
    with pytest.raises(SystemExit):
        sweep.parse_args(["--before-tree", str(tmp_path)])


def test_before_tree_with_linked_passes_is_taken(tmp_path):
    (tmp_path / "passes").mkdir()
    (tmp_path / "python" / "xlac").mkdir(parents=True)
    (tmp_path / "python" / "xlac" / "passes").symlink_to("../../passes")
    assert sweep.parse_args(["--before-tree", str(tmp_path)]).before_tree == tmp_path
