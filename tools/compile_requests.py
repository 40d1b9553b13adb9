"""xlac as the answering backend of a ``xlac.reference.server`` child
(``ReferenceServer(backend="xlac")``): a differential fuzzer survives, and can
shrink, a program that crashes the compiler, as it does the interpreter."""

from __future__ import annotations

import pickle

from xlac.compiler import compile as compile_program
from xlac.errors import XlacError


def answer(request: bytes) -> bytes:
    """One pickled (program, inputs, entry) in, one pickled (status, payload) out."""
    data, inputs, entry = pickle.loads(request)
    try:
        result = ("ok", compile_program(data, entry=entry, cache=False).run(*inputs))
    except XlacError as exc:
        result = ("error", [str(exc)])
    except Exception as exc:  # noqa: BLE001 - an xlac bug, reported rather than fatal
        result = ("error", [f"<xlac>: error: {type(exc).__name__}: {exc} (an xlac bug)"])
    return pickle.dumps(result)
