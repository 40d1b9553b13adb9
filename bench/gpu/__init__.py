"""``run.py --target cuda``: xlac on the GPU against XLA on jax's GPU client.

The CPU harness's steps (``harness.py``) and table (``report.py``) on other backends
(``backends.py`` here), xlac's side in a worker process (``worker.py``). Named ``gpu``,
not ``cuda``: bench/ is on ``sys.path`` and a top-level ``cuda`` would hide NVIDIA's
``cuda`` package (cuda-python) from everything in the process.
"""
