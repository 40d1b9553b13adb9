"""Every knob of xlac in one frozen record, and the one place that reads ``XLAC_*``.

The environment is read once per call at the API edge (``xlac.compile``,
``xlac.load``, the CLIs' flags) into an ``Options``; from there the record is
passed down. Passes never see it: the pipeline turns what they need into
pass options (``xla-apply-schedules{threads=2 vector-bytes=32}``).

    opts = xlac.Options.from_env().replace(num_threads=1, dump_to="/tmp/d")
    exe = xlac.compile(text, options=opts)
"""

from __future__ import annotations

import os
from pathlib import Path

import xlac.record as records
from xlac.record import factory, record


@record                             # a frozen dataclass, without importing dataclasses
class Knob:
    """One option: its field, its environment variable, and what it does."""

    field: str
    variable: str
    help: str
    flag: str = ""                 # the CLIs' spelling, where one exists


#: Copies of rows moving this many bytes or more run on the threads. 16 MiB,
#: not 1 MiB: the sweep's concatenates (two 512 x 1024 operands) ran 1.5-3x
#: slower split at 2-8 MiB on an idle 2-core Zen 4 and only the 16 MiB c128
#: ones gained (0.6x); docs/PERFORMANCE.md, "The copy split's threshold".
SPLIT_COPY_BYTES = 16 << 20

KNOBS = (
    Knob("dump_to", "XLAC_DUMP_TO", "directory: per compiled module, the input, the pipeline, "
         "the IR after every pass, the fusion graph, the pass times and a trace"),
    Knob("timing", "XLAC_TIMING", "1: per-pass wall times on stderr", "--mlir-timing"),
    Knob("trace_to", "XLAC_TRACE_TO", "file: a compile-time trace (Chrome trace-event JSON, "
         "open in Perfetto), one span per pass", "--xla-trace"),
    Knob("disable_passes", "XLAC_DISABLE_PASSES", "comma-separated pass names to skip "
         "(bisecting numerics)", "--disable-passes"),
    Knob("large_constant_bytes", "XLAC_LARGE_CONSTANT_BYTES",
         "warn about constants at least this big (default 1 MiB)"),
    Knob("cache_dir", "XLAC_CACHE_DIR", "compilation cache directory (default "
         "$XDG_CACHE_HOME/xlac or ~/.cache/xlac; empty: no cache)"),
    Knob("num_threads", "XLAC_NUM_THREADS", "threads parallel loops are split for "
         "(compile time; default: every core this process may use, shared among the MPI "
         "ranks on this host when run by mpiexec)"),
    Knob("split_copy_bytes", "XLAC_SPLIT_COPY_BYTES", "a copy of rows (each operand of a "
         "concatenate) that moves at least this many bytes runs in chunks on the threads "
         "(default 16 MiB; 0: every copy on one thread; "
         "docs/PERFORMANCE.md, \"Concatenates' copies on the threads\")"),
    Knob("cpu", "XLAC_CPU", "the CPU to compile for: host (default), x86-64-v2, x86-64-v3 "
         "(AVX2), x86-64-v4 (AVX-512)", "--cpu"),
    Knob("malloc_tuning", "XLAC_MALLOC_TUNING", "0: keep glibc's allocation defaults "
         "(docs/cpu-runtime.md)"),
    Knob("device", "XLAC_DEVICE", "the GPU a cuda program runs on (0, 1, ...; one this "
         "machine has, else the first call says how many there are); default: the MPI local "
         "rank's, one GPU per rank"),
    Knob("cuda_graphs", "XLAC_CUDA_GRAPHS", "0: launch cuda kernels one by one instead of "
         "replaying a CUDA graph"),
    Knob("cuda_contractions", "XLAC_CUDA_CONTRACTIONS", "how cuda computes matmuls: auto "
         "(default: cuBLASLt where libcublasLt is found when compiling, as XLA calls cuBLAS; "
         "else the generated kernels), cublaslt, or generated (docs/cuda.md)"),
    Knob("matmul_precision", "XLAC_MATMUL_PRECISION", "f32 dots at DEFAULT precision on cuda's "
         "cuBLASLt path: highest (default: full f32, the reference interpreter's numbers) or "
         "tensorfloat32 (TF32 tensor cores, as XLA computes them on a GPU; HIGHEST dots stay f32)"),
    Knob("fusion_remarks", "XLAC_FUSION_REMARKS", "1: xla-fuse remarks on every fusion it "
         "rejects, and why", "--xla-fusion-remarks"),
    Knob("profile", "XLAC_PROFILE", "1: compile with a clock around every kernel "
         "(exe.profile() and xla-run --profile set it for their own compile)"),
    Knob("progress", "XLAC_PROGRESS", "auto (default: a bar on a terminal for long compiles, "
         "log lines otherwise), bar, log or off", "--progress"),
    Knob("isolate_input", "XLAC_ISOLATE_INPUT", "0: parse programs in this process (trusted "
         "input only); default: a separate worker process parses and verifies them first, so "
         "a parser crash on bad input is a CompileError (docs/security.md)"),
    Knob("parse_timeout", "XLAC_PARSE_TIMEOUT", "seconds the isolated parser may take for one "
         "program (default 20, plus 1 s per 5 MB)"),
    Knob("pieces", "XLAC_PIECES", "0: machine code for a big program in one piece (one JIT); "
         "default: split into pieces compiled on every core and cached apart "
         "(docs/compile-time.md)"),
    Knob("micro_kernels", "XLAC_MICRO_KERNELS", "0: compile every matmul's register tiles "
         "into the program; default: call micro-kernels compiled once per machine and CPU "
         "level, kept in the cache directory (docs/compile-time.md); 0 also keeps large bf16 "
         "matmuls off the AMX kernel (docs/pipeline.md)"),
    Knob("verify_each", "XLAC_VERIFY_EACH", "1: verify the IR after every pass (as mlir-opt "
         "does); default: after each stage, as XLA verifies after each pass pipeline (verifying "
         "after each of the ~100 passes was 25-30% of a big program's compile)", "--verify-each"),
    Knob("overlap_collectives", "XLAC_OVERLAP_COLLECTIVES", "auto (default): a collective "
         "is started early (MPI_Iallreduce ...) and waited for late where computation lies "
         "between; always: every collective so; off (or 0): one blocking MPI call each "
         "(docs/distributed.md)"),
    Knob("collective_bucket_bytes", "XLAC_COLLECTIVE_BUCKET_BYTES", "all-reduces of "
         "independent tensors are combined into one of up to this many bytes (0: never; "
         "docs/distributed.md)"),
    Knob("mpicc", "XLAC_MPICC", "the MPI compiler wrapper xlac's MPI shim is built with "
         "(default: the mpicc of the installed mpich wheel, else mpicc on PATH); "
         "docs/distributed.md"),
)

