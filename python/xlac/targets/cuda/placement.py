"""``xlac.device_put``: an array onto this process's GPU (``xlac.DeviceArray``)."""

from __future__ import annotations

from xlac.errors import InputError
from xlac.targets.cuda.device_array import Device, DeviceArray, as_device_array, is_device_value, put
from xlac.targets.cuda.memory import device_context
from xlac.targets.cuda.runtime import open_driver


def device_put(value, device=None) -> DeviceArray:
    """``value`` on a GPU (``device``: an ordinal, ``"cuda:N"`` or a Device; default 0)."""
    ordinal = _ordinal(device)
    driver = open_driver(ordinal)
    if getattr(driver, "ordinal", 0) != ordinal:
        raise InputError(f"device {device!r}: this process uses cuda:{getattr(driver, 'ordinal', 0)}"
                         " (one GPU per process)")
    context = device_context(driver)
    if isinstance(value, DeviceArray) or is_device_value(value):
        return as_device_array(value, driver, context.transfer_stream)
    return put(value, context)


def _ordinal(device) -> int:
    if device is None:
        return 0
    if isinstance(device, Device):
        return device.id
    if isinstance(device, int):
        return device
    text = str(device)
    if text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    if text in ("cuda", "gpu"):
        return 0
    raise InputError(f"device {device!r}: xlac puts arrays on 'cuda:N' (or N, or a DeviceArray's "
                     ".device)")
