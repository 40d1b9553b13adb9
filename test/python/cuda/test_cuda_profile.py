"""exe.profile() on target="cuda": every launch and device copy timed by CUDA events,
checked on the fake driver (whose GPU clock gives each launch 1 us per block of its grid,
each copy 1 ns per byte) and, where there is one, on a real GPU."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from xlac.targets.cuda.control_flow import walk_steps  # noqa: E402
from xlac.targets.cuda.runtime import CudaError, CudaFunction, CudaUnavailable  # noqa: E402
from xlac.targets.cuda.schedule import Collective, Copy, Launch  # noqa: E402
from xlac_emulator.fake_cuda import COPY_MS_PER_BYTE, LAUNCH_MS_PER_BLOCK, FakeDriver  # noqa: E402

# two kernels: the matmul with its exp epilogue, then a second matmul
TWO_KERNELS = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = stablehlo.tanh %0 : tensor<64x64xf32>
  %2 = stablehlo.dot_general %1, %b, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %2 : tensor<64x64xf32>
}"""

# a data-dependent loop: counts %n down to zero, adding 1 to %x each trip; its predicate
# is read back to the host before every trip and once more at the end
COUNTDOWN = """
func.func @main(%x: tensor<2x3xf32>, %n: tensor<i32>) -> tensor<2x3xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %step = stablehlo.constant dense<1.0> : tensor<2x3xf32>
  %r:2 = stablehlo.while(%k = %n, %acc = %x) : tensor<i32>, tensor<2x3xf32>
    cond {
      %more = stablehlo.compare GT, %k, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %more : tensor<i1>
    } do {
      %k1 = stablehlo.subtract %k, %one : tensor<i32>
      %acc1 = stablehlo.add %acc, %step : tensor<2x3xf32>
      stablehlo.return %k1, %acc1 : tensor<i32>, tensor<2x3xf32>
    }
  return %r#1 : tensor<2x3xf32>
}"""


# one kernel, and the input returned as it is: a device-to-device copy
PASS_THROUGH = """
func.func @main(%a: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %0 = stablehlo.exponential %a : tensor<64xf32>
  return %0, %a : tensor<64xf32>, tensor<64xf32>
}"""


def _on_fake(text: str):
    exe = xlac.compile(text, target="cuda", cache=False)
    fake = FakeDriver(execute=True, kernels=exe.function.kernels)
    exe.function._driver = fake
    return exe, fake


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((64, 64), np.float32) / 8 for _ in range(2)]


def test_the_profile_names_every_launch_with_its_count_and_fake_time(tmp_path):
    exe, fake = _on_fake(TWO_KERNELS)
    launches = [s for s in walk_steps(exe.function.steps) if isinstance(s, Launch)]
    assert len(launches) == 2
    profile = exe.profile(*_inputs(), runs=3)
    rows = {row.name: row for row in profile.kernels()}
    assert set(rows) == {step.kernel for step in launches}
    for step in launches:
        row = rows[step.kernel]
        assert row.calls == 3                                  # one per run, the warm-up left out
        expected = LAUNCH_MS_PER_BLOCK * int(np.prod(step.grid))
        assert row.mean_ms == pytest.approx(expected, abs=1e-6)
        assert row.total_ms == pytest.approx(3 * expected, abs=1e-6)
    spans = [(end - start) / 1e6 for _, start, end in profile.events]
    assert sum(row.total_ms for row in rows.values()) == pytest.approx(sum(spans))
    assert sum(row.share for row in rows.values()) == pytest.approx(1.0)
    assert fake.calls["launch_graph"] == 0 and fake.calls["begin_capture"] == 0   # kernel by kernel
    table = profile.table()
    assert "mean us" in table and "read-backs" not in table and all(name in table for name in rows)


