"""Arrays on the device (xlac.DeviceArray) against the fake driver: results stay on the
device, calls are asynchronous, memory comes from the stream-ordered pool, DLPack
capsules and the CUDA array interface go both ways, donated inputs are deleted.
Kernels run in the SIMT emulator, so every value is checked against numpy."""

from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the cuda extra is not installed: pip install 'xlac[cuda]'")

import xlac  # noqa: E402
from xlac.targets.cuda import dlpack, driver  # noqa: E402
from xlac.targets.cuda.device_array import DeviceArray, put  # noqa: E402
from xlac.targets.cuda.device_calls import writes_after_last_read  # noqa: E402
from xlac.targets.cuda.errors import CudaUnavailable  # noqa: E402
from xlac.targets.cuda.in_place import pointwise_in  # noqa: E402
from xlac.targets.cuda.memory import device_context  # noqa: E402
from xlac.targets.cuda.schedule import Launch, View  # noqa: E402
from xlac_emulator.fake_cuda import FakeDriver  # noqa: E402

ADD_EXP = """
func.func @main(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.add %a, %b : tensor<4x3xf32>
  %1 = stablehlo.exponential %0 : tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}"""

# jax's export of jax.jit(f, donate_argnums=0): the argument names the result it may become
DONATED_SUM = """
func.func @main(%x: tensor<256xf32> {tf.aliasing_output = 0 : i32}) -> tensor<256xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0]
      : (tensor<256xf32>, tensor<f32>) -> tensor<f32>
  %o = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<256xf32>
  return %o : tensor<256xf32>
}"""

DONATED_SCALE = """
func.func @main(%x: tensor<8xf32> {jax.buffer_donor = true}) -> tensor<8xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<8xf32>
  %0 = stablehlo.multiply %x, %c : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""

DONATED_REVERSE = """
func.func @main(%x: tensor<8xf32> {tf.aliasing_output = 0 : i32}) -> tensor<8xf32> {
  %0 = stablehlo.reverse %x, dims = [0] : tensor<8xf32>
  return %0 : tensor<8xf32>
}"""

A = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
B = np.full((4, 3), 0.5, np.float32)
TRANSFERS = ("to_device", "to_host", "to_device_async", "to_host_async")


def _on_fake(monkeypatch, program: str, deferred: bool = False):
    """The program compiled for cuda, running on an executing fake driver that is
    also the process's driver (``xlac.device_put``)."""
    exe = xlac.compile(program, target="cuda")
    fake = FakeDriver(execute=True, kernels=exe.function.kernels, deferred=deferred)
    exe.function._driver = fake
    monkeypatch.setattr(driver, "_DRIVERS", {(0, False): fake})   # open_driver(0)
    return exe, fake


def _transfers(fake) -> int:
    return sum(fake.calls[name] for name in TRANSFERS)


def test_a_call_returns_device_arrays_that_numpy_reads(monkeypatch):
    exe, _ = _on_fake(monkeypatch, ADD_EXP)
    out = exe(A, B)
    assert isinstance(out, DeviceArray) and out.shape == (4, 3) and out.dtype == np.float32
    assert str(out.device) == "cuda:0" and out.nbytes == 48 and out.ndim == 2
    np.testing.assert_allclose(np.asarray(out), np.exp(A + B), rtol=1e-6)
    np.testing.assert_allclose(np.exp(out) / 2, np.exp(np.exp(A + B)) / 2, rtol=1e-5)  # __array__
    assert "dtype=float32[4, 3], device=cuda:0" in repr(out) and f"{np.exp(A + B)[0, 0]:.4f}" in repr(out)
    assert out.block_until_ready() is out


