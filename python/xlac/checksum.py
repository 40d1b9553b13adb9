"""SHA-256 that a cache hit can afford: CPython's own for small data, OpenSSL's for big.

Why two: ``import hashlib`` loads OpenSSL's libcrypto, about 2 ms, a tenth of a
cache hit in a fresh process. CPython's built-in SHA-256 (``_sha256``; ``_sha2``
from 3.12) imports in 0.2 ms but hashes about 5x slower than OpenSSL with the
SHA extensions (2.9 against 0.5 ms per MiB, measured on a Xeon). A hit hashes
its input and its entry, a few hundred kB for a BERT: the built-in one is
cheaper up to ``SMALL`` bytes, OpenSSL's above. Both compute the same digest.
"""

from __future__ import annotations

import functools
import sys

SMALL = 512 << 10


def sha256(size: int):
    """A new SHA-256 hasher for about ``size`` bytes (``hashlib.sha256()``'s interface)."""
    if size < SMALL and "_hashlib" not in sys.modules:       # OpenSSL not loaded yet
        builtin = _builtin()
        if builtin is not None:
            return builtin()
    import hashlib
    return hashlib.sha256()


@functools.cache                    # a failed import is searched for again each time
def _builtin():
    """CPython's own SHA-256 constructor, or None (another Python: use hashlib)."""
    for name in ("_sha256", "_sha2"):           # 3.11; 3.12 and later
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):
            continue
    return None
