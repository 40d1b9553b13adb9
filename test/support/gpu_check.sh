#!/usr/bin/env bash
# The CUDA target on a machine with an NVIDIA GPU (sm_90, e.g. H200) and no network.
# docs/gpu-check.md explains each step, what travels and how to read the results.
#
# Here, with network, once (puts wheels in .whl/, which git ignores via .git/info/exclude):
#   bash test/support/gpu_check.sh prepare            # torch-mlir (pyproject's pin) + lit + FileCheck
# prepare runs, for the pinned torch-mlir (20261001 today), the equivalent of
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .whl torch-mlir==20261001 lit==23.1.5 llvm-testing-tools==23.0.0
# then strips the shared libraries' symbol tables and recompresses each wheel with LZMA
# (torch-mlir-opt, a tool binary xlac never runs, left out; RECORD rewritten, so pip installs
# it as usual): torch-mlir 76.7 MiB -> 37.5 MiB, .whl/ 38 MiB in all.
# llvmlite 0.50.0 (57 MiB -> ~37 MiB the same way) does not fit beside it in the 64 MiB
# that travels: the GPU machine's own llvmlite is used; the first check says if it makes PTX.
#
# Copy the data the checks read into the tree, beside .whl/ (shared/ travels when present):
#   mkdir -p shared && cp -r ../shared/bench shared/       # 0.1 MiB: bench programs
#   cp -r ../shared/conformance shared/                     # 14.4 MiB: the public suite
#
# On the GPU machine (from the repository root; results go to $OUT when it is set):
#   bash test/support/gpu_check.sh [SHARED_DIR]       # default: ./shared, else ../shared
# Steps, each bounded by `timeout` (about 8 minutes in all):
#   nvidia-smi; wheels into /tmp/site; xlac from the tree (a copy in /tmp/xlac_src with
#   pyproject's package-dir mapping); the CUDA pytest group and lit dir; the public
#   conformance suite with target cuda; bench/run.py --target cuda (xlac vs XLA GPU).
# Files in $OUT (default /tmp/gpu_check_out): gpu_check.log, conformance_cuda.txt and .json,
# bench_cuda.md (appendable to docs/PERFORMANCE.md), pytest_cuda.txt, lit_cuda.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
PY=${PYTHON:-python3}
TORCH_MLIR=$(sed -n 's/^ *"torch-mlir==\([0-9.]*\)".*/\1/p' pyproject.toml)

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
}

if [ "${1:-}" = prepare ]; then prepare; exit $?; fi

SHARED=${1:-${XLAC_SHARED:-}}
if [ -z "$SHARED" ]; then
  if [ -d shared/bench ] || [ -d shared/conformance ]; then SHARED=$REPO/shared; else SHARED=$REPO/../shared; fi
fi
SHARED=$(cd "$SHARED" 2>/dev/null && pwd || echo "$SHARED")
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_check.log") 2>&1
status=0
step() { echo; echo "=== $* ($(date +%T))"; }
fail() { echo "FAILED: $*"; status=1; }

step "GPU"
timeout 30 nvidia-smi || fail "nvidia-smi"
timeout 30 nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
"$PY" -VV

