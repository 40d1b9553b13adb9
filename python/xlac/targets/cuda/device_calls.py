"""One call of a cuda program on device arrays (``CudaFunction.device_call``).

Nothing in a call waits for the device: the inputs' producers are waited for by
the function's stream (events), the results' memory is taken from the pool in
stream order, the work is enqueued, and one event recorded after it says when
every result is ready. A call whose inputs are on the device copies nothing
between host and device.

Donation (jax's ``donate_argnums``, exported as ``tf.aliasing_output`` /
``jax.buffer_donor`` on the arguments): the donated DeviceArray is deleted, and
its memory becomes the aliased result's when that is right for kernels compiled
with separate buffers (``may_write_in_place``): the program is done reading the
input before anything writes the result (a reduction, then a broadcast), or the
one kernel touching both reads the input pointwise where it writes the result
(an elementwise update: ``in_place``). Otherwise the memory goes back to the pool
after the call's work, in stream order, where the next result of its size takes it.
"""

from __future__ import annotations

from xlac.dtypes import SUB_BYTE_BITS
from xlac.errors import InputError
from xlac.signature import as_input
from xlac.targets.cuda.control_flow import Branch, Loop
from xlac.targets.cuda.device_array import DeviceArray, as_device_array, is_device_value
from xlac.targets.cuda.gemm_step import Gemm
from xlac.targets.cuda.in_place import pointwise_in
from xlac.targets.cuda.memory import Event, PoolBuffer, device_context
from xlac.targets.cuda.steps import Collective, Copy, Launch, View


class DeviceCaller:
    """How one program takes and returns device arrays, worked out once: the
    specs, which donated input may become which result; ``call`` does one call."""

    def __init__(self, driver, stream: int, signature, donations: dict[int, int], steps: list,
                 kernels: str = ""):
        self._driver, self._stream, self._signature = driver, stream, signature
        self._context = device_context(driver)
        self._inputs = tuple((spec.shape, spec.dtype) for spec in signature.inputs)
        self._outputs = tuple((spec.shape, spec.dtype, max(spec.nbytes, 1))
                              for spec in signature.outputs)
        count = len(self._inputs)
        self._donated = tuple(sorted(donations))
        self._in_place = {output: donor for donor, output in donations.items()
                          if signature.inputs[donor].nbytes == signature.outputs[output].nbytes
                          and may_write_in_place(steps, kernels, f"arg{donor}", f"arg{count + output}")}
        self._names = tuple(f"arg{index}" for index in range(count + len(self._outputs)))
        self._sub_byte = [(index, spec.element_type) for index, spec in enumerate(signature.outputs)
                          if spec.element_type in SUB_BYTE_BITS]

    def call(self, values, launch) -> list[DeviceArray]:
        """Take ``values``, call ``launch(bindings)`` to enqueue the work with the
        schedule's argument names bound to this call's pointers, return the results."""
        arrays = self._take_inputs(values)
        stream = self._stream
        for array in arrays:
            if array._ready is not None:
                array._ready.wait_on(stream)
            array._buffer.used_on(stream)
        pointers = [array._buffer.pointer for array in arrays]       # before a result takes one
        buffers = [self._output_buffer(index, arrays) for index in range(len(self._outputs))]
        launch(dict(zip(self._names, pointers + [buffer.pointer for buffer in buffers])))
        ready, context = Event(self._driver, stream), self._context
        for index in self._donated:
            if isinstance(arrays[index]._buffer, PoolBuffer):
                arrays[index].delete()             # unless a result took it: then already gone
        results = [DeviceArray(buffer, shape, dtype, context, ready)
                   for buffer, (shape, dtype, _) in zip(buffers, self._outputs)]
        for index, element_type in self._sub_byte:
            results[index].sub_byte = element_type
        return results

    def _take_inputs(self, values) -> list[DeviceArray]:
        """Each value as a DeviceArray of its compiled spec: ours as they are (the
        quick path), others read in place or put on the device (``_convert``)."""
        context = self._context
        if len(values) == len(self._inputs) and all(
                type(value) is DeviceArray and value._context is context and value._buffer is not None
                and value.shape == shape and value.dtype == dtype
                for value, (shape, dtype) in zip(values, self._inputs)):
            return list(values)
        return self._convert(values)

    def _convert(self, values) -> list[DeviceArray]:
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
                arrays[index] = DeviceArray(buffer, specs[index].shape, array.dtype, self._context,
                                            event)
        return arrays

    def _output_buffer(self, index: int, arrays: list[DeviceArray]):
        """The donated input's memory where the schedule allows it (module docstring),
        else fresh memory from the pool."""
        donor = self._in_place.get(index)
        if donor is not None:
            array = arrays[donor]
            buffer = array._buffer
            if isinstance(buffer, PoolBuffer) and sum(a._buffer is buffer for a in arrays) == 1:
                array._buffer = None                # deleted: its memory is the result's now
                return buffer
        return self._context.allocate(self._outputs[index][2], self._stream)


def may_write_in_place(steps: list, kernels: str, source: str, target: str) -> bool:
    """May ``target`` be written into ``source``'s memory? When the program is done
    with ``source`` before anything writes ``target``, or when the one kernel that
    touches both reads ``source`` pointwise where it writes ``target``
    (``in_place.pointwise_in``; ``kernels``: the "kernels" stage text)."""
    if writes_after_last_read(steps, source, target):
        return True
    touching = [step for step in steps if _names_of(step) & {source, target}]
    shared = [step for step in touching if {source, target} <= _names_of(step)]
    if len(shared) != 1 or not isinstance(shared[0], Launch) or \
            any(isinstance(step, (Loop, Branch, View)) for step in steps):
        return False
    launch, position = shared[0], touching.index(shared[0])
    buffers = [value for _, value in launch.args]
    if buffers.count(source) != 1 or buffers.count(target) != 1:
        return False
    return all(source not in _names_of(step) for step in touching[position + 1:]) and \
        all(target not in _names_of(step) for step in touching[:position]) and \
        pointwise_in(kernels, launch.kernel, buffers.index(source), buffers.index(target))


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
    if isinstance(step, Gemm):
        return {name for name in (step.a, step.b, step.c, step.bias) if name}
    return set()

