"""xlac: an XLA-style compiler for StableHLO, written in Python on MLIR.

    import xlac
    exe = xlac.compile(text)          # MLIR text, bytes, a Path, or jax's Lowered
    outs = exe.run(x, y)              # a list of numpy arrays
    exe = xlac.load("model.so")       # an xla-compile artifact, no MLIR needed
    f = xlac.jit(python_fn)           # JAX lowers, xlac compiles (per input signature)

Names are imported on first use (PEP 562): ``import xlac`` loads no MLIR
bindings, numpy or jax, so a compile that hits the cache never pays for them.
"""

from __future__ import annotations

import importlib

from xlac.version import __version__

TYPE_CHECKING = False             # typing.TYPE_CHECKING: importing typing costs a cache hit 2 ms

_WHERE = {"compile": "xlac.compiler", "CompileError": "xlac.errors",
          "UnsupportedOpError": "xlac.errors", "InputError": "xlac.errors",
          "XlacError": "xlac.errors", "ResourceLimitError": "xlac.errors",
          "Executable": "xlac.executable",
          "Options": "xlac.options", "Signature": "xlac.signature",
          "TensorSpec": "xlac.signature", "load": "xlac.loader",
          "deserialize": "xlac.loader", "jit": "xlac.jax_jit",
          "ArtifactError": "xlac.artifact.container",
          "LargeConstantWarning": "xlac.debug.dump",
          "DeviceArray": "xlac.targets.cuda.device_array",
          "device_put": "xlac.targets.cuda.placement"}

__all__ = ["compile", "CompileError", "UnsupportedOpError", "InputError", "XlacError",
           "ResourceLimitError",
           "Executable", "Options", "Signature", "TensorSpec", "__version__", "load",
           "deserialize", "jit", "ArtifactError", "LargeConstantWarning", "DeviceArray",
           "device_put"]


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'xlac' has no attribute '{name}'")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value                  # the next look-up is a plain one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from xlac.artifact.container import ArtifactError
    from xlac.compiler import compile  # noqa: A004 - the API's name
    from xlac.debug.dump import LargeConstantWarning
    from xlac.errors import CompileError, InputError, ResourceLimitError, UnsupportedOpError, XlacError
    from xlac.executable import Executable
    from xlac.jax_jit import jit
    from xlac.loader import deserialize, load
    from xlac.options import Options
    from xlac.signature import Signature, TensorSpec
    from xlac.targets.cuda.device_array import DeviceArray
    from xlac.targets.cuda.placement import device_put