step "wheels from .whl/ into /tmp/site"
if ls .whl/*.whl >/dev/null 2>&1 && "$PY" -m pip --version >/dev/null 2>&1; then
  timeout 180 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || fail "pip install of .whl/"
elif ls .whl/*.whl >/dev/null 2>&1; then
  echo "no pip: unpacking the wheels (a wheel is a zip of what goes into site-packages)"
  timeout 180 "$PY" - .whl/*.whl <<'PY' || fail "unpacking .whl/"
import os, sys, zipfile
for wheel in sys.argv[1:]:
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            path = archive.extract(info, "/tmp/site")
            if info.external_attr >> 16 & 0o111:
                os.chmod(path, 0o755)          # FileCheck and friends stay executable
PY
fi
if ls .whl/*.whl >/dev/null 2>&1; then
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  export PATH=/tmp/site/bin:$PATH
else
  echo "no .whl/ folder: using what $PY has"
fi

step "xlac from the tree (pyproject.toml's package-dir mapping)"
# A copy, not symlinks: xlac hashes and locates its own files through __file__.
rm -rf /tmp/xlac_src && mkdir -p /tmp/xlac_src/bin
cp -r python/xlac /tmp/xlac_src/xlac
for sub in passes dialects tools; do cp -r "$sub" "/tmp/xlac_src/xlac/$sub"; done
find /tmp/xlac_src -name __pycache__ -prune -exec rm -rf {} +
export PYTHONPATH=/tmp/xlac_src:$PYTHONPATH
for tool in xla-opt:xla_opt xla-run:xla_run xla-compile:xla_compile; do   # console scripts, for lit
  printf '#!%s\nimport sys\nfrom xlac.tools.%s import main\nsys.exit(main())\n' \
    "$(command -v "$PY")" "${tool#*:}" > "/tmp/xlac_src/bin/${tool%%:*}"
  chmod +x "/tmp/xlac_src/bin/${tool%%:*}"
done
if [ -d /tmp/site/llvm_testing_tools/binaries ]; then   # the binary itself: lit drops PYTHONPATH
  ln -sf /tmp/site/llvm_testing_tools/binaries/FileCheck /tmp/xlac_src/bin/FileCheck
fi
export PATH=/tmp/xlac_src/bin:$PATH
# lit's tests start Python with a clean environment (no PYTHONPATH): a venv over the machine's
# Python whose .pth files add /tmp/site, /tmp/xlac_src and then the machine's own packages.
if "$PY" -m venv --without-pip /tmp/xvenv; then
  site_dir=$(/tmp/xvenv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  printf '/tmp/site\n/tmp/xlac_src\n' > "$site_dir/00_xlac.pth"
  "$PY" -c 'import site; print("import site; " + "; ".join(f"site.addsitedir({d!r})" for d in site.getsitepackages()))' \
    > "$site_dir/zz_machine.pth"
  PY=/tmp/xvenv/bin/python
else
  echo "note: no venv module; lit's Python tests will not find xlac"
fi
sed -i "1s|.*|#!$PY|" /tmp/xlac_src/bin/xla-*
# libdevice and ptxas: xlac.targets.cuda.ptx.wheel_file looks in $CUDA_HOME; find the toolkit's
# (or a pip CUDA wheel's nvidia/cuXX) folder when /usr/local/cuda is not it
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA_HOME/nvvm/libdevice/libdevice.10.bc" ]; then
  found=$(timeout 60 find /usr/local /opt /usr/lib "$("$PY" -c 'import sys; print(sys.base_prefix)')" \
            -name libdevice.10.bc -path '*nvvm/libdevice/*' 2>/dev/null | head -1)
  [ -n "$found" ] && CUDA_HOME=$(dirname "$(dirname "$(dirname "$found")")")
fi
echo "CUDA_HOME=$CUDA_HOME"
export XLA_PYTHON_CLIENT_PREALLOCATE=false         # jax and xlac share the GPU
# ../shared is where the tests look for the bench programs and the conformance suite
if [ ! -e "$REPO/../shared" ] && [ -d "$SHARED" ]; then
  ln -s "$SHARED" "$REPO/../shared" 2>/dev/null || echo "note: cannot link $REPO/../shared to $SHARED"
fi
timeout 120 "$PY" - <<'PY' || fail "xlac does not import or cannot make PTX"
import importlib.metadata as md, xlac, numpy, jax, torch_mlir
print("torch_mlir", list(torch_mlir.__path__))
from xlac.targets.cuda.ptx import wheel_file
print("xlac", xlac.__file__, "| numpy", numpy.__version__, "| jax", jax.__version__, jax.devices())
for name in ("torch-mlir", "llvmlite", "jaxlib", "ml_dtypes", "pytest", "lit"):
    try: print(f"  {name} {md.version(name)}")
    except md.PackageNotFoundError: print(f"  {name} absent")
print("libdevice:", wheel_file("nvvm/libdevice/libdevice.10.bc"), "| ptxas:", wheel_file("bin/ptxas"))
import llvmlite.binding
print("llvmlite's LLVM:", llvmlite.binding.llvm_version_info)
text = ("func.func @main(%a: tensor<1000xf32>) -> tensor<1000xf32> {\n"
        "  %0 = stablehlo.exponential %a : tensor<1000xf32>\n  return %0 : tensor<1000xf32>\n}")
exe = xlac.compile(text, target="cuda")
a = numpy.linspace(-3, 3, 1000, dtype=numpy.float32)
(got,) = exe.run(a)
print("exp on the GPU, max rel err:", float(numpy.max(numpy.abs(got - numpy.exp(a)) / numpy.exp(a))))
PY

step "CUDA pytest group"
timeout 240 "$PY" -m pytest -q -rs -p no:cacheprovider test/python/cuda/test_cuda.py \
  2>&1 | tee "$OUT/pytest_cuda.txt"
rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "pytest (CUDA group), exit $rc"

step "lit test/cuda"
if "$PY" -c "import lit" 2>/dev/null; then
  timeout 120 "$PY" -c "import sys; from lit.main import main; sys.argv[0] = 'lit'; main()" \
    -v test/cuda 2>&1 | tee "$OUT/lit_cuda.txt"
  rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "lit test/cuda, exit $rc"
else
  fail "lit is not installed (bash test/support/gpu_check.sh prepare puts its wheel in .whl/)"
fi

step "public conformance suite, target cuda"
if [ -f "$SHARED/conformance/run_conformance.py" ]; then
  (cd "$SHARED/conformance" && XLAC_CONFORMANCE_TARGET=cuda timeout "${CONFORMANCE_TIMEOUT:-240}" \
      "$PY" run_conformance.py public --backend xlac_backend.py:run -j "${CONFORMANCE_JOBS:-12}" \
      --timeout 60 --by group --show-failures 40 --json "$OUT/conformance_cuda.json" \
      ${CONFORMANCE_FILTER:+--filter "$CONFORMANCE_FILTER"}) \
    2>&1 | tee "$OUT/conformance_cuda.txt"
  rc=${PIPESTATUS[0]}; [ "$rc" = 0 ] || fail "conformance run, exit $rc (124: out of time)"
else
  fail "no conformance suite at $SHARED/conformance (copy it to ./shared, see the header)"
fi

step "bench: xlac target=cuda against XLA on the GPU"
if [ -f "$SHARED/bench/suite/manifest.json" ]; then
  timeout "${BENCH_TIMEOUT:-200}" "$PY" bench/run.py --target cuda --suite "$SHARED/bench/suite" \
    --budget-s "${BENCH_BUDGET_S:-45}" --kill-after-s 60 --out "$OUT/bench_cuda.md" \
    || fail "bench, exit $? (124: out of time)"
else
  fail "no bench suite at $SHARED/bench/suite (copy it to ./shared, see the header)"
fi

step "done: status $status"
exit $status
