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
from xlac.targets.cuda.schedule import Alloc, Collective, Const, Copy, Launch, View


@record
class CudaCode:
    """What a cuda artifact's code holds."""

    ptx: str
    steps: list
    kernels: str                # the kernels as gpu.func (MLIR), for the emulator
    gpu: str                    # the "gpu" stage's text


FORMAT = "xlac-cuda-3"            # 3: in an artifact container; 2: steps name their class
_STEPS = {cls.__name__: cls for cls in (Alloc, Collective, Const, Copy, Launch, View)}


def artifact_bytes(function, entry: str, signature: Signature) -> bytes:
    """The bytes of a cuda program (``CudaFunction``) for ``entry``."""
    code = {"format": FORMAT, "ptx": function.ptx, "kernels": function.kernels,
            "gpu": function.gpu, "steps": [_step_json(step) for step in function.steps]}
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
                        str(code["kernels"]), str(code["gpu"]))
    except ArtifactError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ArtifactError(f"{artifact.what}: not a cuda program ({exc!r})") from None


def _step_json(step) -> dict:
    fields = dict(vars(step))
    if isinstance(step, Const):
        fields["data"] = base64.b64encode(step.data).decode()
    return {"step": type(step).__name__, **fields}


def _step_from(item: dict):
    kind = _STEPS[item.pop("step")]
    if kind is Const:
        item["data"] = base64.b64decode(item["data"])
    if kind is Launch:
        item["grid"], item["block"] = tuple(item["grid"]), tuple(item["block"])
        item["args"] = tuple(tuple(arg) for arg in item["args"])
    if kind is Collective:
        item["buffers"] = tuple(item["buffers"])
        item["groups"] = tuple(tuple(g) for g in item["groups"])
        item["pairs"] = tuple(tuple(p) for p in item["pairs"])
    return kind(**item)
