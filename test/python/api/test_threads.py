"""Every kind of executable is safe to call from many threads at once.

8 threads x 1,000 calls on each kind (JIT, loaded, deserialized, dynamic
shapes: there each thread's shape differs, so specializations are compiled
and looked up while others call), every result checked.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from executable_kinds import KINDS, executables

THREADS, CALLS = 8, 1000
pytestmark = pytest.mark.heavy          # ~15-20 s on 2 cores: 32,000 checked calls


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return executables(["f32", "i32"], tmp_path_factory.mktemp("threads"))


def hammer(exe, rows_of) -> tuple[int, int]:
    """(errors, wrong results) over THREADS x CALLS calls."""
    errors, wrong = [], []
    start = threading.Barrier(THREADS)

    def calls(thread: int):
        rng = np.random.default_rng(thread)
        rows = rows_of(thread)
        start.wait()
        for _ in range(CALLS):
            x = rng.standard_normal((rows, 3)).astype(np.float32)
            n = rng.integers(-1000, 1000, (rows, 3), dtype=np.int32)
            try:
                doubled_x, doubled_n = exe.run(x, n)
            except Exception as error:  # noqa: BLE001 - counted
                errors.append(repr(error))
                continue
            if not (np.array_equal(doubled_x, x + x) and np.array_equal(doubled_n, n + n)):
                wrong.append(thread)

    threads = [threading.Thread(target=calls, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    return len(errors), len(wrong)


@pytest.mark.parametrize("kind", KINDS)
def test_calls_from_eight_threads_are_all_right(kinds, kind):
    exe = kinds[kind]
    rows_of = (lambda thread: 1 + thread % 3) if kind == "dynamic" else (lambda thread: 2)
    assert hammer(exe, rows_of) == (0, 0)
    if kind == "dynamic":
        assert sorted(exe.specializations) == [((r, 3), (r, 3)) for r in (1, 2, 3)]
