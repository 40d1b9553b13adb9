"""One call of a cuda program on device arrays (``CudaFunction.device_call``).

Nothing in a call waits for the device: the inputs' producers are waited for by
the function's stream (events), the results' memory is taken from the pool in
stream order, the work is enqueued, and one event recorded after it says when
every result is ready. A call whose inputs are on the device copies nothing
between host and device.

Donation (jax's ``donate_argnums``, exported as ``tf.aliasing_output`` /
``jax.buffer_donor`` on the arguments): the donated DeviceArray is deleted, and
its memory becomes the aliased result's when the schedule shows that the program
is done reading the input before anything writes that result
(``writes_after_last_read``): the compiled kernels were not told that the two
share memory, so a kernel that reads one while writing the other must not be
given the same buffer. Otherwise the memory goes back to the pool after the
call's work, in stream order, where the next result of its size takes it.
"""

from __future__ import annotations

from xlac.errors import InputError
from xlac.signature import as_input
from xlac.targets.cuda.control_flow import Branch, Loop
from xlac.targets.cuda.device_array import DeviceArray, as_device_array, is_device_value
from xlac.targets.cuda.memory import Event, PoolBuffer, device_context
from xlac.targets.cuda.schedule import Collective, Copy, Launch, View


class DeviceCall:
    def __init__(self, driver, stream: int, signature, donations: dict[int, int], steps: list):
        self._driver, self._stream, self._signature = driver, stream, signature
        self._context = device_context(driver)
        self._donations, self._steps = donations, steps
        self._inputs: list[DeviceArray] = []
        self._outputs: list = []
        self._reused: dict[int, int] = {}          # output index -> the donated input it takes

    def take_inputs(self, values) -> None:
        """Each value as a DeviceArray of its compiled spec (InputError naming every
        mismatch); host values are put on the device in one staged upload."""
        specs = self._signature.inputs
        if len(values) != len(specs):
            raise InputError(f"expected {len(specs)} argument(s), got {len(values)}")
        arrays, problems, host = [None] * len(values), [], {}
        for index, (value, spec) in enumerate(zip(values, specs)):
            if is_device_value(value):
                arrays[index] = array = as_device_array(value, self._driver, self._stream)
                if array.shape != spec.shape or array.dtype != spec.dtype:
                    problems.append(f"argument {index} compiled for {spec}, called with a device "
                                    f"array of {array.dtype}{list(array.shape)}")
            else:
                host[index], problem = as_input(value, spec)
                if problem:
                    problems.append(f"argument {index} compiled for {spec}, called with {problem}")
        if problems:
            raise InputError("; ".join(problems))
        if host:
            buffers, event = self._context.upload(list(host.values()), self._stream)
            for (index, array), buffer in zip(host.items(), buffers):
                arrays[index] = DeviceArray(buffer, array.shape, array.dtype, self._context, event)
        for array in arrays:
            if array._ready is not None:
                array._ready.wait_on(self._stream)
            array._buffer.used_on(self._stream)
        self._inputs = arrays
        self._outputs = [self._output_buffer(index, spec)
                         for index, spec in enumerate(self._signature.outputs)]

    def bindings(self) -> dict[str, int]:
        """The schedule's argument names -> this call's device pointers."""
        count = len(self._inputs)
        names = {f"arg{index}": array.pointer for index, array in enumerate(self._inputs)}
        names.update({f"arg{count + index}": buffer.pointer
                      for index, buffer in enumerate(self._outputs)})
        return names

    def finish(self) -> list[DeviceArray]:
        """After the work is enqueued: the results (ready at one event), the donated
        inputs deleted."""
        ready = Event(self._driver, self._stream)
        for output, index in self._reused.items():
            self._inputs[index]._buffer = None      # its memory is the result's now
        for index in self._donations:
            if index < len(self._inputs) and isinstance(self._inputs[index]._buffer, PoolBuffer):
                self._inputs[index].delete()
        return [DeviceArray(buffer, spec.shape, spec.dtype, self._context, ready)
                for buffer, spec in zip(self._outputs, self._signature.outputs)]

    def _output_buffer(self, index: int, spec):
        donor = next((i for i, o in self._donations.items() if o == index), None)
        if donor is not None and self._can_take(donor, index, spec):
            self._reused[index] = donor
            return self._inputs[donor]._buffer
        return self._context.allocate(max(spec.nbytes, 1), self._stream)

    def _can_take(self, donor: int, output: int, spec) -> bool:
        array = self._inputs[donor]
        buffer = array._buffer
        return isinstance(buffer, PoolBuffer) and buffer.stream == self._stream and \
            array.nbytes == spec.nbytes and donor not in self._reused.values() and \
            sum(a._buffer is buffer for a in self._inputs) == 1 and \
            writes_after_last_read(self._steps, f"arg{donor}",
                                   f"arg{len(self._inputs) + output}")


def writes_after_last_read(steps: list, source: str, target: str) -> bool:
    """Does every step that touches ``target`` come after the last that touches
    ``source`` (or a view of it), in a schedule without loops or branches? Then
    ``target`` may be written into ``source``'s memory."""
    if any(isinstance(step, (Loop, Branch)) for step in steps):
        return False
    reads, writes, last_read, first_write = {source}, {target}, -1, None
    for position, step in enumerate(steps):
        for names in (reads, writes):
            if isinstance(step, View) and step.source in names:
                names.add(step.value)
        touched = _names_of(step)
        if touched & reads:
            last_read = position
        if touched & writes and first_write is None:
            first_write = position
    return first_write is None or last_read < first_write


def _names_of(step) -> set[str]:
    if isinstance(step, Launch):
        return {value for kind, value in step.args if kind == "buf"}
    if isinstance(step, Copy):
        return {step.source, step.target}
    if isinstance(step, View):
        return {step.source, step.value}
    if isinstance(step, Collective):
        return set(step.buffers)
    return set()

