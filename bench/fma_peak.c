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

/* The bf16 dot-product instructions' peaks, beside the FMA's (call only where
   /proc/cpuinfo lists avx512_bf16, amx_bf16): does a bf16 x bf16 -> f32 matmul
   gain by them on this CPU? vdpbf16ps: 14 chains on zeroed operands (zmm16-31
   are not the compiler's to clobber without -mavx512f), each instruction 16
   lanes x 2 products = 64 FLOPs. */
double dpbf16_loop_zmm(long iterations) {
  for (long i = 0; i < iterations; i++)
    __asm__ volatile("vpxord %%zmm14, %%zmm14, %%zmm14\n\tvpxord %%zmm15, %%zmm15, %%zmm15\n\t" R8(
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm0\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm1\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm2\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm3\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm4\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm5\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm6\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm7\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm8\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm9\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm10\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm11\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm12\n\t"
    "vdpbf16ps %%zmm14, %%zmm15, %%zmm13\n\t"
    ) ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  return iterations * 8.0 * 14 * 16 * 2 * 2;
}

/* AMX: four independent 16 x 16 f32 tiles, each tdpbf16ps 16 x 16 x 32 products
   (16384 FLOPs), from tiles loaded once. Linux hands out AMX's tile state only
   on request (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); returns -1
   where it refuses. */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

double amx_bf16_loop(long iterations) {
  if (syscall(SYS_arch_prctl, 0x1023, 18) != 0)
    return -1;
  unsigned char config[64];
  static unsigned short zeros[16 * 32] __attribute__((aligned(64)));
  memset(config, 0, sizeof config);
  config[0] = 1;                                   /* palette 1 */
  for (int t = 0; t < 8; t++) {
    config[16 + 2 * t] = 64;                       /* bytes per row */
    config[48 + t] = 16;                           /* rows */
  }
  __asm__ volatile("ldtilecfg %0" :: "m"(config));
  __asm__ volatile("tilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2\n\ttilezero %%tmm3\n\t"
                   "tileloadd (%0,%1,1), %%tmm4\n\ttileloadd (%0,%1,1), %%tmm5\n\t"
                   "tileloadd (%0,%1,1), %%tmm6\n\ttileloadd (%0,%1,1), %%tmm7"
                   :: "r"(zeros), "r"(64L) : "memory");
  for (long i = 0; i < iterations; i++)
    __asm__ volatile("tdpbf16ps %tmm6, %tmm4, %tmm0\n\ttdpbf16ps %tmm7, %tmm4, %tmm1\n\t"
                     "tdpbf16ps %tmm6, %tmm5, %tmm2\n\ttdpbf16ps %tmm7, %tmm5, %tmm3");
  __asm__ volatile("tilerelease");
  return iterations * 4.0 * 16 * 16 * 32 * 2;
}
