#!/usr/bin/env bash
# The CUDA target on a machine with an NVIDIA GPU (sm_90, e.g. H200), no network:
#   bash tools/gpu_check.sh [/path/to/venv]
# Wheels the venv lacks are installed from wheels/ in the tree if present
# (pip download llvmlite==0.50.0 nvidia-cuda-nvcc-cu12==12.9.86 -d wheels).
# Runs: the CUDA pytest group, the CUDA lit dir, a conformance subset with
# XLAC_CONFORMANCE_TARGET=cuda, and the bench suite against XLA GPU if jax[cuda] is there.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.venv}
SHARED=$(cd .. && pwd)/shared          # the conformance suite and bench programs, beside the repo
PY="$VENV/bin/python"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv || echo "nvidia-smi missing"
if [ -d wheels ]; then "$PY" -m pip install -q --no-index --find-links wheels llvmlite nvidia-cuda-nvcc-cu12 || true; fi
status=0
"$PY" -m pytest -q -rs test/python/test_cuda.py || status=1
"$VENV/bin/lit" -v test/cuda || status=1
if [ -d "$SHARED/conformance" ]; then
  (cd "$SHARED/conformance" && XLAC_CONFORMANCE_TARGET=cuda "$PY" run_conformance.py public \
      --backend xlac_backend.py:run -j 4 --timeout 300 --by group --show-failures 30 \
      ${CONFORMANCE_FILTER:+--filter "$CONFORMANCE_FILTER"}) || status=1
fi
# every bench program: CUDA against the CPU target on the same random inputs
SHARED="$SHARED" "$PY" - <<'PY' || status=1
import os, pathlib, time, numpy as np, xlac
for path in sorted(pathlib.Path(os.environ["SHARED"], "bench", "suite").glob("*.stablehlo.mlir")):
    text = path.read_text()
    cpu, gpu = xlac.compile(text), xlac.compile(text, target="cuda")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s.shape).astype(s.dtype) for s in cpu.signature.inputs]
    start = time.perf_counter(); got = gpu.run(*args); took = time.perf_counter() - start
    want = cpu.run(*args)
    err = max(float(np.max(np.abs(g - w) / (np.abs(w) + 1e-3))) for g, w in zip(got, want))
    print(f"{path.name}: max rel err {err:.2e}, gpu call {took * 1e3:.1f} ms")
PY
exit $status
