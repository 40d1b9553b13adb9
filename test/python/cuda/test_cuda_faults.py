"""What a GPU user meets when things go wrong, and many threads calling one
program: out of device memory, a kernel that faults, the GPU picked with
``device=``, and 8 threads x 1,000 calls. Through the fake driver here; the
``gpu`` variants run on a GPU and skip, saying why, without one."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from xlac.targets.cuda.errors import CudaUnavailable, GpuContextLost, KernelFault  # noqa: E402
from xlac_emulator.fake_cuda import FakeDriver  # noqa: E402

ADD_MUL = """
func.func @main(%a: tensor<100x77xf32>, %b: tensor<100x77xf32>) -> tensor<100x77xf32> {
  %0 = stablehlo.add %a, %b : tensor<100x77xf32>
  %1 = stablehlo.multiply %0, %a : tensor<100x77xf32>
  return %1 : tensor<100x77xf32>
}"""
BUFFER = 100 * 77 * 4                    # bytes of each argument's device buffer

SMALL = """
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %a, %b : tensor<8xf32>
  %1 = stablehlo.multiply %0, %a : tensor<8xf32>
  return %1 : tensor<8xf32>
}"""


def _on_fake(text: str, **fake_options):
    exe = xlac.compile(text, target="cuda")
    fake = FakeDriver(execute=True, kernels=exe.function.kernels, **fake_options)
    exe.function._driver = fake
    return exe, fake


def _gpu_or_skip(text: str, **options):
    exe = xlac.compile(text, target="cuda", **options)
    a = np.ones((8,), np.float32) if "8xf32" in text else np.ones((100, 77), np.float32)
    try:
        exe.run(a, a)
    except CudaUnavailable as error:
        pytest.skip(f"needs an NVIDIA GPU: {error}")
    return exe


def test_out_of_device_memory_names_the_bytes_and_leaves_the_executable_usable():
    exe, fake = _on_fake(ADD_MUL, memory_bytes=2 * BUFFER + 100)     # room for 2 of 3 buffers
    a = np.arange(7700, dtype=np.float32).reshape(100, 77) / 7700
    with pytest.raises(xlac.ResourceLimitError) as caught:
        exe.run(a, a)
    message = str(caught.value)
    assert f"asked for {BUFFER} bytes" in message and "100 bytes free of" in message, message
    assert "exe.function.close()" in message
    assert not fake.memory                          # the call's partial allocations: freed
    fake.memory_bytes = None                        # memory freed elsewhere: the same executable runs
    (out,) = exe.run(a, a)
    np.testing.assert_allclose(out, (a + a) * a, rtol=1e-6)


def test_a_kernel_fault_names_the_kernel_and_later_calls_say_the_context_is_lost():
    exe, fake = _on_fake(ADD_MUL)
    (kernel,) = {s.kernel for s in exe.function.steps if type(s).__name__ == "Launch"}
    fake.faulting_kernels = (kernel,)
    a = np.ones((100, 77), np.float32)
    with pytest.raises(KernelFault) as caught:
        exe.run(a, a)
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in str(caught.value)
    assert f"the kernel launched last: {kernel}" in str(caught.value)
    with pytest.raises(GpuContextLost, match="the GPU context is lost") as later:
        exe.run(a, a)
    assert not isinstance(later.value, KernelFault) and kernel in str(later.value)
    other = xlac.compile(SMALL, target="cuda")      # another program on that GPU: lost too
    other.function._driver = fake
    with pytest.raises(GpuContextLost, match="restart the process"):
        other.run(np.ones(8, np.float32), np.ones(8, np.float32))


def test_a_fault_found_reading_an_asynchronous_result_names_the_kernel(monkeypatch):
    from xlac.targets.cuda import driver
    exe, fake = _on_fake(ADD_MUL, deferred=True)   # work waits until something waits for it
    monkeypatch.setattr(driver, "_DRIVERS", {(0, False): fake})
    (kernel,) = {s.kernel for s in exe.function.steps if type(s).__name__ == "Launch"}
    fake.faulting_kernels = (kernel,)
    a = xlac.device_put(np.ones((100, 77), np.float32))
    result = exe(a, a)                             # enqueued: nothing ran, nothing failed yet
    with pytest.raises(KernelFault, match=f"the kernel launched last: {kernel}"):
        result.block_until_ready()
    with pytest.raises(GpuContextLost, match="restart the process"):
        result.numpy()


def test_device_option_picks_the_gpu_and_the_local_rank_is_the_default():
    assert xlac.compile(SMALL, target="cuda", device=1).function._device == 1
    assert xlac.compile(SMALL, target="cuda", device=1).function._exact_device
    options = xlac.Options.from_env({"XLAC_DEVICE": "2", "MPI_LOCALRANKID": "1"})
    assert xlac.compile(SMALL, target="cuda", options=options).function._device == 2
    ranked = xlac.Options.from_env({"MPI_LOCALRANKID": "1"})
    function = xlac.compile(SMALL, target="cuda", options=ranked).function
    assert (function._device, function._exact_device) == (1, False)


def _hammer(exe, threads: int, calls: int) -> tuple[int, int]:
    """``threads`` threads each calling ``exe`` ``calls`` times with inputs of their
    own; (errors, wrong results)."""
    errors, wrong = [], []

    def work(seed: int) -> None:
        a = np.full(8, seed, np.float32) + np.arange(8, dtype=np.float32)
        b = np.full(8, 0.5 * seed, np.float32)
        for _ in range(calls):
            try:
                (out,) = exe.run(a, b)
            except Exception as error:  # noqa: BLE001 - counted, the test says which
                errors.append(repr(error))
                continue
            if not np.array_equal(out, (a + b) * a):
                wrong.append(seed)

    workers = [threading.Thread(target=work, args=(seed,)) for seed in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors[:3]
    return len(errors), len(wrong)


def test_eight_threads_call_one_executable_a_thousand_times_each():
    exe, fake = _on_fake(SMALL)
    assert _hammer(exe, 8, 1000) == (0, 0)
    assert len(fake.current_threads) == 8           # each thread made the GPU context its own
    assert len(fake.launches) == 8000


def test_a_result_dropped_on_a_thread_that_never_called_goes_back_to_the_pool():
    exe, fake = _on_fake(SMALL)
    a = np.ones(8, np.float32)
    held = [exe(a, a)]                               # a DeviceArray, made on this thread
    np.testing.assert_array_equal(held[0].numpy(), (a + a) * a)
    pooled = sum(map(len, fake.pool.values()))
    dropper = threading.Thread(target=held.clear)    # its last reference goes there
    dropper.start()
    dropper.join()
    assert sum(map(len, fake.pool.values())) == pooled + 1     # freed, not leaked


def test_gpu_out_of_memory_is_a_resource_limit_error():
    huge = ADD_MUL.replace("100x77", "400000x100000")          # 3 x 160 GB: more than any GPU
    exe = _gpu_or_skip(SMALL)                                   # skips without a GPU
    big = xlac.compile(huge, target="cuda")
    with pytest.raises(xlac.ResourceLimitError, match="bytes free of"):
        big.function([0, 0, 0])
    a = np.ones(8, np.float32)
    np.testing.assert_array_equal(exe.run(a, a)[0], (a + a) * a)       # the process still runs


def test_gpu_device_beyond_the_machine_is_a_clear_error():
    _gpu_or_skip(SMALL)
    with pytest.raises(CudaUnavailable, match="device= takes 0 to"):
        xlac.compile(SMALL, target="cuda", device=4096).run(np.ones(8, np.float32), np.ones(8, np.float32))


def test_gpu_eight_threads_call_one_executable_a_thousand_times_each():
    exe = _gpu_or_skip(SMALL)
    assert _hammer(exe, 8, 1000) == (0, 0)


GOOD_KERNEL = """
define ptx_kernel void @main_kernel(ptr %p) {
  store float 1.0, ptr %p
  ret void
}
"""
# setmaxnreg needs sm_90a: LLVM's instruction selection for sm_90 aborts the process on it
SM90A_KERNEL = """
declare void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32)
define ptx_kernel void @main_kernel(ptr %p) {
  call void @llvm.nvvm.setmaxnreg.inc.sync.aligned.u32(i32 240)
  ret void
}
"""


def test_an_nvptx_abort_is_a_compile_error_naming_the_kernel():
    from xlac.targets.cuda.ptx import to_ptx
    kernels = {f"xla_gpu_kernel_{i}": GOOD_KERNEL for i in range(5)}
    kernels["xla_gpu_kernel_bad"] = SM90A_KERNEL
    kernels |= {f"xla_gpu_kernel_{i}": GOOD_KERNEL for i in range(5, 9)}
    with pytest.raises(xlac.CompileError) as caught:
        to_ptx(kernels)
    message = str(caught.value)
    assert "crashed (SIGABRT) on kernel xla_gpu_kernel_bad;" in message, message
    assert "Cannot select" in message and "setmaxnreg" in message
    ptx = to_ptx({"xla_gpu_kernel_0": GOOD_KERNEL})      # this process, and a fresh worker, go on
    assert ".entry xla_gpu_kernel_0(" in ptx
