"""Code that runs in a process of its own, started by the benchmarks: the harness's
xlac worker (``xlac_worker.py``, over a multiprocessing pipe) and compile_scaling.py's
one cold compile per process (``compile_scaling_worker.py``, a script)."""
