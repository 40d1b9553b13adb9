#!/usr/bin/env bash
# The one GPU check of the CUDA target: a machine with an NVIDIA GPU (sm_90, e.g. H200), no
# network, at most 8 minutes (GPU_CHECK_BUDGET_S, default 480) and 64 MiB sent.
# docs/gpu-check.md explains each step, what travels and how to read the results.
#
#   bash test/support/gpu_check.sh prepare      # here, with network, once: wheels into .whl/
#   bash test/support/gpu_check.sh --dry-run    # here: every step up to needing libcuda, and
#                                               # the payload's size against 64 MiB
#   bash test/support/gpu_check.sh [SHARED_DIR] # there (default ./shared, else ../shared)
#
# prepare downloads, for the pinned torch-mlir, the equivalent of
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl torch-mlir==20261001 lit==23.1.5 llvm-testing-tools==23.0.0
# then strips the shared libraries' symbol tables and recompresses each wheel with LZMA
# (torch-mlir-opt left out; RECORD rewritten): torch-mlir 76.7 MiB -> 37.5 MiB. llvmlite does
# not fit beside it: the GPU machine's own llvmlite is used. Copy the data the checks read:
#   mkdir -p shared && cp -r ../shared/bench ../shared/models ../shared/conformance shared/
#
# Steps, in this order, each time-boxed (its own limit, and never past the budget left; what
# the budget cannot fit is reported SKIPPED): GPU, wheels, xlac from the tree, a first program,
# the matmul table (bench/gpu/matmul_library.py), the CUDA pytest group (all of test/python/cuda but the emulated conformance: the fault,
# thread, device= and device-array tests), lit test/cuda, the NCCL one-rank test, the public
# conformance suite with target cuda, bench/run.py --target cuda --models, the GPU-sized programs
# against their rooflines (bench/run.py --gpu-sized, a subset), the per-call
# dispatch benchmark (bench/gpu/dispatch.py), and the distributed check in what is left.
# Results in $OUT (default /tmp/gpu_check_out): gpu_check.log, timings.tsv (step, status,
# seconds, limit), one file per step (pytest_cuda.txt, lit_cuda.txt, nccl.txt,
# conformance_cuda.txt/.json, bench_cuda.md/.txt, bench_gpu_sized.md/.txt, matmul_library.md/.txt).
# No step runs in the background and no
# output goes through process substitution: a bare `wait` after `exec > >(tee ...)` waits
# for tee forever.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
PY=${PYTHON:-python3}
TORCH_MLIR=$(sed -n 's/^ *"torch-mlir==\([0-9.]*\)".*/\1/p' pyproject.toml)
PAYLOAD_LIMIT_MIB=64

