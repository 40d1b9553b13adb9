"""A cuda executable as a cache entry: its PTX, host schedule and signature as JSON.

No machine code is stored (the driver JIT-compiles the PTX when the program is
first run), so an entry is data, checked like the CPU's: a SHA-256 of the
payload and the cache key it was written under must both match.
"""

from __future__ import annotations

import base64
import hashlib
import json

from xlac.targets.cuda.compile import CudaStages, function_for
from xlac.targets.cuda.schedule import Alloc, Const, Copy, Launch, View
from xlac.executable import Executable
from xlac.signature import Signature, TensorSpec

FORMAT = "xlac-cuda-1"
_STEPS = {cls.__name__: cls for cls in (Alloc, Const, Copy, Launch, View)}


def entry_bytes(exe: Executable, key: str) -> bytes:
    function = exe._function
    payload = {
        "format": FORMAT, "cache_key": key, "entry": exe.entry,
        "signature": {side: [{"shape": list(s.shape), "type": s.element_type}
                             for s in getattr(exe.signature, side)] for side in ("inputs", "outputs")},
        "ptx": function.ptx, "kernels": function.kernels,
        "gpu": exe._stages.text("gpu"),
        "steps": [_step_json(step) for step in function.steps],
    }
    text = json.dumps(payload, sort_keys=True)
    return json.dumps({"sha256": hashlib.sha256(text.encode()).hexdigest(), "payload": text}).encode()


def executable_from(blob: bytes, key: str, entry: str, stages) -> Executable:
    """The Executable an entry holds; ValueError if it is corrupted or not this key's."""
    try:
        outer = json.loads(blob)
        text = outer["payload"]
        if hashlib.sha256(text.encode()).hexdigest() != outer["sha256"]:
            raise ValueError("checksum mismatch: the file is corrupted")
        payload = json.loads(text)
        if payload["format"] != FORMAT or payload["cache_key"] != key or payload["entry"] != entry:
            raise ValueError("made for another program, entry or xlac version")
        signature = Signature(*(tuple(TensorSpec(tuple(s["shape"]), s["type"])
                                      for s in payload["signature"][side])
                                for side in ("inputs", "outputs")))
        steps = [_step_from(item) for item in payload["steps"]]
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a cuda cache entry ({exc!r})") from None
    function = function_for(payload["ptx"], steps, signature, payload["kernels"])
    own = CudaStages(stages, payload["kernels"], payload["gpu"], payload["ptx"])
    return Executable(function, signature, own, "cuda", entry=entry)


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