def test_run_returns_numpy_and_stages_transfers_through_pinned_memory(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP)
    hosts = []
    copy_in = fake.to_device_async
    monkeypatch.setattr(fake, "to_device_async",
                        lambda p, host, n, s: (hosts.append(host), copy_in(p, host, n, s)))
    (out,) = exe.run(A, B)
    assert type(out) is np.ndarray
    np.testing.assert_allclose(out, np.exp(A + B), rtol=1e-6)
    pinned = [(start, start + buffer.size) for start, buffer in fake.pinned.items()]
    assert len(hosts) == 2 and all(any(lo <= h < hi for lo, hi in pinned) for h in hosts)
    assert fake.calls["to_device"] == fake.calls["to_host"] == 0      # no pageable copy
    (again,) = exe.run(DeviceArray.numpy(exe(A, B)), B)                # run takes device arrays too
    np.testing.assert_allclose(exe.run(exe(A, B), B)[0], np.exp(np.exp(A + B) + B), rtol=1e-5)
    assert type(again) is np.ndarray


def test_device_resident_inputs_copy_nothing_between_host_and_device(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP)
    x, y = xlac.device_put(A), xlac.device_put(B)
    fake.calls.clear()
    z = exe(exe(x, y), y)
    assert _transfers(fake) == 0, dict(fake.calls)
    assert fake.calls["alloc"] == fake.calls["free"] == 0             # results: the pool
    np.testing.assert_allclose(z.numpy(), np.exp(np.exp(A + B) + B), rtol=1e-5)
    assert fake.calls["to_host_async"] == 1                           # reading it is the copy


def test_memory_comes_from_the_stream_ordered_pool_not_per_call_allocations(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP)
    shift = np.full((4, 3), -3, np.float32)                       # a loop that converges
    x, y = xlac.device_put(A), xlac.device_put(shift)
    expected = A
    for _ in range(6):
        x = exe(x, y)
        expected = np.exp(expected + shift)
        x.block_until_ready()
    np.testing.assert_allclose(x.numpy(), expected, rtol=1e-4)
    assert fake.calls["alloc"] == fake.calls["free"] == 0
    assert fake.calls["alloc_async"] == 2 + 6                     # the puts, one result per call
    assert fake.pool_grows <= 4                                   # freed results are taken back
    assert fake.default_pool_threshold == (1 << 64) - 1           # the pool keeps what is freed
    assert len(exe.function._graphs) <= 3                         # a graph per pointer set, reused
    for _ in range(3):
        x = exe(x, y)                                             # steady: the graphs exist
    fake.calls.clear()
    x = exe(x, y)
    # the whole call: the result's memory, one graph launch, its event, the old result freed
    assert dict(fake.calls) == {"alloc_async": 1, "launch_graph": 1, "record_event": 1,
                                "free_async": 1}


def test_a_call_returns_before_its_work_runs(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP, deferred=True)
    out = exe(A, B)
    assert fake.launches == []                                    # enqueued, not run
    assert out.__cuda_array_interface__["stream"] == exe.function._stream   # still being written
    out.block_until_ready()
    assert len(fake.launches) == 1 and out.__cuda_array_interface__["stream"] is None
    np.testing.assert_allclose(out.numpy(), np.exp(A + B), rtol=1e-6)


_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _managed(capsule, kind):
    """The capsule's struct, read with ctypes as a C consumer reads it."""
    return kind.from_address(_capsule_pointer(capsule, _capsule_name(capsule)))


def test_dlpack_legacy_capsule_layout(monkeypatch):
    exe, _ = _on_fake(monkeypatch, ADD_EXP)
    out = exe(A, B)
    assert out.__dlpack_device__() == (dlpack.DL_CUDA, 0)
    capsule = out.__dlpack__()
    assert _capsule_name(capsule) == b"dltensor"
    tensor = _managed(capsule, dlpack.DLManagedTensor).dl_tensor
    assert tensor.data == out.pointer and tensor.byte_offset == 0 and not tensor.strides
    assert (tensor.device.device_type, tensor.device.device_id) == (2, 0)
    assert [tensor.shape[i] for i in range(tensor.ndim)] == [4, 3]
    assert (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) == (2, 32, 1)
    exported = len(dlpack._EXPORTED)
    del capsule                                        # never consumed: its destructor deletes it
    assert len(dlpack._EXPORTED) == exported - 1


