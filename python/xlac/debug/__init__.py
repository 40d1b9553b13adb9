"""Seeing what the compiler does: dumps, reproducers, timings, the fusion picture and report."""
