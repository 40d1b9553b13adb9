"""The SIMT emulator (xlac_emulator.simt): hand-written kernels check its
thread model (shuffles, shared memory, masking, faults); compiled programs
check the CUDA target's kernels and launch path against the CPU target."""

from __future__ import annotations

import numpy as np
import pytest

from xlac_emulator.simt import EmulationError, Emulator

# ---- hand-written kernels ----------------------------------------------------------------

# Each block of 128 threads sums its 128 inputs: a shuffle-xor tree per warp,
# the warps' sums through workgroup memory, then thread 0 adds them up.
WARP_SUM = """
module attributes {gpu.container_module} {
  gpu.module @warp_sum {
    gpu.func @main_kernel(%in: memref<256xf32>, %out: memref<2xf32>, %warps: memref<8xf32>)
        workgroup(%partial: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %width = arith.constant 32 : i32
      %o16 = arith.constant 16 : i32
      %o8 = arith.constant 8 : i32
      %o4 = arith.constant 4 : i32
      %o2 = arith.constant 2 : i32
      %o1 = arith.constant 1 : i32
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %base = arith.muli %bid, %c128 : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %in[%i] : memref<256xf32>
      %s1, %k1 = gpu.shuffle xor %v, %o16, %width : f32
      %a1 = arith.addf %v, %s1 : f32
      %s2, %k2 = gpu.shuffle xor %a1, %o8, %width : f32
      %a2 = arith.addf %a1, %s2 : f32
      %s3, %k3 = gpu.shuffle xor %a2, %o4, %width : f32
      %a3 = arith.addf %a2, %s3 : f32
      %s4, %k4 = gpu.shuffle xor %a3, %o2, %width : f32
      %a4 = arith.addf %a3, %s4 : f32
      %s5, %k5 = gpu.shuffle xor %a4, %o1, %width : f32
      %a5 = arith.addf %a4, %s5 : f32
      %lane = arith.remui %tid, %c32 : index
      %warp = arith.divui %tid, %c32 : index
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %a5, %partial[%warp] : memref<4xf32, #gpu.address_space<workgroup>>
        %w = arith.muli %bid, %c4 : index
        %wi = arith.addi %w, %warp : index
        memref.store %a5, %warps[%wi] : memref<8xf32>
      }
      gpu.barrier
      %leader = arith.cmpi eq, %tid, %c0 : index
      scf.if %leader {
        %sum = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
          %p = memref.load %partial[%j] : memref<4xf32, #gpu.address_space<workgroup>>
          %next = arith.addf %acc, %p : f32
          scf.yield %next : f32
        }
        memref.store %sum, %out[%bid] : memref<2xf32>
      }
      gpu.return
    }
  }
}"""

# Every mode of gpu.shuffle, the value and the valid flag (i1: a byte in memory).
SHUFFLES = """
module attributes {gpu.container_module} {
  gpu.module @shuffles {
    gpu.func @main_kernel(%out: memref<5x64xi32>, %ok: memref<5x64xi1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %w32 = arith.constant 32 : i32
      %w16 = arith.constant 16 : i32
      %five = arith.constant 5 : i32
      %three = arith.constant 3 : i32
      %seven = arith.constant 7 : i32
      %eight = arith.constant 8 : i32
      %hundred = arith.constant 100 : i32
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %v = arith.muli %t, %hundred : i32
      %x, %xv = gpu.shuffle xor %v, %five, %w32 : i32
      %d, %dv = gpu.shuffle down %v, %three, %w32 : i32
      %u, %uv = gpu.shuffle up %v, %three, %w32 : i32
      %i, %iv = gpu.shuffle idx %v, %seven, %w32 : i32
      %h, %hv = gpu.shuffle xor %v, %eight, %w16 : i32
      memref.store %x, %out[%c0, %tid] : memref<5x64xi32>
      memref.store %d, %out[%c1, %tid] : memref<5x64xi32>
      memref.store %u, %out[%c2, %tid] : memref<5x64xi32>
      memref.store %i, %out[%c3, %tid] : memref<5x64xi32>
      memref.store %h, %out[%c4, %tid] : memref<5x64xi32>
      memref.store %xv, %ok[%c0, %tid] : memref<5x64xi1>
      memref.store %dv, %ok[%c1, %tid] : memref<5x64xi1>
      memref.store %uv, %ok[%c2, %tid] : memref<5x64xi1>
      memref.store %iv, %ok[%c3, %tid] : memref<5x64xi1>
      memref.store %hv, %ok[%c4, %tid] : memref<5x64xi1>
      gpu.return
    }
  }
}"""

