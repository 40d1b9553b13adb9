"""Installed distributions read from their ``.dist-info`` on ``sys.path``,
without ``importlib.metadata``.

Why: importing ``importlib.metadata`` (with email, zipfile, csv) costs 25-60 ms
of CPU (AMD EPYC Zen 4, load 3-7), and a process's first compile paid it twice
over: the link's look-up of libiomp5 (``xlac.targets.cpu.libraries``) and the
build identity's versions of the bindings and of llvmlite
(``xlac.cache.identity``), which an empty cache computes before anything.
Reading one ``.dist-info`` costs about a millisecond. Each caller falls back to
``importlib.metadata`` where no ``.dist-info`` is found (an egg, a zip).
"""

from __future__ import annotations

import os
import re


def dist_info(distribution: str) -> str | None:
    """The ``.dist-info`` directory of ``distribution``: the first on
    ``sys.path`` (as ``importlib.metadata`` finds it), None where there is none."""
    import sys
    stem = _normalized(distribution)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info") and _normalized(name.partition("-")[0]) == stem:
                return os.path.join(entry or ".", name)
    return None


def version(distribution: str) -> str | None:
    """``distribution``'s version from its ``.dist-info``'s METADATA (the
    ``Version:`` header ``importlib.metadata.version`` reads), or None where
    there is no such ``.dist-info`` or it holds no version."""
    found = dist_info(distribution)
    if found is None:
        return None
    try:
        with open(os.path.join(found, "METADATA"), encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():                 # the headers end at the first empty line
                    break
                if line.startswith("Version:"):
                    return line[len("Version:"):].strip()
    except OSError:
        pass
    return None


def _normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them: runs of ``-``, ``_``,
    ``.`` as one ``_`` (a ``.dist-info``'s name has its ``-`` so), lower case."""
    return re.sub(r"[-_.]+", "_", name).lower()
