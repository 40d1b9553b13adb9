/* One core's f32 FMA peak, measured: independent vfmadd231ps chains on
   registers only (no loads), so only the FMA ports and the clock they run at
   count. 16 chains of zmm (AVX-512), 12 of ymm (AVX2): more than the 2 ports x
   4 cycles of latency that keep both ports busy. Inline assembly, so the library
   builds without -m flags; only call the zmm loop where the CPU has AVX-512.
   Each function returns the FLOPs it ran (bench/matmul_peak.py times them). */

#define R8(x) x x x x x x x x

double fma_loop_zmm(long iterations) {
  for (long i = 0; i < iterations; i++)
    __asm__ volatile(R8(
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm0\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm1\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm2\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm3\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm4\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm5\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm6\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm7\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm8\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm9\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm10\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm11\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm12\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm13\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm14\n\t"
    "vfmadd231ps %%zmm30, %%zmm31, %%zmm15\n\t"
    ) ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  return iterations * 8.0 * 16 * 16 * 2;
}

double fma_loop_ymm(long iterations) {
  for (long i = 0; i < iterations; i++)
    __asm__ volatile(R8(
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t"
    "vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"
    ) ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11");
  return iterations * 8.0 * 12 * 8 * 2;
}
