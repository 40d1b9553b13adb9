"""The SIMT emulator's vector ops: the 1-D vectors of xlac's wide loads and stores
(see xlac_emulator.simt and passes/gpu/gpu_kernel_vector.py).

A vector value is a tuple of lanes, each lane a per-thread value as any scalar's.
``vector.load``/``vector.store`` check what a GPU faults on: every lane inside the
memref's innermost dim and its allocation, and the address a multiple of the op's
``alignment`` (counted from the start of the allocation, which the driver aligns to
256 bytes; a foreign array's offset pointer counts as misaligned when it is): NVPTX
emits ``ld.global.v4`` trusting that alignment, and a misaligned one is a
"misaligned address" fault on the GPU.
"""

from __future__ import annotations

import numpy as np

from xlac_emulator.simt_model import set_value


def _lanes(type_text: str) -> int:
    shape = type_text[len("vector<"):].split("x")[:-1]
    if len(shape) != 1:
        raise ValueError(f"only 1-D vectors are emulated, not {type_text}")
    return int(shape[0])


def _addresses(launch, op, ref, indices, width: int, mask) -> list:
    """Each lane's element index; the first and last lanes are bounds-checked, the first's
    byte address against the alignment."""
    first = launch.address(op, ref, indices, mask)
    launch.address(op, ref, indices[:-1] + [indices[-1] + (width - 1)], mask)
    alignment = op.attrs.get("alignment") or ref.type.dtype.itemsize
    byte = np.asarray(first) * ref.type.dtype.itemsize      # from the allocation's start
    bad = np.broadcast_to(byte % alignment != 0, (launch.n,)) & mask
    if np.any(bad):
        launch.fail(op, f"byte offset {launch._at(byte, bad)} is not aligned to {alignment} bytes "
                    f"({launch.where_is(bad)}); on a GPU this is a misaligned address fault")
    return [first + j for j in range(width)]


def _load(launch, op, mask):
    env = launch.env
    ref = env[op.args[0]]
    width = _lanes(op.rtypes[0])
    at = _addresses(launch, op, ref, [env[s] for s in op.args[1:]], width, mask)
    set_value(launch, op, tuple(launch.load(ref, index, mask) for index in at))


def _store(launch, op, mask):
    env = launch.env
    lanes, ref = env[op.args[0]], env[op.args[1]]
    at = _addresses(launch, op, ref, [env[s] for s in op.args[2:]], len(lanes), mask)
    for index, value in zip(at, lanes):
        launch.store(ref, index, value, mask)


def _extract(launch, op, mask):
    (position,) = op.attrs["static_position"]
    set_value(launch, op, launch.env[op.args[0]][position])


def _from_elements(launch, op, mask):
    set_value(launch, op, tuple(launch.env[s] for s in op.args))


def _broadcast(launch, op, mask):
    set_value(launch, op, (launch.env[op.args[0]],) * _lanes(op.rtypes[0]))


HANDLERS = {
    "vector.broadcast": _broadcast,
    "vector.splat": _broadcast,
    "vector.load": _load,
    "vector.store": _store,
    "vector.extract": _extract,
    "vector.from_elements": _from_elements,
}
