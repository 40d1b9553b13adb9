"""A cuda program as bytes (``Executable.serialize()``, the compilation cache):
its PTX, host schedule and signature as JSON.

No machine code is stored (the driver JIT-compiles the PTX when the program is
first run), so the bytes are data, checked by a SHA-256 of the payload.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from xlac.signature import Signature
from xlac.targets.cuda.schedule import Alloc, Const, Copy, Launch, View

FORMAT = "xlac-cuda-1"
_STEPS = {cls.__name__: cls for cls in (Alloc, Const, Copy, Launch, View)}


@dataclass(frozen=True)
class CudaEntry:
    """What a cuda program's bytes hold."""

    signature: Signature
    ptx: str
    steps: list
    kernels: str                # the kernels as gpu.func (MLIR), for the emulator
    gpu: str                    # the "gpu" stage's text


def entry_bytes(function, entry: str, signature: Signature) -> bytes:
    """The bytes of a cuda program (``CudaFunction``) for ``entry``."""
    payload = {
        "format": FORMAT, "entry": entry, "signature": signature.to_json(),
        "ptx": function.ptx, "kernels": function.kernels, "gpu": function.gpu,
        "steps": [_step_json(step) for step in function.steps],
    }
    text = json.dumps(payload, sort_keys=True)
    return json.dumps({"sha256": hashlib.sha256(text.encode()).hexdigest(), "payload": text}).encode()


def read_entry(blob: bytes, entry: str, what: str) -> CudaEntry:
    """The program in ``blob``; ValueError if it is corrupted or not ``entry``'s."""
    try:
        outer = json.loads(blob)
        text = outer["payload"]
        if hashlib.sha256(text.encode()).hexdigest() != outer["sha256"]:
            raise ValueError(f"{what}: checksum mismatch: the data is corrupted")
        payload = json.loads(text)
        if payload["format"] != FORMAT or payload["entry"] != entry:
            raise ValueError(f"{what}: made for another entry or xlac version")
        steps = [_step_from(item) for item in payload["steps"]]
        return CudaEntry(Signature.from_json(payload["signature"]), str(payload["ptx"]), steps,
                         str(payload["kernels"]), str(payload["gpu"]))
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what}: not a cuda program ({exc!r})") from None


def _step_json(step) -> dict:
    fields = dict(vars(step))
    if isinstance(step, Const):
        fields["data"] = base64.b64encode(step.data).decode()
    return {"kind": type(step).__name__, **fields}


def _step_from(item: dict):
    kind = _STEPS[item.pop("kind")]
    if kind is Const:
        item["data"] = base64.b64decode(item["data"])
    if kind is Launch:
        item["grid"], item["block"] = tuple(item["grid"]), tuple(item["block"])
        item["args"] = tuple(tuple(arg) for arg in item["args"])
    return kind(**item)
