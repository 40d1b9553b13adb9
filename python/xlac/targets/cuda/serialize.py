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

from xlac.collectives import DeviceGrid
from xlac.signature import Signature
from xlac.targets.cuda.schedule import Alloc, Collective, Const, Copy, Launch, View

FORMAT = "xlac-cuda-2"            # 2: steps name their class under "step" (Collective has a "kind")
_STEPS = {cls.__name__: cls for cls in (Alloc, Collective, Const, Copy, Launch, View)}


@dataclass(frozen=True)
class CudaEntry:
    """What a cuda program's bytes hold."""

    signature: Signature
    ptx: str
    steps: list
    kernels: str                # the kernels as gpu.func (MLIR), for the emulator
    gpu: str                    # the "gpu" stage's text
    grid: DeviceGrid | None = None   # an SPMD program's device grid


def entry_bytes(function, entry: str, signature: Signature) -> bytes:
    """The bytes of a cuda program (``CudaFunction``) for ``entry``."""
    payload = {
        "format": FORMAT, "entry": entry, "signature": signature.to_json(),
        "ptx": function.ptx, "kernels": function.kernels, "gpu": function.gpu,
        "steps": [_step_json(step) for step in function.steps],
    }
    if function.grid is not None:
        payload["spmd"] = [function.grid.replicas, function.grid.partitions]
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
        grid = DeviceGrid(*payload["spmd"]) if "spmd" in payload else None
        return CudaEntry(Signature.from_json(payload["signature"]), str(payload["ptx"]), steps,
                         str(payload["kernels"]), str(payload["gpu"]), grid)
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what}: not a cuda program ({exc!r})") from None


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
