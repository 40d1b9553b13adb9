"""A compile's remarks told through Python ``logging``, as MLIR tools print them.

Why: a kernel left without a vector schedule compiles and runs, only (up to
hundreds of times) slower; its remark was kept only in ``exe.fusion_report()``
and the dumps, where nobody looks unless already suspicious. Each remark of a
compile is logged to the ``xlac.remarks`` logger at INFO, one line in MLIR's
form (``<location>: remark: <message>``): silent unless the application turns
INFO on (``logging.basicConfig(level=logging.INFO)``, or that logger alone);
``xla-run --remarks`` and ``xla-compile --remarks`` print them on stderr.
A cache hit compiles nothing and logs nothing (its code keeps no remarks).
"""

from __future__ import annotations

import logging

log = logging.getLogger("xlac.remarks")


def log_remarks(remarks: list) -> None:
    """Log each remark record (``errors.Diagnostic``) of a compile, in order."""
    if not log.isEnabledFor(logging.INFO):
        return
    for remark in remarks:
        log.info("%s: remark: %s", remark.location or "<unknown>", remark.message)


def print_remarks_on_stderr() -> None:
    """What the tools' ``--remarks`` does: the remarks' lines on stderr, bare."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