def test_dlpack_versioned_capsule_layout_and_copy(monkeypatch):
    exe, _ = _on_fake(monkeypatch, ADD_EXP)
    out = exe(A, B)
    capsule = out.__dlpack__(max_version=(1, 3))
    assert _capsule_name(capsule) == b"dltensor_versioned"
    managed = _managed(capsule, dlpack.DLManagedTensorVersioned)
    assert (managed.version.major, managed.version.minor) == (1, 0) and managed.flags == 0
    assert managed.dl_tensor.data == out.pointer
    copied = _managed(out.__dlpack__(max_version=(1, 0), copy=True), dlpack.DLManagedTensorVersioned)
    assert copied.flags == dlpack.IS_COPIED and copied.dl_tensor.data != out.pointer
    assert _capsule_name(out.__dlpack__(max_version=(0, 8))) == b"dltensor"


def test_dlpack_stream_rules(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP, deferred=True)
    out = exe(A, B)
    consumer = fake.create_stream()
    fake.calls.clear()
    out.__dlpack__(stream=consumer)                    # the consumer's stream waits for the writer
    assert fake.calls["wait_event"] == 1 and fake.launches == []
    fake.stream_synchronize(consumer)
    assert len(fake.launches) == 1                     # waiting on it ran the producer's work
    out.__dlpack__(stream=-1)                          # the consumer synchronizes itself
    out.__dlpack__()                                   # None: the legacy default stream waits
    assert fake.calls["wait_event"] == 2
    with pytest.raises(BufferError, match="0 is ambiguous"):
        out.__dlpack__(stream=0)


def test_host_fallback_numpy_from_dlpack(monkeypatch):
    exe, _ = _on_fake(monkeypatch, ADD_EXP)
    out = exe(A, B)
    np.testing.assert_allclose(np.from_dlpack(out, device="cpu"), np.exp(A + B), rtol=1e-6)
    with pytest.raises(BufferError, match="copy to the host"):
        out.__dlpack__(dl_device=(1, 0), copy=False)


def test_numpy_cpu_capsule_is_consumed_and_its_deleter_called():
    host = np.arange(6, dtype=np.int16).reshape(2, 3)
    references = sys.getrefcount(host)
    for version in (None, (1, 0)):
        capsule = host.__dlpack__() if version is None else host.__dlpack__(max_version=version)
        tensor = dlpack.ImportedTensor(capsule)
        assert _capsule_name(capsule).startswith(b"used_dltensor")
        assert (tensor.pointer, tensor.shape, tensor.dtype, tensor.device) == \
            (host.ctypes.data, (2, 3), np.dtype(np.int16), (dlpack.DL_CPU, 0))
        assert tensor.is_c_contiguous()
        del capsule                                    # consumed: the capsule no longer deletes it
        assert sys.getrefcount(host) > references
        tensor.release()
        assert sys.getrefcount(host) == references     # numpy's deleter ran
    with pytest.raises(BufferError, match="consumed already"):
        capsule = host.__dlpack__()
        dlpack.ImportedTensor(capsule)
        dlpack.ImportedTensor(capsule)


class ForeignCudaArray:
    """Another library's GPU array, as CuPy shows it: the CUDA array interface only."""

    def __init__(self, pointer: int, shape, dtype, stream=None, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": np.dtype(dtype).str,
                                         "data": (pointer, False), "version": 3,
                                         "strides": strides, "stream": stream}