def test_the_trace_has_one_span_per_launch_on_a_gpu_stream_track(tmp_path):
    exe, _ = _on_fake(TWO_KERNELS)
    profile = exe.profile(*_inputs(), runs=2)
    profile.write_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == 2 * 2                                # two launches, two runs
    assert {e["tid"] for e in spans} == {0}
    assert any(e["name"] == "thread_name" and e["args"]["name"] == "GPU stream" for e in events)
    assert min(e["ts"] for e in spans) == 0 and all(e["dur"] > 0 for e in spans)
    ordered = sorted(spans, key=lambda e: e["ts"])
    assert all(a["ts"] + a["dur"] <= b["ts"] + 1e-9 for a, b in zip(ordered, ordered[1:]))


def test_the_profiled_run_gives_the_normal_runs_results():
    exe, _ = _on_fake(TWO_KERNELS)
    a, b = _inputs()
    (normal,) = exe.run(a, b)
    exe.profile(a, b, runs=1)
    (again,) = exe.run(a, b)
    expected = np.tanh(a @ b) @ b
    np.testing.assert_allclose(normal, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(again, normal)              # the executable is untouched
    profiled = exe.function.profiled()
    profiled._driver = FakeDriver(execute=True, kernels=exe.function.kernels)
    (timed,) = exe.with_function(profiled).run(a, b)
    np.testing.assert_array_equal(timed, normal)
    assert profiled.clock.events                               # and it was timed


def test_loops_count_their_read_backs_and_time_each_iterations_kernels():
    exe, _ = _on_fake(COUNTDOWN)
    x, n = np.zeros((2, 3), np.float32), np.array(5, np.int32)
    profile = exe.profile(x, n, runs=2)
    assert profile.read_backs == 2 * 6                         # five trips and the last test, per run
    assert "6 host read-backs per call" in profile.table()
    assert all(row.calls % 2 == 0 for row in profile.kernels())  # the same launches every run
    assert max(row.calls for row in profile.kernels()) >= 2 * 5   # the body, every trip
    np.testing.assert_array_equal(exe.run(x, n)[0], np.full((2, 3), 5, np.float32))


def test_device_copies_are_timed_and_labelled_as_copies():
    exe, _ = _on_fake(PASS_THROUGH)
    (copy,) = [s for s in walk_steps(exe.function.steps) if isinstance(s, Copy)]
    a = np.linspace(-1, 1, 64, dtype=np.float32)
    profile = exe.profile(a, runs=2)
    rows = {row.name: row for row in profile.kernels()}
    assert len(rows) == 2
    label = f"memcpy device->device {copy.nbytes} B"
    trace = profile.chrome_trace()["traceEvents"]
    assert {e["cat"] for e in trace if e.get("name") == label} == {"copy"}
    assert rows[label].calls == 2
    assert rows[label].mean_ms == pytest.approx(COPY_MS_PER_BYTE * copy.nbytes, abs=1e-9)
    exp, same = exe.run(a)
    np.testing.assert_allclose(exp, np.exp(a), rtol=1e-5)
    np.testing.assert_array_equal(same, a)


def test_a_program_with_collectives_is_refused_with_a_reason():
    steps = [Collective("all_reduce", "f32", ("arg0", "arg1"), 4, 16, reduction="sum")]
    function = CudaFunction("", steps, [16], [16], driver=FakeDriver())
    with pytest.raises(CudaError, match="cannot time a program with collectives"):
        function.profiled()


def test_a_two_kernel_program_on_a_real_gpu():
    """Needs an NVIDIA GPU and its driver; skipped (with the reason) without one."""
    exe = xlac.compile(TWO_KERNELS, target="cuda", cache=False)
    a, b = _inputs()
    try:
        exe.run(a, b)
    except CudaUnavailable as exc:
        pytest.skip(f"no GPU: {exc}")
    start = time.perf_counter()
    profile = exe.profile(a, b, runs=5)
    wall_ms = 1e3 * (time.perf_counter() - start)
    rows = profile.kernels()
    assert len(rows) == 2 and all(row.calls == 5 and row.total_ms > 0 for row in rows)
    assert 0 < sum(row.total_ms for row in rows) < wall_ms
    np.testing.assert_allclose(exe.run(a, b)[0], np.tanh(a @ b) @ b, rtol=1e-3, atol=1e-4)
