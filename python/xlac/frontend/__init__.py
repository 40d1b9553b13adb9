"""Reading programs: text, bytecode, portable artifacts and JAX objects into an MLIR module; what is supported."""