def test_cuda_array_interface_input_is_read_in_place_after_its_stream(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP, deferred=True)
    theirs = fake.create_stream()
    pointer = fake.alloc(A.nbytes)
    fake.to_device_async(pointer, A.ctypes.data, A.nbytes, theirs)  # their pending write
    fake.calls.clear()
    out = exe(ForeignCudaArray(pointer, (4, 3), np.float32, stream=theirs), xlac.device_put(B))
    assert fake.calls["to_device_async"] == 1                        # B only
    np.testing.assert_allclose(out.numpy(), np.exp(A + B), rtol=1e-6)  # their write came first
    (_, _, _, words), = fake.launches
    assert pointer in words                                          # no copy: their memory
    strided = ForeignCudaArray(pointer, (4, 3), np.float32, strides=(4, 16))
    with pytest.raises(xlac.InputError, match="strided"):
        exe(strided, B)
    with pytest.raises(xlac.InputError, match="not device memory"):
        exe(ForeignCudaArray(A.ctypes.data, (4, 3), np.float32), B)  # host memory


def test_a_foreign_array_off_a_16_byte_boundary_is_copied_first(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP)
    memory = fake.alloc(A.nbytes + 4)
    pointer = memory + 4                                             # x[1:] of a larger array
    fake.memory[memory][4:4 + A.nbytes] = np.frombuffer(A.tobytes(), np.uint8)
    out = exe(ForeignCudaArray(pointer, (4, 3), np.float32), B)
    np.testing.assert_allclose(out.numpy(), np.exp(A + B), rtol=1e-6)
    (_, _, _, words), = fake.launches
    assert pointer not in words and fake.calls["copy_async"] == 1   # kernels read an aligned copy


class DLPackOnly:
    """A producer with DLPack only (jax.Array and torch tensors have both)."""

    def __init__(self, array):
        self._array = array
        self.asked = []

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        self.asked.append((stream, max_version))
        return self._array.__dlpack__(stream=stream, max_version=max_version)


def test_dlpack_input_is_read_in_place_and_released(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP)
    first = exe(A, B)
    producer = DLPackOnly(first)
    exported = len(dlpack._EXPORTED)
    fake.calls.clear()
    out = exe(producer, B)
    assert producer.asked == [(exe.function._stream, (1, 0))]     # our stream, DLPack 1.0
    np.testing.assert_allclose(out.numpy(), np.exp(np.exp(A + B) + B), rtol=1e-5)
    assert first.pointer in fake.launches[-1][3]
    assert len(dlpack._EXPORTED) == exported                      # consumed and deleted after use


def test_donated_input_becomes_the_result_and_is_deleted(monkeypatch):
    exe, fake = _on_fake(monkeypatch, DONATED_SUM)
    assert exe.function.donations == {0: 0}
    x = xlac.device_put(np.ones(256, np.float32))
    memory = x.pointer
    out = exe(x)
    assert x.is_deleted and out.pointer == memory                 # read before written: in place
    np.testing.assert_allclose(out.numpy(), np.full(256, 256.0))
    with pytest.raises(xlac.InputError, match="donated"):
        exe(x)
    assert "deleted" in repr(x)
    again = xlac.deserialize(exe.serialize(), target="cuda")
    assert again.function.donations == {0: 0}


def test_donated_input_of_an_elementwise_kernel_is_written_in_place(monkeypatch):
    exe, fake = _on_fake(monkeypatch, DONATED_SCALE)
    assert exe.function.donations == {0: 0}                       # jax.buffer_donor
    x = xlac.device_put(np.arange(8, dtype=np.float32))
    memory = x.pointer
    out = exe(x)
    assert x.is_deleted and out.pointer == memory                 # read pointwise where written
    np.testing.assert_allclose(out.numpy(), np.arange(8) * 2.0)


def test_donated_input_read_elsewhere_than_written_goes_back_to_the_pool(monkeypatch):
    exe, fake = _on_fake(monkeypatch, DONATED_REVERSE)
    x = xlac.device_put(np.arange(8, dtype=np.float32))
    memory = x.pointer
    out = exe(x)
    assert x.is_deleted and out.pointer != memory                 # x[7 - i] read, out[i] written
    np.testing.assert_allclose(out.numpy(), np.arange(8)[::-1])
    assert fake.calls["free_async"] >= 1 and memory not in fake.memory


