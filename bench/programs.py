"""The programs to benchmark: the shared suite plus any .mlir file named on the command line,
and the inputs each is called with (made from a seed, or its recipe's own: models.py).

Imported by the xlac worker process too, so it needs numpy only (jax is imported lazily,
just to read the signature of an extra file).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SUITE = REPO.parent / "shared" / "bench" / "suite"

PEAK_FLOPS = 320e9       # fp32 FMA peak of both cores (shared/bench/README.md)
PEAK_BYTES = 45e9        # L3-resident bandwidth of both cores (same source)

# MLIR element type -> numpy dtype name, for programs that come without a manifest.
_MLIR_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16",
                "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
                "complex<f32>": "complex64", "complex<f64>": "complex128"}


@dataclass(frozen=True)
class TensorSpec:
    """One argument or result: shape, numpy dtype name, and how to fill it."""

    shape: tuple[int, ...]
    dtype: str
    dist: str = "normal"
    scale: float = 1.0

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * to_dtype(self.dtype).itemsize


@dataclass(frozen=True)
class Program:
    """A StableHLO program and what the harness needs to feed and judge it."""

    name: str
    path: Path
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    seed_index: int                  # the anchors' scripts seed workload i with 1000*seed+i
    flops: float | None = None       # None: taken from XLA's cost analysis
    in_suite: bool = True
    group: str = "suite"             # suite | extra | model: each has its geometric mean
    recipe: tuple | None = None      # where a model's inputs come from (models.py)
    description: str = ""

    def source(self) -> str | bytes:
        """What both compilers get: the file's text (bytes for bytecode)."""
        if self.path.suffix == ".mlirbc":
            return self.path.read_bytes()
        return self.path.read_text()

    @property
    def nbytes(self) -> int:
        """Compulsory traffic: every input read once and every output written once."""
        return sum(s.nbytes for s in self.inputs + self.outputs)


def roofline_ms(flops: float | None, nbytes: int) -> float:
    """The machine's lower bound for one call: compute- or bandwidth-bound, whichever is worse."""
    return 1e3 * max((flops or 0.0) / PEAK_FLOPS, nbytes / PEAK_BYTES)


def to_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes  # numpy has no bfloat16 of its own
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def suite_programs(suite: Path = SUITE) -> list[Program]:
    """The ten workloads in the manifest's order (which fixes their seeds)."""
    manifest = json.loads((suite / "manifest.json").read_text())
    programs = []
    for index, entry in enumerate(manifest["workloads"]):
        programs.append(Program(
            name=entry["name"], path=suite / entry["files"]["pretty"],
            inputs=tuple(_manifest_spec(s) for s in entry["inputs"]),
            outputs=tuple(_manifest_spec(s) for s in entry["outputs"]),
            seed_index=index, flops=float(entry["flops"])))
    return programs


def _manifest_spec(spec: dict) -> TensorSpec:
    return TensorSpec(tuple(spec["shape"]), spec["dtype"], spec.get("dist", "normal"),
                      float(spec.get("scale", 1.0)))


def extra_program(path: Path, seed_index: int) -> Program:
    """A program from the command line; its signature is read with jaxlib's MLIR parser."""
    name = path.name.split(".")[0]
    inputs, outputs = _read_signature(path)
    saved = path.with_name(name + ".inputs.npz")    # inputs the program came with (single_ops.py)
    return Program(name=name, path=path, inputs=inputs, outputs=outputs,
                   seed_index=seed_index, flops=None, in_suite=False, group="extra",
                   recipe=("npz", str(saved)) if saved.exists() else None)


def _read_signature(path: Path) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    with jax_mlir.make_ir_context():
        try:
            module = ir.Module.parse(path.read_bytes() if path.suffix == ".mlirbc"
                                     else path.read_text())
        except ir.MLIRError as exc:
            raise ValueError(f"{path}: error: jaxlib cannot parse it: {exc}") from None
        for op in module.body.operations:
            if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
                return (tuple(_mlir_spec(t, path) for t in ftype.inputs),
                        tuple(_mlir_spec(t, path) for t in ftype.results))
    raise ValueError(f"{path}: error: no function @main (the entry point the harness calls)")


