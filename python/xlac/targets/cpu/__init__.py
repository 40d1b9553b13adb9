"""The CPU target: LLVM JIT, its runtime libraries, and serialization to shared libraries."""
