/* A bf16 x bf16 -> f32 matmul's register tile, four ways, on one core (CPU time):
   what the bf16 dot-product instructions would gain over xlac's f32 micro-kernel.
   Built by bench/bf16_tiles.py with -march=native (needs AVX512-BF16 and AMX-BF16).

   f32:     xlac's micro-kernel xlac_ukernel_f32_8x32 (dlopen'd from argv[1]): 8 x 32 x k
            f32 FMAs on A's rows and B's packed k x 32 panel (bf16 values widened).
   dpbf16:  the same tile on vdpbf16ps, A's k-pairs broadcast as 32-bit words and B
            packed once as k/2 x 32 interleaved pairs.
   amx:     xlac's ABI on AMX: converts its f32 operands (exact: bf16 values) to bf16
            tiles each call, then tdpbf16ps (8-row tiles).
   amx-b:   as amx, B's VNNI panel made once (what a packing step would do), A per call.
   All with k = 256, A's rows 1024 apart, data in L1/L2; results checked against f32. */
#include <dlfcn.h>
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define K 256
#define LDA 1024
typedef void (*kernel)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
struct tile_config { uint8_t palette, start, reserved[14]; uint16_t bytes[16]; uint8_t rows[16]; } __attribute__((packed));

static float A[8 * LDA] __attribute__((aligned(64))), B[K * 32] __attribute__((aligned(64)));
static float C_f32[8 * 32], C_other[8 * 32] __attribute__((aligned(64)));
static uint32_t A_pairs[8 * K / 2] __attribute__((aligned(64))), B_pairs[K / 2 * 32] __attribute__((aligned(64)));
static uint16_t A_tile[8 * K] __attribute__((aligned(64))), B_vnni[2][K / 2 * 32] __attribute__((aligned(64)));
static int b_packed;

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint16_t bf16_bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u >> 16; }

static float to_bf16(float x) {                  /* round to nearest even, back to f32 */
  uint32_t u; memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  memcpy(&x, &u, 4);
  return x;
}

static void dpbf16_tile(int64_t c, int64_t ldc, int64_t a, int64_t lda, int64_t b, int64_t ldb, int64_t k, int64_t acc) {
  float *C = (float *)c; const uint32_t *Ap = (const uint32_t *)a, *Bp = (const uint32_t *)b;
  __m512 sum[16];
  for (int i = 0; i < 16; i++) sum[i] = acc ? _mm512_loadu_ps(C + (i / 2) * ldc + 16 * (i % 2)) : _mm512_setzero_ps();
  for (int p = 0; p < k / 2; p++) {
    __m512bh b0 = (__m512bh)_mm512_load_si512(Bp + ldb * p), b1 = (__m512bh)_mm512_load_si512(Bp + ldb * p + 16);
#pragma GCC unroll 8
    for (int r = 0; r < 8; r++) {
      __m512bh pair = (__m512bh)_mm512_set1_epi32(Ap[r * lda + p]);
      sum[2 * r] = _mm512_dpbf16_ps(sum[2 * r], pair, b0);
      sum[2 * r + 1] = _mm512_dpbf16_ps(sum[2 * r + 1], pair, b1);
    }
  }
  for (int i = 0; i < 16; i++) _mm512_storeu_ps(C + (i / 2) * ldc + 16 * (i % 2), sum[i]);
}

static void amx_tile(int64_t c, int64_t ldc, int64_t a, int64_t lda, int64_t b, int64_t ldb, int64_t k, int64_t acc) {
  float *C = (float *)c; const float *Af = (const float *)a, *Bf = (const float *)b;
  const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                              23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  for (int r = 0; r < 8; r++)
    for (int kk = 0; kk < k; kk += 32)
      _mm512_store_si512(A_tile + r * k + kk, (__m512i)_mm512_cvtne2ps_pbh(
          _mm512_loadu_ps(Af + r * lda + kk + 16), _mm512_loadu_ps(Af + r * lda + kk)));
  if (!b_packed)
    for (int p = 0; p < k / 2; p++)
      for (int j = 0; j < 2; j++)
        _mm512_store_si512(B_vnni[j] + p * 32, _mm512_permutexvar_epi16(interleave, (__m512i)_mm512_cvtne2ps_pbh(
            _mm512_loadu_ps(Bf + (2 * p + 1) * ldb + 16 * j), _mm512_loadu_ps(Bf + 2 * p * ldb + 16 * j))));
  if (acc) { _tile_loadd(0, C, ldc * 4); _tile_loadd(1, C + 16, ldc * 4); }
  else { _tile_zero(0); _tile_zero(1); }
  for (int kk = 0; kk < k; kk += 32) {
    _tile_loadd(2, A_tile + kk, k * 2);
    _tile_loadd(3, B_vnni[0] + kk / 2 * 32, 64);
    _tile_loadd(4, B_vnni[1] + kk / 2 * 32, 64);
    _tile_dpbf16ps(0, 2, 3);
    _tile_dpbf16ps(1, 2, 4);
  }
  _tile_stored(0, C, ldc * 4); _tile_stored(1, C + 16, ldc * 4);
}

