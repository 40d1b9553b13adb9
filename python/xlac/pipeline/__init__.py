"""The pass pipelines, their text syntax, the pass manager and the stage runner."""
