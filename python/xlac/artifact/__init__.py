"""Compiled code on disk: the shared-library container, its C ABI, linking, and loading without MLIR."""
