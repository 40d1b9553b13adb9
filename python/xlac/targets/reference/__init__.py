"""The ``reference`` target: the StableHLO reference interpreter behind the
``Executable`` interface. Slow and exact: what conformance and
``xla-run --reference`` compare xlac with."""