def test_pointwise_kernels_are_told_from_others():
    scale = xlac.compile(DONATED_SCALE, target="cuda")
    reverse = xlac.compile(DONATED_REVERSE, target="cuda")
    (launch,) = scale.function.steps
    buffers = [value for _, value in launch.args]
    assert pointwise_in(scale.as_text("kernels"), launch.kernel, buffers.index("arg0"),
                        buffers.index("arg1"))
    assert not pointwise_in(scale.as_text("kernels"), launch.kernel, buffers.index("arg1"),
                            buffers.index("arg1"))
    (launch,) = [s for s in reverse.function.steps if isinstance(s, Launch)]
    buffers = [value for _, value in launch.args]
    assert not pointwise_in(reverse.as_text("kernels"), launch.kernel, buffers.index("arg0"),
                            buffers.index("arg1"))


def test_the_in_place_rule_on_schedules():
    read = Launch("k", (1, 1, 1), (1, 1, 1), 0, (("buf", "arg0"), ("buf", "t")))
    write = Launch("k", (1, 1, 1), (1, 1, 1), 0, (("buf", "t"), ("buf", "arg1")))
    both = Launch("k", (1, 1, 1), (1, 1, 1), 0, (("buf", "v"), ("buf", "arg1")))
    assert writes_after_last_read([read, write], "arg0", "arg1")
    assert not writes_after_last_read([write, read], "arg0", "arg1")
    assert not writes_after_last_read([View("v", "arg0"), both], "arg0", "arg1")   # through a view


def test_bad_device_inputs_are_clear_errors(monkeypatch):
    exe, fake = _on_fake(monkeypatch, ADD_EXP)
    with pytest.raises(xlac.InputError, match=r"argument 0 compiled for f32\[4,3\].*float32\[3, 4\]"):
        exe(xlac.device_put(A.T.copy()), B)
    other = put(A, device_context(FakeDriver()))                  # made by another driver
    with pytest.raises(xlac.InputError, match="another driver"):
        exe(other, B)
    with pytest.raises(xlac.InputError, match="cuda:N"):
        xlac.device_put(A, device="tpu")
    assert xlac.device_put(A, device="cuda:0").device == exe(A, B).device   # the same GPU's driver
    with pytest.raises(CudaUnavailable):          # a GPU this machine lacks: never cuda:0 instead
        xlac.device_put(A, device="cuda:1")
    with pytest.raises(ValueError, match="only copy"):
        np.asarray(exe(A, B), copy=False)


def test_a_data_dependent_loop_on_device_arrays_reads_back_only_its_predicate(monkeypatch):
    from test_cuda_control_flow import WHILE
    exe, fake = _on_fake(monkeypatch, WHILE, deferred=True)
    x = np.array([1.1, 0.9, 1.0, -1.05], np.float32)
    inputs = [xlac.device_put(x), xlac.device_put(np.int32(3))]
    fake.calls.clear()
    values, count = exe(*inputs)
    assert fake.read_backs == 4 and fake.calls["to_device_async"] == 0   # 3 trips and the exit
    np.testing.assert_allclose(values.numpy(), x ** 8, rtol=1e-6)
    assert int(count.numpy()) == 3


def test_sub_byte_results_read_back_as_run_returns_them(monkeypatch):
    exe, fake = _on_fake(monkeypatch, """
func.func @main(%x: tensor<4xi4>, %y: tensor<4xi4>) -> tensor<4xi4> {
  %0 = stablehlo.add %x, %y : tensor<4xi4>
  return %0 : tensor<4xi4>
}""")
    x, y = np.array([7, -8, 3, -1], np.int8), np.array([1, -1, 2, -1], np.int8)
    out = exe(x, y)
    np.testing.assert_array_equal(out.numpy(), [-8, 7, 5, -2])          # wrapped in 4 bits
    np.testing.assert_array_equal(out.numpy(), exe.run(x, y)[0])
