"""xlac_worker's protocol with every program compiled for target="cuda".

A call is then a user's call: host numpy in, numpy out (copies to and from the GPU included).
"""

from __future__ import annotations

from workers import xlac_worker


def serve(conn) -> None:
    """xlac_worker.serve for the GPU (a module-level function: the spawned worker's target)."""
    xlac_worker.serve(conn, "cuda")
