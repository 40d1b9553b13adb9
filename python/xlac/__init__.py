"""xlac: an XLA-style compiler for StableHLO, written in Python on MLIR.

    import xlac
    exe = xlac.compile(text)          # MLIR text, bytes, a Path, or jax's Lowered
    outs = exe.run(x, y)              # a list of numpy arrays
    exe = xlac.load("model.so")       # an xla-compile artifact, no MLIR needed
    f = xlac.jit(python_fn)           # JAX lowers, xlac compiles (per input signature)
"""

from xlac.artifact.container import ArtifactError
from xlac.compiler import compile  # noqa: A004 - the API's name
from xlac.debug.dump import LargeConstantWarning
from xlac.errors import CompileError, InputError, ResourceLimitError, UnsupportedOpError, XlacError
from xlac.executable import Executable
from xlac.jax_jit import jit
from xlac.loader import deserialize, load
from xlac.options import Options
from xlac.signature import Signature, TensorSpec
from xlac.version import __version__

__all__ = ["compile", "CompileError", "UnsupportedOpError", "InputError", "XlacError",
           "ResourceLimitError",
           "Executable", "Options", "Signature", "TensorSpec", "__version__", "load",
           "deserialize", "jit", "ArtifactError", "LargeConstantWarning"]
