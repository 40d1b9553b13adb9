"""Passes around bufferization: read-only inputs, distinct results, copies and empty buffers."""
