"""CPU code generation: transform schedules (tiling, vectors, threads) and math for the JIT."""
