"""LLVM IR kernels -> PTX with llvmlite's NVPTX back end: no MLIR here, so the
NVPTX worker process (``xlac.targets.cuda.ptx_worker``) imports only this.

The kernels are linked into one module with libdevice (for ``__nv_expf`` and
friends), optimized at O3 and printed as PTX for sm_90. LLVM's instruction
selection aborts the process (``LLVM ERROR: Cannot select``) on what the
target lacks: callers run this in the worker (``xlac.targets.cuda.ptx_isolation``).
"""

from __future__ import annotations

import functools
import os
from importlib import metadata
from pathlib import Path

from xlac.errors import CompileError, error

ARCH = "sm_90"
_TRIPLE = "nvptx64-nvidia-cuda"


def compile_ptx(kernels: dict[str, str]) -> str:
    """One PTX text whose entries are named after the gpu.modules (in this process)."""
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