# Thread t sums 0..t-1 (a loop whose trip count differs per thread) and its
# guard skips threads past n; the store at %tid + %shift faults unless guarded.
MASKING = """
module attributes {gpu.container_module} {
  gpu.module @masking {
    gpu.func @main_kernel(%out: memref<40xi64>, %n: index, %shift: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %zero = arith.constant 0 : i64
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %b = arith.muli %bid, %bdim : index
      %g = arith.addi %b, %tid : index
      %inside = arith.cmpi ult, %g, %n : index
      scf.if %inside {
        %sum = scf.for %j = %c0 to %g step %c1 iter_args(%acc = %zero) -> (i64) {
          %jj = arith.index_cast %j : index to i64
          %next = arith.addi %acc, %jj : i64
          scf.yield %next : i64
        }
        %at = arith.addi %g, %shift : index
        memref.store %sum, %out[%at] : memref<40xi64>
      }
      gpu.return
    }
  }
}"""

# Every thread adds its id to one counter (atomics take turns: the sum is
# exact) and halves its id until it is below 3 (a loop of per-thread length).
ATOMICS_AND_WHILE = """
module attributes {gpu.container_module} {
  gpu.module @atomics {
    gpu.func @main_kernel(%total: memref<1xi32>, %steps: memref<50xi32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %three = arith.constant 3 : i32
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %old = memref.atomic_rmw addi %t, %total[%c0] : (i32, memref<1xi32>) -> i32
      %r:2 = scf.while (%v = %t, %n = %zero) : (i32, i32) -> (i32, i32) {
        %more = arith.cmpi sge, %v, %three : i32
        scf.condition(%more) %v, %n : i32, i32
      } do {
      ^bb0(%v: i32, %n: i32):
        %half = arith.shrsi %v, %one : i32
        %n1 = arith.addi %n, %one : i32
        scf.yield %half, %n1 : i32, i32
      }
      memref.store %r#1, %steps[%tid] : memref<50xi32>
      gpu.return
    }
  }
}"""

SUBGROUP_REDUCE = """
module attributes {gpu.container_module} {
  gpu.module @reduce {
    gpu.func @main_kernel(%in: memref<100xf32>, %sums: memref<100xf32>, %maxima: memref<100xi32>) kernel {
      %tid = gpu.thread_id x
      %v = memref.load %in[%tid] : memref<100xf32>
      %s = gpu.subgroup_reduce add %v : (f32) -> f32
      memref.store %s, %sums[%tid] : memref<100xf32>
      %t = arith.index_cast %tid : index to i32
      %m = gpu.subgroup_reduce maxsi %t cluster(size = 8) : (i32) -> i32
      memref.store %m, %maxima[%tid] : memref<100xi32>
      gpu.return
    }
  }
}"""

DIVERGENT_BARRIER = """
module attributes {gpu.container_module} {
  gpu.module @divergent {
    gpu.func @main_kernel(%out: memref<64xf32>) kernel {
      %c10 = arith.constant 10 : index
      %one = arith.constant 1.0 : f32
      %tid = gpu.thread_id x
      %low = arith.cmpi ult, %tid, %c10 : index
      scf.if %low {
        gpu.barrier
        memref.store %one, %out[%tid] : memref<64xf32>
      }
      gpu.return
    }
  }
}"""


class Memory:
    """Device buffers for hand-written launches: numpy arrays by address."""

    def __init__(self):
        self.buffers: dict[int, np.ndarray] = {}

    def put(self, array: np.ndarray) -> int:
        raw = np.frombuffer(np.ascontiguousarray(array).tobytes(), np.uint8).copy()
        self.buffers[raw.ctypes.data] = raw
        return raw.ctypes.data

    def get(self, address: int, like: np.ndarray) -> np.ndarray:
        return self.buffers[address][:like.nbytes].view(like.dtype).reshape(like.shape)