def _mlir_spec(mlir_type, path: Path) -> TensorSpec:
    from jax._src.lib.mlir import ir

    tensor = ir.RankedTensorType(mlir_type)
    element = str(tensor.element_type)
    if element not in _MLIR_DTYPES or any(d < 0 for d in tensor.shape):
        raise ValueError(f"{path}: error: cannot make inputs for {mlir_type}; "
                         "the harness needs static shapes of float, int or bool")
    dist = "normal" if element.startswith(("f", "bf")) else "small_int"
    return TensorSpec(tuple(tensor.shape), _MLIR_DTYPES[element], dist)


def make_inputs(program: Program, seed: int = 0) -> list[np.ndarray]:
    """The same arrays in every process; the suite's match shared/bench/workloads.py."""
    if program.recipe is not None:               # a real model or a saved case: its own inputs
        return recipe_inputs(program, seed)
    rng = np.random.default_rng(1000 * seed + program.seed_index)
    return [np.ascontiguousarray(_fill(rng, spec)) for spec in program.inputs]


def _fill(rng: np.random.Generator, spec: TensorSpec) -> np.ndarray:
    dtype = to_dtype(spec.dtype)
    if spec.dist == "small_int" or dtype.kind in "iub":
        high = 2 if dtype.kind == "b" else 8    # small: no overflow in sums or products
        return rng.integers(0, high, spec.shape).astype(dtype)
    if spec.dist == "uniform":
        values = rng.random(spec.shape, dtype=np.float32)
    else:
        values = rng.standard_normal(spec.shape, dtype=np.float32)
    if spec.scale != 1.0:
        values *= np.float32(spec.scale)
    return values.astype(dtype, copy=False)


def recipe_inputs(program: Program, seed: int) -> list[np.ndarray]:
    """The arguments ``program.recipe`` gives, in order, as contiguous numpy arrays:
    ("shared", NAME) calls ../shared/models/make_inputs.py's ``inputs(NAME, seed)``;
    ("npz", PATH) loads saved inputs (keys sorted = argument order); ("drawn", PATH) draws
    each argument as the JSON at PATH says (bench/export_gpu_sized.py)."""
    kind, where = program.recipe
    if kind == "shared":
        arrays = _shared_make_inputs(Path(program.path).parent).inputs(where, seed)
    elif kind == "drawn":
        rng = np.random.default_rng(1000 * seed + program.seed_index)
        arrays = [draw(rng, recipe) for recipe in json.loads(Path(where).read_text())["inputs"]]
    elif kind == "npz":
        with np.load(where) as saved:
            arrays = [saved[key] for key in sorted(saved.files)]
    else:
        raise ValueError(f"{program.name}: unknown input recipe {kind!r}")
    if len(arrays) != len(program.inputs):
        raise ValueError(f"{program.name}: the recipe gives {len(arrays)} inputs, "
                         f"@main takes {len(program.inputs)}")
    # in the program's element types (bf16 is saved as f32); ascontiguousarray makes 0-d 1-d
    return [np.asarray(a, order="C").astype(to_dtype(spec.dtype), copy=False)
            for a, spec in zip(arrays, program.inputs)]


def draw(rng: np.random.Generator, recipe: dict) -> np.ndarray:
    """One argument from its recipe: integers in [low, high), else a normal with the
    recipe's mean and std (a weight keeps its initialiser's scale; std 0 is a constant)."""
    shape, dtype = tuple(recipe["shape"]), to_dtype(recipe["dtype"])
    if "low" in recipe:
        return rng.integers(recipe["low"], recipe["high"], shape).astype(dtype)
    values = rng.standard_normal(shape, dtype=np.float32)
    values *= np.float32(recipe["std"])
    values += np.float32(recipe["mean"])
    return values.astype(dtype, copy=False)


_LOADED: dict[Path, object] = {}


def _shared_make_inputs(folder: Path):
    """../shared/models/make_inputs.py as a module (it is not a package)."""
    if folder not in _LOADED:
        spec = importlib.util.spec_from_file_location("shared_make_inputs", folder / "make_inputs.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _LOADED[folder] = module
    return _LOADED[folder]
