"""xlac's Python passes, one pass per file, grouped by phase (ingest, lower,
numerics, fusion, buffers, cpu, gpu); the registry of them all is
``xlac.passes.registry``."""
