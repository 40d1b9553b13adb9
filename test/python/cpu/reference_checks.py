"""A program's results from xlac against the reference interpreter's, bit for bit."""

from __future__ import annotations

import numpy as np

import xlac
from xlac.reference.server import shared_server


def check_against_reference(text: str, args: list[np.ndarray], cpu: str) -> None:
    expected = shared_server().run(text.encode(), args)
    got = xlac.compile(text, cpu=cpu, cache=False).run(*args)
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
