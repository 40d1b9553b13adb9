"""A cuda program as bytes (``Executable.serialize()``, the compilation cache):
an artifact (``xlac.artifact.container``) whose code is its PTX, host schedule
and stage texts as JSON; the metadata and checks are every target's.

No machine code is stored (the driver JIT-compiles the PTX when the program is
first run), so the bytes are data.
"""

from __future__ import annotations

import base64
import json

from xlac.artifact.container import ArtifactError, metadata_for, pack
from xlac.artifact.csrc import c_identifier
from xlac.record import record
from xlac.signature import Signature
from xlac.targets.cuda.control_flow import Branch, Loop, ReadBack, step_fields
from xlac.targets.cuda.gemm_step import Gemm
from xlac.targets.cuda.steps import Alloc, Collective, Const, Copy, Launch, View


@record
class CudaCode:
    """What a cuda artifact's code holds."""

    ptx: str
    steps: list
    kernels: str                # the kernels as gpu.func (MLIR), for the emulator
    gpu: str                    # the "gpu" stage's text
    donations: dict = None      # donated input -> the output it may become (jax donate_argnums)


FORMAT = "xlac-cuda-5"            # 5: cuBLASLt matmuls; 4: loops and branches (nested steps)
_STEPS = {cls.__name__: cls for cls in (Alloc, Branch, Collective, Const, Copy, Gemm, Launch, Loop,
                                             ReadBack, View)}


def artifact_bytes(function, entry: str, signature: Signature) -> bytes:
    """The bytes of a cuda program (``CudaFunction``) for ``entry``."""
    code = {"format": FORMAT, "ptx": function.ptx, "kernels": function.kernels,
            "gpu": function.gpu, "steps": [_step_json(step) for step in function.steps],
            "donations": sorted(function.donations.items())}
    metadata = metadata_for("cuda", {entry: (c_identifier(entry), signature, function.grid)})
    return pack(json.dumps(code, sort_keys=True).encode(), metadata)


def read_code(artifact) -> CudaCode:
    """The code of a checked cuda artifact (``container.read_artifact``)."""
    try:
        code = json.loads(bytes(artifact.code))
        if code["format"] != FORMAT:
            raise ArtifactError(f"{artifact.what}: a cuda program of format {code['format']!r}, "
                                f"not {FORMAT!r}: compile it again with this xlac")
        return CudaCode(str(code["ptx"]), [_step_from(item) for item in code["steps"]],
                        str(code["kernels"]), str(code["gpu"]),
                        {int(i): int(o) for i, o in code.get("donations", [])})
    except ArtifactError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ArtifactError(f"{artifact.what}: not a cuda program ({exc!r})") from None


def _step_json(step) -> dict:
    fields = {name: _json_value(value) for name, value in step_fields(step).items()}
    if isinstance(step, Const):
        fields["data"] = base64.b64encode(step.data).decode()
    return {"step": type(step).__name__, **fields}


def _json_value(value):
    """Tuples as lists; the steps of a loop's or branch's regions as step objects."""
    if isinstance(value, tuple):
        return [_json_value(item) for item in value]
    return value if isinstance(value, (str, int, float, bool, bytes)) else _step_json(value)


def _step_from(item: dict):
    kind = _STEPS[item.pop("step")]
    if kind is Const:
        return Const(item["value"], base64.b64decode(item["data"]))
    return kind(**{name: _from_json(value) for name, value in item.items()})


def _from_json(value):
    """Lists as tuples (at any depth); a nested step object as its step."""
    if isinstance(value, list):
        return tuple(_from_json(item) for item in value)
    if isinstance(value, dict):
        return _step_from(dict(value))
    return value
