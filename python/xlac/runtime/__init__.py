"""Runtimes that call compiled code."""
