#!/usr/bin/env bash
# Distributed xlac on a many-core machine (16 cores or more), in one short run (< 4 minutes):
# the mpiexec -n 2 / 4 / 8 tests and bench/distributed.py at 1, 2, 4, 8 ranks, one rank per
# core. docs/distributed.md says what the figures mean and what they should reach.
#
# Here, with network, once (MPI for the machine's Python, which may lack it; 12 MiB):
#   bash test/support/distributed_check.sh prepare   # mpich + mpi4py wheels (cp312) into .whl-mpi/
# On the machine, from the repository root (results in $OUT, default /tmp/distributed_check_out):
#   bash test/support/distributed_check.sh
# or as a step of test/support/gpu_check.sh, after its setup (it uses the $PY, PYTHONPATH and
# PATH that script made): `bash test/support/distributed_check.sh || fail "distributed check"`.
# Environment: PY (default python3), DIST_RANKS (default 1,2,4,8, cut to the cores),
# DIST_ITERATIONS (default 8), DIST_TEST_TIMEOUT (seconds for the tests, default 120),
# DIST_TIMEOUT (seconds for the benchmark, default 200), BENCH_MPI_TIMEOUT (one mpiexec, 150).
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-${PYTHON:-python3}}
MPI_WHEELS=(mpich==5.0.2 mpi4py==4.1.2)             # pyproject's distributed extra

if [ "${1:-}" = prepare ]; then
  mkdir -p .whl-mpi && rm -f .whl-mpi/*.whl
  "$PY" -m pip download --no-deps --only-binary=:all: --python-version "${TARGET_PYTHON:-3.12}" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 \
    -d .whl-mpi "${MPI_WHEELS[@]}" || exit 1
  du -sh .whl-mpi
  exit 0
fi

OUT=${OUT:-/tmp/distributed_check_out}
mkdir -p "$OUT"
exec > >(tee "$OUT/distributed_check.log") 2>&1
status=0
step() { echo; echo "=== $* ($(date +%T))"; }
fail() { echo "FAILED: $*"; status=1; }

step "machine"
cores=$("$PY" -c 'import os; print(len(os.sched_getaffinity(0)))')
echo "usable cores: $cores"; lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)|Thread|NUMA node\(s\)'
"$PY" -VV

step "MPI"
if ! "$PY" -c "import mpi4py" 2>/dev/null && ls .whl-mpi/*.whl >/dev/null 2>&1; then
  # --prefix, not --target: the mpich wheel puts libmpi in <prefix>/lib, where its mpicc
  # looks (--target drops it)
  # (gpu_check.sh's venv has no pip: its base Python's pip installs into any prefix)
  pip_py=$PY; "$PY" -m pip --version >/dev/null 2>&1 || pip_py=$("$PY" -c 'import sys; print(sys._base_executable)')
  timeout 120 "$pip_py" -m pip install -q --no-index --no-deps --ignore-installed --prefix /tmp/site-mpi \
    .whl-mpi/*.whl || fail "installing .whl-mpi/ (needs pip)"
  site=$("$PY" -c 'import sys; print("/tmp/site-mpi/lib/python%d.%d/site-packages" % sys.version_info[:2])')
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} PATH=/tmp/site-mpi/bin:$PATH
  export LD_LIBRARY_PATH=/tmp/site-mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# mpiexec and mpicc: beside the Python (a venv with the mpich wheel) or on PATH
pybin=$(dirname "$("$PY" -c 'import sys; print(sys.executable)')")
[ -x "$pybin/mpiexec" ] && export PATH=$pybin:$PATH
command -v mpiexec && mpiexec --version 2>&1 | head -3 || fail "no mpiexec"
command -v mpicc || fail "no mpicc (xlac builds its MPI shim with it)"
"$PY" -c "import mpi4py; print('mpi4py', mpi4py.__version__)" || fail "no mpi4py"
export XLAC_CACHE_DIR=$OUT/xlac-cache             # the tests and the benchmark share compiled code

step "mpiexec tests: every collective x type on 2 ranks (overlapped, blocking, buckets), training step on 2/4/8"
timeout "${DIST_TEST_TIMEOUT:-120}" "$PY" -m pytest -q -rs -p no:cacheprovider test/python/distributed/test_mpiexec.py \
  -k "element_type or blocking_or_bucketed or training_step or group_strategy or exports_on_4" \
  2>&1 | tee "$OUT/pytest_distributed.txt"
rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "pytest (distributed), exit $rc"

step "bench/distributed.py: scaling (weak, strong), overlap vs blocking vs mpi4py vs jax, buckets, bandwidth"
ranks=${DIST_RANKS:-$("$PY" -c "print(','.join(str(r) for r in (1, 2, 4, 8) if r <= $cores))")}
BENCH_MPI_TIMEOUT=${BENCH_MPI_TIMEOUT:-150} timeout "${DIST_TIMEOUT:-200}" "$PY" bench/distributed.py --only scaling,bandwidth \
  --ranks "$ranks" --iterations "${DIST_ITERATIONS:-8}" --quick --jax --cache "$OUT/bench" \
  --json "$OUT/distributed_bench.json" 2>&1 | grep -v '^xlac: ' | tee "$OUT/distributed_bench.txt"
rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "bench/distributed.py, exit $rc"

step "done: $([ $status = 0 ] && echo OK || echo FAILED)"
exit $status
