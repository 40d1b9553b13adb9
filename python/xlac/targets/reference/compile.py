"""The reference target's "code": the program's text, which the StableHLO
interpreter runs on every call in a long-lived child process (the
interpreter aborts its process on some inputs; a child's death is a
``CompileError`` and the next call starts a fresh one)."""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from xlac.artifact.container import metadata_for, pack
from xlac.artifact.csrc import c_identifier
from xlac.reference.server import shared_server

_SERVER_LOCK = threading.Lock()          # one request at a time on the shared child


class ReferenceCompiler:
    """"Compiles" by keeping the text of the interpreted stage."""

    def __init__(self, options, grid):
        self.options = options

    def ingested(self, module, entry: str, signature, runner) -> None:
        pass

    def machine_code(self, module, entry: str, signature, kept: dict, runner):
        return ReferenceFunction(kept["stablehlo"].encode(), entry, signature)


def load_function(artifact, options) -> ReferenceFunction:
    """The function of a checked reference artifact: its code is the program's text."""
    return ReferenceFunction(bytes(artifact.code), artifact.entry, artifact.signature)


class ReferenceFunction:
    """The interpreter on one program, called like compiled code: with the data
    pointers of every input, then every output (the C ABI every target shares)."""

    grid = None

    def __init__(self, text: bytes, entry: str, signature):
        self.text = text
        self.entry = entry
        self.signature = signature
        self.stage_texts = {"stablehlo": text.decode()}

    def __call__(self, pointers: list[int]) -> None:
        specs = self.signature.inputs + self.signature.outputs
        arrays = [_array_at(pointer, spec) for pointer, spec in zip(pointers, specs)]
        count = len(self.signature.inputs)
        with _SERVER_LOCK:
            results = shared_server().run(self.text, arrays[:count], self.entry)
        for output, result in zip(arrays[count:], results):
            np.copyto(output, np.asarray(result, dtype=output.dtype).reshape(output.shape))

    def serializer(self, entry: str, signature):
        metadata = metadata_for("reference", {entry: (c_identifier(entry), signature, None)})
        return lambda: pack(self.text, metadata)

    def start_collectives(self) -> None:
        pass


def _array_at(pointer: int, spec) -> np.ndarray:
    """The array of ``spec`` whose data is at ``pointer`` (no copy)."""
    if spec.nbytes == 0:
        return np.empty(spec.shape, spec.dtype)
    raw = (ctypes.c_uint8 * spec.nbytes).from_address(pointer)
    return np.frombuffer(raw, np.uint8).view(spec.dtype).reshape(spec.shape)