prepare() {
  local dl=/tmp/gpu_check_download  # TARGET_PYTHON=3.11 makes wheels to try the script here
  rm -rf "$dl" && mkdir -p "$dl" .whl && rm -f .whl/*.whl    # .whl/ holds this set only
  local wanted=("torch-mlir==$TORCH_MLIR" lit==23.1.5 llvm-testing-tools==23.0.0)
  "$PY" -m pip download --no-deps --only-binary=:all: --python-version "${TARGET_PYTHON:-3.12}" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$dl" "${wanted[@]}" || return 1
  for wheel in "$dl"/*.whl; do "$PY" - "$wheel" .whl <<'PY' || return 1
# Strip the ELF files' symbol tables, leave out what xlac never runs, and write the wheel
# again with LZMA: what travels must stay under 64 MiB. RECORD gets the new hashes and
# sizes, so pip installs it as usual.
import base64, hashlib, subprocess, sys, tempfile, zipfile
from pathlib import Path

UNUSED = {"torch_mlir/_mlir_libs/torch-mlir-opt"}     # a 50 MB tool binary; xlac has xla-opt
source, target = Path(sys.argv[1]), Path(sys.argv[2]) / Path(sys.argv[1]).name
with zipfile.ZipFile(source) as wheel, tempfile.TemporaryDirectory() as tmp:
    infos = [i for i in wheel.infolist() if i.filename not in UNUSED and not i.is_dir()]
    wheel.extractall(tmp, [i.filename for i in infos])
    for info in infos:
        path = Path(tmp, info.filename)
        if path.read_bytes()[:4] == b"\x7fELF":
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)
    record = next(i.filename for i in infos if i.filename.endswith(".dist-info/RECORD"))
    lines = []
    for info in infos:
        if info.filename == record:
            continue
        data = Path(tmp, info.filename).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{info.filename},sha256={digest},{len(data)}")
    Path(tmp, record).write_text("\n".join(lines + [f"{record},,"]) + "\n")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_LZMA) as out:
        for info in infos:
            fresh = zipfile.ZipInfo(info.filename, info.date_time)
            fresh.external_attr, fresh.compress_type = info.external_attr, zipfile.ZIP_LZMA
            out.writestr(fresh, Path(tmp, info.filename).read_bytes())
print(f"{target}: {source.stat().st_size / 2**20:.1f} MiB -> {target.stat().st_size / 2**20:.1f} MiB")
PY
  done
  du -sh .whl
  keep_out_of_git
}

keep_out_of_git() {  # .whl/ and shared/ travel as themselves, never as files of the tree
  local exclude
  exclude=$(git rev-parse --git-path info/exclude) && mkdir -p "$(dirname "$exclude")" || return 1
  for path in /.whl/ /shared/; do
    grep -qxF "$path" "$exclude" 2>/dev/null || echo "$path" >> "$exclude"
  done
}

if [ "${1:-}" = prepare ]; then prepare; exit $?; fi
DRY=0
if [ "${1:-}" = --dry-run ] || [ "${1:-}" = dry-run ]; then DRY=1; shift; fi

SHARED=${1:-${XLAC_SHARED:-}}
if [ -z "$SHARED" ]; then
  if [ -d shared/bench ] || [ -d shared/conformance ]; then SHARED=$REPO/shared; else SHARED=$REPO/../shared; fi
fi
SHARED=$(cd "$SHARED" 2>/dev/null && pwd || echo "$SHARED")
OUT=${OUT:-/tmp/gpu_check_out}
WORK=${GPU_CHECK_WORK:-/tmp/gpu_check_work}     # site packages, the xlac copy, the venv
BUDGET_S=${GPU_CHECK_BUDGET_S:-480}
RESERVE_S=10                                    # kept for the summary at the end
mkdir -p "$OUT" "$WORK"
export PY OUT WORK SHARED PAYLOAD_LIMIT_MIB DRY  # the step functions run in a bash of their own
LOG=$OUT/gpu_check.log
TIMINGS=$OUT/timings.tsv
: > "$LOG"
printf 'step\tstatus\tseconds\tlimit_s\n' > "$TIMINGS"
status=0

say() { printf '%s\n' "$*" | tee -a "$LOG"; }

# run_step NAME LIMIT_S OUTFILE COMMAND...: COMMAND's output into $OUT/OUTFILE (its tail into
# the log), bounded by LIMIT_S and by what the budget has left; a row of timings.tsv.
run_step() {
  local name=$1 limit=$2 file=$3
  shift 3
  local left=$((BUDGET_S - SECONDS - RESERVE_S))
  if [ "$left" -lt 15 ]; then
    say "=== $name: SKIPPED (the ${BUDGET_S} s budget is spent)"
    printf '%s\tskipped\t0\t%s\n' "$name" "$limit" >> "$TIMINGS"
    status=1
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  say "" "=== $name (at most ${limit} s; $(date +%T), ${SECONDS} s in)"
  local start=$SECONDS rc
  if [ "$(type -t "$1")" = function ]; then     # timeout runs programs: a function goes in a bash
    timeout --kill-after=10 "$limit" bash -c "$(declare -f "$1"); \"\$@\"" run_step "$@" \
      > "$OUT/$file" 2>&1 < /dev/null
  else
    timeout --kill-after=10 "$limit" "$@" > "$OUT/$file" 2>&1 < /dev/null
  fi
  rc=$?
  tail -n 25 "$OUT/$file" | tee -a "$LOG"
  local took=$((SECONDS - start)) result=passed
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then result=timeout; elif [ "$rc" != 0 ]; then result="failed($rc)"; fi
  # a dry run passes a step that got as far as needing the driver
  if [ "$DRY" = 1 ] && [ "${result#failed}" != "$result" ] && grep -q "libcuda.so.1" "$OUT/$file"; then
    result=reached-libcuda
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$result" "$took" "$limit" >> "$TIMINGS"
  say "--- $name: $result in ${took} s"
  case $result in passed|reached-libcuda) return 0 ;; esac
  status=1
  return 1
}

payload_check() {
  # what the device tool sends: tracked and untracked-not-ignored files, shared/, and .whl/
  local tree shared whl sized total
  tree=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  shared=$( [ -d shared ] && du -sb shared | cut -f1 || echo 0)
  whl=$( [ -d .whl ] && du -sb .whl | cut -f1 || echo 0)
  # bench/gpu_sized/ is gitignored: it travels when the device tool is told to carry it
  sized=$( [ -d bench/gpu_sized ] && du -sb bench/gpu_sized | cut -f1 || echo 0)
  total=$((tree + shared + whl + sized))
  awk -v t="$tree" -v s="$shared" -v w="$whl" -v g="$sized" -v l="$PAYLOAD_LIMIT_MIB" 'BEGIN {
    printf "tree %d, shared/ %d, .whl/ %d, bench/gpu_sized/ %d bytes: %.1f MiB of %d MiB\n", t, s, w, g, (t + s + w + g) / 1048576, l }'
  [ "$total" -le $((PAYLOAD_LIMIT_MIB * 1048576)) ]
}

setup_site() {
  if ! ls .whl/*.whl >/dev/null 2>&1; then echo "no .whl/ folder: using what $PY has"; return 0; fi
  if "$PY" -m pip --version >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target "$WORK/site" .whl/*.whl
  else
    echo "no pip: unpacking the wheels (a wheel is a zip of what goes into site-packages)"
    "$PY" - "$WORK/site" .whl/*.whl <<'PY'
import os, sys, zipfile
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            path = archive.extract(info, sys.argv[1])
            if info.external_attr >> 16 & 0o111:
                os.chmod(path, 0o755)          # FileCheck and friends stay executable
PY
  fi
}

setup_xlac() {
  # A copy laid out as pyproject.toml's package-dir maps it (xlac locates files through __file__).
  rm -rf "$WORK/xlac_src" && mkdir -p "$WORK/xlac_src" || return 1
  cp -r python/xlac "$WORK/xlac_src/xlac" || return 1
  for sub in passes dialects tools; do cp -r "$sub" "$WORK/xlac_src/xlac/$sub" || return 1; done
  find "$WORK/xlac_src" -name __pycache__ -prune -exec rm -rf {} +
  # lit's tests start Python without PYTHONPATH: a venv over the machine's Python whose .pth
  # files add the wheels, the xlac copy and then the machine's own packages
  rm -rf "$WORK/venv"
  "$PY" -m venv --without-pip "$WORK/venv" || return 1
  local site_dir
  site_dir=$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  printf '%s\n%s\n' "$WORK/site" "$WORK/xlac_src" > "$site_dir/00_xlac.pth"
  "$PY" -c 'import site; print("import site; " + "; ".join(f"site.addsitedir({d!r})" for d in site.getsitepackages()))' \
    > "$site_dir/zz_machine.pth"
  # console scripts and FileCheck beside the venv's python, where lit's config looks
  for tool in xla-opt:xla_opt xla-run:xla_run xla-compile:xla_compile; do
    printf '#!%s\nimport sys\nfrom xlac.tools.%s import main\nsys.exit(main())\n' \
      "$WORK/venv/bin/python" "${tool#*:}" > "$WORK/venv/bin/${tool%%:*}"
    chmod +x "$WORK/venv/bin/${tool%%:*}"
  done
  local filecheck
  for filecheck in "$WORK/site/llvm_testing_tools/binaries/FileCheck" "$(dirname "$PY")/FileCheck" \
                   "$(command -v FileCheck)"; do
    if [ -x "$filecheck" ]; then ln -sf "$filecheck" "$WORK/venv/bin/FileCheck"; break; fi
  done
  [ -x "$WORK/venv/bin/FileCheck" ] || echo "note: no FileCheck (prepare puts llvm-testing-tools in .whl/)"
  echo "xlac copied to $WORK/xlac_src; venv $WORK/venv"
}

find_cuda_home() {
  # libdevice and ptxas: xlac.targets.cuda.ptx.wheel_file looks in $CUDA_HOME
  CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
  if [ ! -f "$CUDA_HOME/nvvm/libdevice/libdevice.10.bc" ]; then
    local found
    found=$(timeout 60 find /usr/local /opt /usr/lib "$("$PY" -c 'import sys; print(sys.base_prefix)')" \
              -name libdevice.10.bc -path '*nvvm/libdevice/*' 2>/dev/null | head -1)
    [ -n "$found" ] && CUDA_HOME=$(dirname "$(dirname "$(dirname "$found")")")
  fi
  export CUDA_HOME
  echo "CUDA_HOME=$CUDA_HOME"
}

say "gpu_check: $([ $DRY = 1 ] && echo 'dry run (no libcuda needed)' || echo 'on the GPU'), budget ${BUDGET_S} s, results in $OUT"
run_step payload 30 payload.txt payload_check
if [ "$DRY" = 0 ]; then
  run_step gpu 30 gpu.txt bash -c 'nvidia-smi && nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv'
fi
run_step wheels 120 wheels.txt setup_site
run_step xlac 60 xlac.txt setup_xlac
export PYTHONPATH=$WORK/site:$WORK/xlac_src${PYTHONPATH:+:$PYTHONPATH}
export PATH=$WORK/venv/bin:$WORK/site/bin:$PATH
[ -x "$WORK/venv/bin/python" ] && PY=$WORK/venv/bin/python
find_cuda_home | tee -a "$LOG"
export XLA_PYTHON_CLIENT_PREALLOCATE=false         # jax and xlac share the GPU
# ../shared is where the tests look for the bench programs and the conformance suite
if [ ! -e "$REPO/../shared" ] && [ -d "$SHARED" ]; then
  ln -s "$SHARED" "$REPO/../shared" 2>/dev/null || say "note: cannot link $REPO/../shared to $SHARED"
fi

cat > "$WORK/first_program.py" <<'PY'
import importlib.metadata as md, os, numpy, xlac
from xlac.targets.cuda.ptx import wheel_file
print("xlac", xlac.__file__, "| numpy", numpy.__version__)
for name in ("torch-mlir", "llvmlite", "jax", "jaxlib", "ml_dtypes", "pytest", "lit"):
    try: print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError: print(f"  {name} absent")
print("libdevice:", wheel_file("nvvm/libdevice/libdevice.10.bc"), "| ptxas:", wheel_file("bin/ptxas"))
text = ("func.func @main(%a: tensor<1000xf32>) -> tensor<1000xf32> {\n"
        "  %0 = stablehlo.exponential %a : tensor<1000xf32>\n  return %0 : tensor<1000xf32>\n}")
exe = xlac.compile(text, target="cuda")
print("PTX:", len(exe.as_text("ptx")), "characters")
if os.environ.get("DRY") == "1":
    raise SystemExit(0)                    # running it needs libcuda
a = numpy.linspace(-3, 3, 1000, dtype=numpy.float32)
(got,) = exe.run(a)
error = float(numpy.max(numpy.abs(got - numpy.exp(a)) / numpy.exp(a)))
print("exp on the GPU, max rel err:", error)
assert error < 1e-5
PY
run_step first-program 90 first_program.txt "$PY" "$WORK/first_program.py"

# matmul TFLOP/s by type and shape: xlac on cuBLASLt and on its generated kernels, PyTorch
# (cuBLAS) and jax (XLA), interleaved; early, so that the budget always reaches it
MATMUL=("$PY" bench/gpu/matmul_library.py --rounds 5 --budget-s "${MATMUL_BUDGET_S:-75}"
        --out "$OUT/matmul_library.md")
[ "$DRY" = 1 ] && MATMUL=("$PY" bench/gpu/matmul_library.py --dry-run --shapes 4096^3)
run_step matmul-library "${MATMUL_TIMEOUT:-100}" matmul_library.txt "${MATMUL[@]}"

# the whole CUDA group, so tests added there are picked up; the emulated conformance (heavy,
# CPU only) is left to CI: the real suite runs below
PYTEST=("$PY" -m pytest -q -rs -p no:cacheprovider -m "not heavy" test/python/cuda)
[ "$DRY" = 1 ] && PYTEST+=(--collect-only)
run_step pytest-cuda 150 pytest_cuda.txt "${PYTEST[@]}"

if "$PY" -c "import lit" 2>/dev/null; then
  run_step lit-cuda 60 lit_cuda.txt "$PY" -c "import sys; from lit.main import main; sys.argv[0] = 'lit'; main()" -v test/cuda
else
  say "FAILED: lit is not installed (bash test/support/gpu_check.sh prepare puts its wheel in .whl/)"
  status=1
fi

NCCL=("$PY" -m pytest -q -rs -p no:cacheprovider test/python/distributed/test_cuda_collectives.py -k one_rank)
[ "$DRY" = 1 ] && NCCL+=(--collect-only)
run_step nccl-one-rank 60 nccl.txt "${NCCL[@]}"

if [ -f "$SHARED/conformance/run_conformance.py" ]; then
  conformance() {
    cd "$SHARED/conformance" && XLAC_CONFORMANCE_TARGET=cuda "$PY" run_conformance.py public \
      --backend xlac_backend.py:run -j "${CONFORMANCE_JOBS:-12}" --timeout 60 --by group \
      --show-failures 40 --json "$OUT/conformance_cuda.json" \
      ${CONFORMANCE_FILTER:+--filter "$CONFORMANCE_FILTER"} ${CONFORMANCE_LIMIT:+--limit "$CONFORMANCE_LIMIT"}
  }
  # dry: two programs, to see the runner start (they fail without libcuda)
  [ "$DRY" = 1 ] && CONFORMANCE_LIMIT=2 CONFORMANCE_JOBS=2
  export CONFORMANCE_FILTER CONFORMANCE_JOBS CONFORMANCE_LIMIT
  run_step conformance-cuda "${CONFORMANCE_TIMEOUT:-150}" conformance_cuda.txt conformance
else
  say "FAILED: no conformance suite at $SHARED/conformance (copy it to ./shared, see the header)"
  status=1
fi

if [ -f "$SHARED/bench/suite/manifest.json" ]; then
  BENCH=("$PY" bench/run.py --target cuda --models --suite "$SHARED/bench/suite"
         --budget-s "${BENCH_BUDGET_S:-30}" --kill-after-s 60 --out "$OUT/bench_cuda.md")
  [ "$DRY" = 1 ] && BENCH+=(--only "${BENCH_ONLY:-softmax}" --budget-s 1)
  run_step bench-cuda "${BENCH_TIMEOUT:-120}" bench_cuda.txt "${BENCH[@]}"
else
  say "FAILED: no bench suite at $SHARED/bench/suite (copy it to ./shared, see the header)"
  status=1
fi

# The GPU-sized programs against their rooflines (bench/run.py --gpu-sized), a subset in a slice
# of the budget. Their exports (bench/gpu_sized/, gitignored: the device tool's carry brings
# them) are made here by bench/export_gpu_sized.py; without them they are exported there from
# what that machine has (jax: the kernels; the models need transformers). A dry run exports
# them at 1/256 into $WORK.
SIZED_DIR=${GPU_SIZED_DIR:-$REPO/bench/gpu_sized}
[ "$DRY" = 1 ] && SIZED_DIR=$WORK/gpu_sized_tiny
GPU_SIZED_ONLY=${GPU_SIZED_ONLY:-gelu,transpose,row_sum,softmax,matmul_bf16_8192,matmul_f32_4096,attention_bf16_s2048,bert_base}
export SIZED_DIR GPU_SIZED_ONLY GPU_SIZED_BUDGET_S=${GPU_SIZED_BUDGET_S:-30}
gpu_sized() {
  local scale=1 extra=() name only=""
  [ "$DRY" = 1 ] && scale=1/256 && extra=(--quick --budget-s 1)
  if ! ls "$SIZED_DIR"/*.json >/dev/null 2>&1; then
    echo "no exports in $SIZED_DIR: exporting with this machine's packages"
    "$PY" bench/export_gpu_sized.py --out "$SIZED_DIR" --scale "$scale" --skip-missing --only "$GPU_SIZED_ONLY" || return 1
  fi
  for name in ${GPU_SIZED_ONLY//,/ }; do        # what could not be exported is left out
    if [ -f "$SIZED_DIR/$name.json" ]; then only+="$name,"; else echo "note: $name not exported: left out"; fi
  done
  "$PY" bench/run.py --gpu-sized --gpu-sized-dir "$SIZED_DIR" --only "${only%,}" --profile --profile-s 1 \
    --budget-s "$GPU_SIZED_BUDGET_S" --kill-after-s 60 --out "$OUT/bench_gpu_sized.md" "${extra[@]}"
}
run_step gpu-sized "${GPU_SIZED_TIMEOUT:-120}" bench_gpu_sized.txt gpu_sized

# host time per call of a one-op program on device arrays, xlac against jax.jit (GPU client)
DISPATCH=(env XLA_PYTHON_CLIENT_PREALLOCATE=false "$PY" bench/gpu/dispatch.py --calls 2000 --rounds 7)
[ "$DRY" = 1 ] && DISPATCH=("$PY" bench/gpu/dispatch.py --fake --calls 20 --rounds 1)
run_step dispatch-cuda 60 dispatch_cuda.txt "${DISPATCH[@]}"

# last, in what the budget leaves: the mpiexec 2/4/8 tests and the scaling benchmark on this
# machine's cores (test/support/distributed_check.sh; its MPI wheels travel in .whl-mpi/)
DIST=(env OUT="$OUT/distributed" PY="$PY" bash test/support/distributed_check.sh)
[ "$DRY" = 1 ] && DIST=(bash -n test/support/distributed_check.sh)
run_step distributed "${DIST_STEP_TIMEOUT:-220}" distributed.txt "${DIST[@]}"

say "" "=== done in ${SECONDS} s (budget ${BUDGET_S} s): status $status"
column -t -s $'\t' "$TIMINGS" 2>/dev/null | tee -a "$LOG" || tee -a "$LOG" < "$TIMINGS"
exit $status