# What MPI launchers tell each process about the ranks sharing its host
# (MPICH/hydra, Open MPI, MVAPICH, Slurm's srun).
_LOCAL_RANK_VARIABLES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE",
                         "MV2_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")
_LOCAL_RANK_ID_VARIABLES = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK",
                            "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_WORLD_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "PMIX_SIZE")


def cpuid_mask_level() -> str | None:
    """The x86-64 level this process's CPUID is masked to, or None: a fact about the
    process, not a knob. The benchmarks' CPUID mask (bench/cpuid_mask.c) sets
    XLAC_CPUID_MASK where it hides the features above that level; /proc/cpuinfo
    still lists them, so ``cpu_model("host")`` asks here which to leave out."""
    return os.environ.get("XLAC_CPUID_MASK") or None


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "xlac"


@record
class Options:
    """How to compile and run; every field has an ``XLAC_*`` twin (``KNOBS``)."""

    dump_to: str = ""
    timing: bool = False
    trace_to: str = ""
    disable_passes: tuple[str, ...] = ()
    large_constant_bytes: int = 1 << 20
    cache_dir: Path | None = factory(_default_cache_dir)
    num_threads: int = 0                   # 0: every core this process may use
    split_copy_bytes: int = SPLIT_COPY_BYTES   # 0: copies on one thread
    cpu: str = "host"
    malloc_tuning: bool = True
    cuda_graphs: bool = True
    cuda_contractions: str = "auto"        # auto, cublaslt, generated
    matmul_precision: str = "highest"      # highest, tensorfloat32 (cuda's cuBLASLt f32 dots)
    device: int = -1                       # the GPU (cuda); -1: the local rank's
    fusion_remarks: bool = False
    profile: bool = False
    progress: str = "auto"
    isolate_input: bool = True
    parse_timeout: float = 20.0
    mpicc: str = ""
    overlap_collectives: str = "auto"         # auto, always, off
    collective_bucket_bytes: int = 0
    pieces: bool = True
    micro_kernels: bool = True
    verify_each: bool = False
    local_ranks: int = 1                   # MPI ranks on this host (from the launcher)
    launched_ranks: int = 1                # ranks of the MPI job that started this process
    local_rank: int = 0                    # this rank among those on its host: its GPU

    def __post_init__(self):
        # cache_dir="" means no cache, as XLAC_CACHE_DIR= does (Path("") would be ".")
        if isinstance(self.cache_dir, str):
            object.__setattr__(self, "cache_dir",
                               Path(self.cache_dir).expanduser() if self.cache_dir else None)

    @classmethod
    def from_env(cls, environ=None) -> Options:
        """The defaults, overridden by every ``XLAC_*`` variable that is set."""
        env = os.environ if environ is None else environ
        values = {}
        for knob in KNOBS:
            if knob.variable in env:
                values[knob.field] = _parse(knob.field, env[knob.variable])
        return cls(**values, local_ranks=_count(env, _LOCAL_RANK_VARIABLES),
                   launched_ranks=_count(env, _WORLD_SIZE_VARIABLES),
                   local_rank=_count(env, _LOCAL_RANK_ID_VARIABLES, default=0))

    def replace(self, **changes) -> Options:
        return records.replace(self, **changes)

    def with_texts(self, **values) -> Options:
        """``replace``, a value given as text read as its ``XLAC_*`` variable's
        would be (a named pipeline's options: ``threads=2``, ``micro-kernels=false``)."""
        return self.replace(**{name: _parse(name, _bool_text(value)) if isinstance(value, str) else value
                               for name, value in values.items()})

    @property
    def stepwise(self) -> bool:
        """Run one pass at a time (to dump, time or trace each)."""
        return bool(self.dump_to or self.timing or self.trace_to)

    def threads(self) -> int:
        """Threads parallel loops are split for: the cores this process may use,
        shared among the MPI ranks on its host (at least one each)."""
        if self.num_threads > 0:
            return self.num_threads
        return max(1, len(os.sched_getaffinity(0)) // max(1, self.local_ranks))


def _count(env, variables, default: int = 1) -> int:
    """A number an MPI launcher gives its processes (``default`` outside MPI)."""
    for name in variables:
        text = env.get(name, "").split("(")[0].strip()
        if text.isdigit() and (int(text) > 0 or default == 0):
            return int(text)
    return default


def _parse(name: str, text: str):
    text = text.strip()
    if name == "disable_passes":
        return tuple(p.strip() for p in text.split(",") if p.strip())
    if name == "cache_dir":
        return Path(text).expanduser() if text else None
    if name in ("timing", "fusion_remarks", "profile", "verify_each"):
        return text not in ("", "0", "false")
    if name == "cuda_contractions":
        return text.lower() if text.lower() in ("auto", "cublaslt", "generated") else "auto"
    if name == "matmul_precision":
        return "tensorfloat32" if text.lower() in ("tensorfloat32", "tf32", "default") else "highest"
    if name == "overlap_collectives":
        return "off" if text.lower() in ("0", "false", "off") else \
            "always" if text.lower() == "always" else "auto"
    if name in ("malloc_tuning", "cuda_graphs", "isolate_input", "pieces", "micro_kernels"):
        return text not in ("0", "false")
    if name in ("large_constant_bytes", "num_threads", "collective_bucket_bytes", "split_copy_bytes"):
        return int(text) if text.isdigit() else records.defaults(Options)[name]
    if name == "device":
        return int(text) if text.isdigit() else records.defaults(Options)[name]
    if name == "parse_timeout":
        return _seconds(text, records.defaults(Options)[name])
    return text or records.defaults(Options)[name]


def _bool_text(text: str) -> str:
    """``True``/``False`` as the variables spell them (pipeline text may capitalize)."""
    return text.lower() if text.lower() in ("true", "false") else text


def _seconds(text: str, default: float) -> float:
    try:
        value = float(text)
    except ValueError:
        return default
    return value if value > 0 else default


def markdown() -> str:
    """docs/options.md: every knob, generated from ``KNOBS``."""
    import dataclasses
    lines = ["# Options", "",
             "Generated from `python/xlac/options.py` by `python -m xlac.options`; do not edit.",
             "Every knob is a field of `xlac.Options` (`xlac.compile(..., options=...)`) and an",
             "environment variable read once per call; a tool flag, where one exists, wins.", "",
             "| field | variable | flag | what it does |", "|---|---|---|---|"]
    for knob in KNOBS:
        default = Options.__dataclass_fields__[knob.field].default
        shown = "" if isinstance(default, dataclasses._MISSING_TYPE) else f" (default `{default!r}`)"
        lines.append(f"| `{knob.field}`{shown} | `{knob.variable}` | "
                     f"{f'`{knob.flag}`' if knob.flag else ''} | {knob.help} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
