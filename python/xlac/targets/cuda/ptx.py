"""gpu.modules (LLVM + NVVM dialect) -> one PTX text for sm_90, and ptxas.

torch-mlir's LLVM has no NVPTX backend, llvmlite's LLVM 22 does: each
kernel is translated to LLVM IR text by MLIR, made LLVM-22 readable
(``xlac.targets.cuda.llvm_compat``), renamed after its gpu.module (outlining names
every kernel ``main_kernel``), linked into one module with libdevice (for
``__nv_expf`` and friends), optimized at O3 and printed as PTX. The driver
JIT-compiles that PTX at load time, so any driver >= R520 runs it.
"""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path

from xlac.errors import CompileError, error, format_location
from xlac.mlir import ir, translate_to_llvm_ir
from xlac.targets.cuda.llvm_compat import llvm24_to_llvm22

ARCH = "sm_90"
_TRIPLE = "nvptx64-nvidia-cuda"


def kernel_modules(module: ir.Module) -> dict[str, str]:
    """gpu.module name -> the LLVM IR text of its kernel (LLVM 22 syntax)."""
    kernels = {}
    for op in module.body.operations:
        if op.operation.name == "gpu.module":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            # cloned, not printed and parsed: printing a nested op numbers
            # the whole module each time (quadratic: 18 s for 300 kernels)
            fresh = ir.Module.create(loc=op.location)
            with ir.InsertionPoint(fresh.body):
                for inner in op.regions[0].blocks[0].operations:
                    inner.operation.clone()
            _check_translatable(fresh, name)
            kernels[name] = llvm24_to_llvm22(translate_to_llvm_ir(fresh.operation))
    return kernels


def module_ptx(module: ir.Module) -> str:
    """The PTX of ``module`` at the "gpu" stage (its "ptx" stage's text)."""
    return to_ptx(shared_kernels(kernel_modules(module))[0])


def shared_kernels(kernels: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The distinct kernels of ``kernels`` (gpu.module name -> LLVM IR text),
    each under the first name it has, and every name -> that name: a layer
    repeated N times makes N identical gpu.modules, compiled once (a 500-op
    transpose/dot chain: 741 kernels, 5 distinct; BERT 152, 43)."""
    first: dict[str, str] = {}
    canonical = {name: first.setdefault(text, name) for name, text in kernels.items()}
    return {name: kernels[name] for name in first.values()}, canonical


def _check_translatable(kernel: ir.Module, name: str) -> None:
    """Refuse, as a CompileError, what would make the LLVM translation abort the process."""
    left = []

    def visit(op):
        if not op.name.startswith(("llvm.", "nvvm.", "builtin.module")):
            left.append(op)
        return ir.WalkResult.ADVANCE

    kernel.operation.walk(visit)
    if left:
        op = left[0]
        raise CompileError(error(f"kernel {name} still has "
                           f"'{op.name}' after lowering to NVVM; this program is not supported "
                           "on cuda yet", format_location(op.location)))


def to_ptx(kernels: dict[str, str]) -> str:
    """One PTX text whose entries are named after the gpu.modules."""
    llvm = _llvm()
    machine = _target_machine()
    linked = None
    for name, text in kernels.items():
        part = _parse(llvm, text, machine)
        part.get_function("main_kernel").name = name
        if linked is None:
            linked = part
        else:
            linked.link_in(part)
    if linked is None:
        linked = _parse(llvm, "", machine)
    if any(f.is_declaration and f.name.startswith("__nv_") for f in linked.functions):
        linked.link_in(_libdevice().clone())
    for function in linked.functions:
        if not function.is_declaration and function.name not in kernels:
            function.linkage = "internal"               # lets O3 inline and drop unused libdevice
    _optimize(llvm, linked, machine)
    return machine.emit_assembly(linked)


def _parse(llvm, text: str, machine):
    try:
        module = llvm.parse_assembly(text)
    except RuntimeError as exc:
        raise CompileError(error(f"llvmlite rejected a kernel's LLVM IR: {exc}"),
                           "a new torch-mlir may print IR that xlac.targets.cuda.llvm_compat must rewrite") from None
    module.triple = _TRIPLE
    module.data_layout = str(machine.target_data)
    return module


def _optimize(llvm, module, machine) -> None:
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(machine, options)
    manager = builder.getModulePassManager()
    manager.add_global_dead_code_eliminate_pass()
    manager.run(module, builder)


@functools.cache
def _llvm():
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


@functools.cache
def _target_machine():
    llvm = _llvm()
    return llvm.Target.from_triple(_TRIPLE).create_target_machine(cpu=ARCH, opt=3)


@functools.cache
def _libdevice():
    """libdevice parsed once; each program links a clone."""
    path = wheel_file("nvvm/libdevice/libdevice.10.bc")
    if path is None:
        raise CompileError(error("a kernel calls libdevice math, but libdevice.10.bc "
                           "was not found"), "pip install 'xlac[cuda]' (nvidia-cuda-nvcc-cu12), "
                           "or set CUDA_HOME to a CUDA toolkit")
    module = _llvm().parse_bitcode(path.read_bytes())
    module.triple = _TRIPLE
    module.data_layout = str(_target_machine().target_data)
    return module


def wheel_file(relative: str) -> Path | None:
    """A file of the CUDA compiler tools: ``nvidia/cuda_nvcc/<relative>`` of the
    nvidia-cuda-nvcc-cu12 wheel, else ``<relative>`` in a CUDA toolkit
    ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda); both lay out bin/ptxas and
    nvvm/libdevice the same way, so machines with only the toolkit work too."""
    try:
        files = metadata.distribution("nvidia-cuda-nvcc-cu12").files or []
    except metadata.PackageNotFoundError:
        files = []
    wanted = f"nvidia/cuda_nvcc/{relative}"
    for file in files:
        if str(file).replace("\\", "/") == wanted:
            return Path(file.locate()).resolve()
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and Path(root, relative).is_file():
            return Path(root, relative).resolve()
    return None


def ptxas(ptx: str, arch: str = ARCH) -> str:
    """Assemble ``ptx`` with the wheel's ptxas (validation); its report, or CompileError."""
    tool = wheel_file("bin/ptxas")
    if tool is None:
        raise FileNotFoundError("ptxas not found: pip install 'xlac[cuda]'")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "k.ptx")
        source.write_text(ptx)
        done = subprocess.run([str(tool), "-v", "-O3", f"-arch={arch}", str(source), "-o",
                               str(Path(tmp, "k.cubin"))], capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(error(f"ptxas rejected the PTX: {done.stderr.strip()}"))
    return done.stderr
