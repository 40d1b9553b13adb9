"""May a donated input's memory hold a result that one kernel writes while reading
the input? (``device_calls``: donation.)

The kernels were compiled with separate input and output buffers. Writing the
output into the input's memory is still right when the kernel is pointwise in the
two: each thread loads the input only at the element it then stores to the
output, before storing it, and nothing else in the kernel touches either. Then no
thread reads an element that another thread has already overwritten (each output
element is written by the one thread that computes it). That is what an
elementwise fusion is (an optimizer's ``p - lr * g``).

Read from the "kernels" stage text (kept with the program, so no MLIR bindings
are needed at run time): a ``gpu.func`` whose every use of the input parameter is
``memref.load %in[I]`` and of the output one ``memref.store %v, %out[I]`` with the
same index list ``I``, the same memref type, one store, all loads before it, and no
loop around them; ``vector.load``/``vector.store`` of one vector type count as such
accesses (a thread's 16 bytes, loaded then stored at the same index). Anything else
is refused (the input then goes back to the pool).
"""

from __future__ import annotations

import re

_LOOPS = ("scf.for", "scf.while", "scf.parallel", "cf.br", "cf.cond_br")


def pointwise_in(kernels: str, kernel: str, source: int, target: int) -> bool:
    """Does ``kernel`` (a gpu.func of the text ``kernels``) read its parameter
    ``source`` only where, and before, it writes parameter ``target``?"""
    body, params = _function(kernels, kernel)
    if body is None or max(source, target) >= len(params) or source == target:
        return False
    (source_name, source_type), (target_name, target_type) = params[source], params[target]
    if source_type != target_type or not source_type.startswith("memref<"):
        return False
    if any(loop in body for loop in _LOOPS):
        return False
    loads, stores = [], []
    for number, line in enumerate(body.splitlines()):
        uses_source = re.search(re.escape(source_name) + r"\b", line)
        uses_target = re.search(re.escape(target_name) + r"\b", line)
        if not (uses_source or uses_target):
            continue
        if uses_source and uses_target:
            return False
        access = _access(line, source_name if uses_source else target_name,
                         "load" if uses_source else "store", source_type)
        if access is None:
            return False
        (loads if uses_source else stores).append((number, access))
    return len(stores) == 1 and all(number < stores[0][0] and index == stores[0][1]
                                    for number, index in loads)


def _access(line: str, name: str, kind: str, memref: str) -> str | None:
    """The index list (and vector type) of a plain load or store of ``name``, memref or
    vector (None for any other use: a view, a call, passing it on)."""
    value = r"%[\w#]+"
    vector = r"(?: \{alignment = \d+ : i64\})? : " + re.escape(memref) + r"(, vector<\w+>)?"
    if kind == "load":
        pattern = rf"\s*{value} = (memref|vector)\.load {re.escape(name)}\[([^\]]*)\]{vector}\s*$"
    else:
        pattern = rf"\s*(memref|vector)\.store {value}, {re.escape(name)}\[([^\]]*)\]{vector}\s*$"
    match = re.fullmatch(pattern, line)
    if match is None or (match.group(1) == "vector") != bool(match.group(3)):
        return None
    return f"{match.group(2)}{match.group(3) or ''}"


def _function(kernels: str, kernel: str) -> tuple[str | None, list[tuple[str, str]]]:
    """The body text of ``gpu.func @kernel`` and its parameters (name, type)."""
    start = kernels.find(f"gpu.func @{kernel}(")
    if start < 0:
        return None, []
    opening = start + len(f"gpu.func @{kernel}")
    closing = _matching(kernels, opening)
    header_end = kernels.find("\n", closing)
    end = kernels.find("gpu.return", header_end)
    if closing < 0 or header_end < 0 or end < 0:
        return None, []
    params = []
    for param in _split_top(kernels[opening + 1:closing]):
        name, _, kind = param.partition(":")
        params.append((name.strip(), kind.split(" {")[0].strip()))    # attributes dropped
    return kernels[header_end:end], params


def _matching(text: str, opening: int) -> int:
    depth = 0
    for position in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            return position
    return -1


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets of any kind."""
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        if char in "(<[{":
            depth += 1
        elif char in ")]}" or (char == ">" and text[position - 1] != "-"):   # not an arrow
            depth -= 1
        if char == "," and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    return [part for part in parts + [text[start:]] if part.strip()]