def test_warp_sum_with_shuffles_workgroup_memory_and_barrier():
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    memory = Memory()
    args = [memory.put(x), memory.put(np.zeros(2, np.float32)), memory.put(np.zeros(8, np.float32))]
    Emulator(WARP_SUM).run("warp_sum", (2, 1, 1), (128, 1, 1), args, memory.buffers)
    warps = memory.get(args[2], np.zeros(8, np.float32))
    np.testing.assert_allclose(warps, x.reshape(8, 32).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(memory.get(args[1], np.zeros(2, np.float32)), x.reshape(2, 128).sum(axis=1),
                               rtol=1e-5)


def test_shuffle_modes_follow_mlir_lowering():
    memory = Memory()
    args = [memory.put(np.zeros((5, 64), np.int32)), memory.put(np.zeros((5, 64), np.uint8))]
    Emulator(SHUFFLES).run("shuffles", (1, 1, 1), (64, 1, 1), args, memory.buffers)
    out = memory.get(args[0], np.zeros((5, 64), np.int32))
    ok = memory.get(args[1], np.zeros((5, 64), np.uint8)).astype(bool)
    t = np.arange(64)
    lane, warp_start = t % 32, t - t % 32
    expected_sources = [
        (lane ^ 5, np.ones(64, bool)),
        (lane + 3, lane + 3 <= 31),
        (lane - 3, lane - 3 >= 0),
        (np.full(64, 7), np.ones(64, bool)),
        (lane ^ 8, (lane ^ 8) <= 15),              # width 16: only lanes below 16 are sources
    ]
    for row, (source, valid) in enumerate(expected_sources):
        want = np.where(valid, warp_start + source, t) * 100      # invalid: the lane's own value
        np.testing.assert_array_equal(out[row], want, err_msg=f"mode row {row}")
        np.testing.assert_array_equal(ok[row], valid, err_msg=f"valid row {row}")


def test_masked_threads_and_per_thread_trip_counts():
    memory = Memory()
    out = np.full(40, -7, np.int64)
    address = memory.put(out)
    Emulator(MASKING).run("masking", (3, 1, 1), (16, 1, 1), [address, np.int64(37), np.int64(0)],
                          memory.buffers)
    got = memory.get(address, out)
    g = np.arange(37)
    np.testing.assert_array_equal(got[:37], g * (g - 1) // 2)
    np.testing.assert_array_equal(got[37:], -7)              # threads 37..47 never stored


def test_atomics_take_turns_and_while_loops_run_per_thread():
    memory = Memory()
    total, steps = memory.put(np.array([5], np.int32)), memory.put(np.zeros(50, np.int32))
    Emulator(ATOMICS_AND_WHILE).run("atomics", (1, 1, 1), (50, 1, 1), [total, steps], memory.buffers)
    assert memory.get(total, np.zeros(1, np.int32))[0] == 5 + sum(range(50))
    expected = [0 if t < 3 else int(np.floor(np.log2(t / 3))) + 1 for t in range(50)]
    np.testing.assert_array_equal(memory.get(steps, np.zeros(50, np.int32)), expected)


def test_subgroup_reduce_over_warps_and_clusters():
    memory = Memory()
    x = np.random.default_rng(1).standard_normal(100).astype(np.float32)
    args = [memory.put(x), memory.put(np.zeros(100, np.float32)), memory.put(np.zeros(100, np.int32))]
    Emulator(SUBGROUP_REDUCE).run("reduce", (1, 1, 1), (100, 1, 1), args, memory.buffers)
    warp = np.arange(100) // 32                      # the last warp has 4 lanes
    want = np.array([x[warp == w].sum() for w in range(4)])[warp]
    np.testing.assert_allclose(memory.get(args[1], x), want, rtol=1e-5)
    np.testing.assert_array_equal(memory.get(args[2], np.zeros(100, np.int32)),
                                  np.minimum(np.arange(100) // 8 * 8 + 7, 99))


# Each thread fills its row of a 4 x n grid with row * 100 + column: an
# scf.forall over (static 4) x (dynamic n, passed in) inside the kernel, as
# the CUDA target's top-k kernel has one per row.
FORALL = """
module attributes {gpu.container_module} {
  gpu.module @forall {
    gpu.func @forall(%out: memref<3x4x5xi64>, %n: index) kernel {
      %c100 = arith.constant 100 : index
      %tid = gpu.thread_id x
      scf.forall (%row, %column) in (4, %n) {
        %r = arith.muli %row, %c100 : index
        %v = arith.addi %r, %column : index
        %w = arith.index_cast %v : index to i64
        memref.store %w, %out[%tid, %row, %column] : memref<3x4x5xi64>
      }
      gpu.return
    }
  }
}
"""


def test_forall_runs_every_iteration_of_static_and_dynamic_bounds():
    memory = Memory()
    out = np.full((3, 4, 5), -1, np.int64)
    address = memory.put(out)
    Emulator(FORALL).run("forall", (1, 1, 1), (3, 1, 1), [address, np.int64(3)], memory.buffers)
    got = memory.get(address, out)
    row, column = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(got[:, :, :3], np.broadcast_to(row * 100 + column, (3, 4, 3)))
    np.testing.assert_array_equal(got[:, :, 3:], -1)          # columns past the dynamic bound


def test_out_of_bounds_store_names_kernel_and_op():
    memory = Memory()
    address = memory.put(np.zeros(40, np.int64))
    with pytest.raises(EmulationError, match=r"masking: .*memref.store.*index 40 out of bounds"):
        Emulator(MASKING).run("masking", (1, 1, 1), (40, 1, 1), [address, np.int64(40), np.int64(1)],
                              memory.buffers)


def test_barrier_in_divergent_code_is_an_error():
    memory = Memory()
    with pytest.raises(EmulationError, match="divergent"):
        Emulator(DIVERGENT_BARRIER).run("divergent", (1, 1, 1), (64, 1, 1),
                                        [memory.put(np.zeros(64, np.float32))], memory.buffers)


def test_unsupported_op_is_named():
    text = DIVERGENT_BARRIER.replace("gpu.barrier", "%q = arith.constant dense<[1.0, 2.0]> : vector<2xf32>")
    with pytest.raises(EmulationError, match="vector values other than a splat are not supported"):
        Emulator(text).kernel("divergent")
