"""Host time per call of a one-op program on the GPU: xlac's dispatch against jax.jit's.

    python bench/gpu/dispatch.py [--size 1024] [--calls 2000] [--rounds 7]

Both are called the way a training loop calls them: inputs already on the device,
results left there (``exe(x)`` returns an ``xlac.DeviceArray``, ``f(x)`` a jax.Array).
Per round and system: ``dispatch`` is the host time of ``calls`` back-to-back calls
divided by ``calls``, before waiting for the device (what the Python thread spends
per call); ``synced`` includes waiting for the last result (per call). Rounds
alternate xlac and jax so that load on the machine hits both alike; the medians
are printed. ``run_numpy`` is ``exe.run(numpy)`` (copies in and out, synchronous).

``--fake`` times xlac's dispatch path against the fake driver (no GPU: the Python
side only, kernels not run) beside jax.jit on the CPU: an upper bound of xlac's
own host cost per call, not a GPU figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

PROGRAM = """
func.func @main(%a: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %c = stablehlo.constant dense<1.0> : tensor<{n}xf32>
  %0 = stablehlo.add %a, %c : tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}"""


def xlac_system(size: int, fake: bool):
    import xlac
    from xlac.targets.cuda import driver
    exe = xlac.compile(PROGRAM.format(n=size), target="cuda")
    if fake:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "test" / "support"))
        from xlac_emulator.fake_cuda import FakeDriver
        exe.function._driver = fake_driver = FakeDriver()
        driver._DRIVERS[0, False] = fake_driver          # xlac.device_put's driver too
    x = xlac.device_put(np.zeros(size, np.float32))
    return exe, x, lambda out: out.block_until_ready(), exe


def jax_system(size: int, fake: bool):
    import jax
    device = jax.devices("cpu" if fake else "gpu")[0]
    f = jax.jit(lambda a: a + 1.0)
    x = jax.device_put(np.zeros(size, np.float32), device)
    f(x).block_until_ready()                             # compiled before timing
    return f, x, lambda out: out.block_until_ready(), None


def one_round(call, x, wait, calls: int) -> tuple[float, float]:
    start = time.perf_counter()
    for _ in range(calls):
        out = call(x)
    dispatched = time.perf_counter()
    wait(out)
    done = time.perf_counter()
    return (dispatched - start) / calls * 1e6, (done - start) / calls * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--fake", action="store_true", help="no GPU: the fake driver, jax on CPU")
    args = parser.parse_args(argv)
    from xlac.targets.cuda.errors import CudaUnavailable
    try:
        systems = {"xlac": xlac_system(args.size, args.fake), "jax.jit": jax_system(args.size, args.fake)}
    except (CudaUnavailable, RuntimeError) as error:
        print(f"dispatch bench skipped: {error}")
        return 0
    times = {name: [] for name in systems}
    for _ in range(args.rounds):
        for name, (call, x, wait, _) in systems.items():
            one_round(call, x, wait, max(args.calls // 10, 1))          # warm
            times[name].append(one_round(call, x, wait, args.calls))
    kind = "fake driver / jax CPU (host side only)" if args.fake else "GPU"
    print(f"one-op program f32[{args.size}] + 1, {args.calls} calls x {args.rounds} rounds, "
          f"interleaved, {kind}; median us per call")
    print(f"{'system':<10} {'dispatch':>10} {'synced':>10}")
    for name, rounds in times.items():
        print(f"{name:<10} {statistics.median(r[0] for r in rounds):>10.2f} "
              f"{statistics.median(r[1] for r in rounds):>10.2f}")
    exe = systems["xlac"][3]
    if not args.fake:
        host = np.zeros(args.size, np.float32)
        exe.run(host)
        start = time.perf_counter()
        for _ in range(args.calls):
            exe.run(host)
        print(f"{'run_numpy':<10} {(time.perf_counter() - start) / args.calls * 1e6:>10.2f} (xlac "
              "exe.run: copy in, call, copy out, synchronous)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