static double gflops(kernel run, int64_t a, int64_t lda, int64_t b, int64_t ldb, float *C, int calls) {
  run((int64_t)C, 32, a, lda, b, ldb, K, 0);
  double start = cpu_now();
  for (int n = 0; n < calls; n++) run((int64_t)C, 32, a, lda, b, ldb, K, 1);
  return 2.0 * 8 * 32 * K * calls / (cpu_now() - start) / 1e9;
}

static double max_difference(void) {
  double worst = 0;
  for (int i = 0; i < 8 * 32; i++) worst = fmax(worst, fabs(C_f32[i] - C_other[i]));
  return worst;
}

int main(int argc, char **argv) {
  void *library = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
  kernel f32 = library ? (kernel)dlsym(library, "xlac_ukernel_f32_8x32") : NULL;
  if (!f32) { fprintf(stderr, "usage: bf16_tiles PATH-OF-xlac_ukernel_f32_8x32.so\n"); return 2; }
  if (syscall(SYS_arch_prctl, 0x1023, 18)) { fprintf(stderr, "AMX tile state refused\n"); return 3; }
  struct tile_config config = {.palette = 1};
  for (int t = 0; t < 5; t++) { config.bytes[t] = 64; config.rows[t] = t < 3 ? 8 : 16; }
  _tile_loadconfig(&config);
  unsigned seed = 1;
  for (int i = 0; i < 8 * LDA; i++) { seed = seed * 1103515245 + 12345; A[i] = to_bf16(((int)(seed >> 8 & 2047) - 1024) / 1024.f); }
  for (int i = 0; i < K * 32; i++) { seed = seed * 1103515245 + 12345; B[i] = to_bf16(((int)(seed >> 8 & 2047) - 1024) / 32768.f); }
  for (int r = 0; r < 8; r++)
    for (int p = 0; p < K / 2; p++) A_pairs[r * K / 2 + p] = bf16_bits(A[r * LDA + 2 * p]) | (uint32_t)bf16_bits(A[r * LDA + 2 * p + 1]) << 16;
  for (int p = 0; p < K / 2; p++)
    for (int j = 0; j < 32; j++) B_pairs[p * 32 + j] = bf16_bits(B[2 * p * 32 + j]) | (uint32_t)bf16_bits(B[(2 * p + 1) * 32 + j]) << 16;
  int calls = argc > 2 ? atoi(argv[2]) : 100000;
  double rate[4];
  rate[0] = gflops(f32, (int64_t)A, LDA, (int64_t)B, 32, C_f32, calls);
  f32((int64_t)C_f32, 32, (int64_t)A, LDA, (int64_t)B, 32, K, 0);
  const char *names[4] = {"f32", "dpbf16", "amx", "amx-b"};
  double difference[4] = {0};
  for (int way = 1; way < 4; way++) {
    int pairs = way == 1;                        /* vdpbf16ps reads pre-made pairs; AMX xlac's f32 operands */
    kernel run = pairs ? dpbf16_tile : amx_tile;
    int64_t a = pairs ? (int64_t)A_pairs : (int64_t)A, b = pairs ? (int64_t)B_pairs : (int64_t)B;
    b_packed = way == 3;                         /* the amx run before made B's VNNI panel */
    rate[way] = gflops(run, a, pairs ? K / 2 : LDA, b, 32, C_other, calls);
    run((int64_t)C_other, 32, a, pairs ? K / 2 : LDA, b, 32, K, 0);
    difference[way] = max_difference();
  }
  _tile_release();
  for (int way = 0; way < 4; way++)
    printf("%s %.1f %.3g\n", names[way], rate[way], difference[way]);
  return 0;
}
