/* Make a process see a smaller x86 CPU: CPUID answers without the features
 * above a level (x86-64-v4: AVX-512 F/BW/CD/DQ/VL only, no AVX512-BF16/FP16/VNNI,
 * VBMI, AMX; x86-64-v3: no AVX-512, AMX, AVX-VNNI; x86-64-v2: no AVX either).
 *
 * Why: `--xla_cpu_max_isa` caps only the code XLA generates itself; its dot and
 * convolution libraries (oneDNN, XNNPACK, Eigen's runtime paths) ask CPUID and use
 * AVX-512 anyway, so on an AVX-512 host "XLA at AVX2" ran AVX-512 matmuls. With
 * this library preloaded every library in the process, numpy's BLAS included,
 * asks CPUID and gets the smaller CPU's answer, as on a real AVX2-only machine.
 *
 * How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, the `cpuid_fault` flag
 * in /proc/cpuinfo) turns each CPUID instruction into a SIGSEGV; the handler runs
 * the real CPUID with faulting briefly off, clears the masked bits and steps over
 * the instruction. The setting is per thread and inherited by new threads and
 * fork; exec clears it, and LD_PRELOAD (inherited) sets it again.
 * Programs that install their own SIGSEGV handler (LLVM, gcc) would take the
 * fault away, so sigaction() and signal() keep this handler in place and record
 * theirs, which a fault that is not a CPUID goes on to.
 * What it cannot hide: glibc's own string functions, chosen before this runs.
 *
 * Left as the hardware says: leaf 0xD (XSAVE state sizes). XCR0, read by XGETBV,
 * cannot be masked and XSAVE writes every state it enables, so a program that
 * sized its save area from a masked leaf 0xD would overrun it; the features
 * themselves are hidden in leaf 7, where libraries look for them.
 *
 * Level from XLAC_CPUID_MASK (x86-64-v2, -v3 or -v4; default x86-64-v3).
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define ARCH_SET_CPUID 0x1012
#define BIT(n) (1u << (n))

static int level = 3;   /* the x86-64 level shown: 2, 3 or 4 */
static struct sigaction theirs;   /* the program's SIGSEGV handler; zero: SIG_DFL */

typedef int sigaction_fn(int, const struct sigaction *, struct sigaction *);

static sigaction_fn *real_sigaction(void) {
  static sigaction_fn *real;
  if (!real) real = (sigaction_fn *)dlsym(RTLD_NEXT, "sigaction");
  return real;
}

static void mask_leaf(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  enum { A, B, C, D };
  if (leaf == 7 && sub == 0) {
    /* Above every level. AVX-512 IFMA PF ER */
    r[B] &= ~(BIT(21) | BIT(26) | BIT(27));
    /* AVX-512 VBMI VBMI2, GFNI VAES VPCLMULQDQ, AVX-512 VNNI BITALG VPOPCNTDQ */
    r[C] &= ~(BIT(1) | BIT(6) | BIT(8) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | BIT(14));
    /* AVX-512 4VNNIW 4FMAPS VP2INTERSECT, AMX-BF16, AVX512-FP16, AMX-TILE, AMX-INT8 */
    r[D] &= ~(BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25));
    if (level < 4)                           /* AVX-512 F DQ CD BW VL: x86-64-v4 */
      r[B] &= ~(BIT(16) | BIT(17) | BIT(28) | BIT(30) | BIT(31));
    if (level < 3)
      r[B] &= ~(BIT(3) | BIT(5) | BIT(8));   /* BMI1 AVX2 BMI2 */
  } else if (leaf == 7 && sub == 1) {
    /* AVX-VNNI, AVX512-BF16, AMX-FP16, AVX-IFMA */
    r[A] &= ~(BIT(4) | BIT(5) | BIT(21) | BIT(23));
    /* AVX-VNNI-INT8, AVX-NE-CONVERT, AMX-COMPLEX, AVX-VNNI-INT16, AVX10 */
    r[D] &= ~(BIT(4) | BIT(5) | BIT(8) | BIT(10) | BIT(19));
  } else if (leaf == 0x1D || leaf == 0x1E) {
    r[A] = r[B] = r[C] = r[D] = 0;           /* AMX tile and TMUL information */
  } else if (leaf == 1 && level < 3) {
    r[C] &= ~(BIT(12) | BIT(28) | BIT(29));  /* FMA AVX F16C */
  } else if (leaf == 0x80000001u && level < 3) {
    r[C] &= ~(BIT(5) | BIT(11) | BIT(16));   /* LZCNT XOP FMA4 */
  }
}

static void on_segv(int sig, siginfo_t *info, void *raw) {
  ucontext_t *ctx = raw;
  greg_t *regs = ctx->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *)regs[REG_RIP];
  if (ip[0] != 0x0f || ip[1] != 0xa2) {  /* a real fault: the program's handler */
    if (theirs.sa_flags & SA_SIGINFO) {
      theirs.sa_sigaction(sig, info, raw);
    } else if (theirs.sa_handler != SIG_DFL && theirs.sa_handler != SIG_IGN) {
      theirs.sa_handler(sig);
    } else {                                /* or the default: crash at the retry */
      struct sigaction dfl;
      memset(&dfl, 0, sizeof dfl);
      dfl.sa_handler = SIG_DFL;
      real_sigaction()(sig, &dfl, NULL);
    }
    return;
  }
  uint32_t leaf = (uint32_t)regs[REG_RAX], sub = (uint32_t)regs[REG_RCX], r[4];
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
  __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
  mask_leaf(leaf, sub, r);
  regs[REG_RAX] = r[0];
  regs[REG_RBX] = r[1];
  regs[REG_RCX] = r[2];
  regs[REG_RDX] = r[3];
  regs[REG_RIP] += 2;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (sig != SIGSEGV) return real_sigaction()(sig, act, old);
  if (old) *old = theirs;
  if (act) theirs = *act;
  return 0;
}

sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

__attribute__((constructor)) static void start_masking(void) {
  const char *shown = getenv("XLAC_CPUID_MASK");
  level = !shown ? 3 : strcmp(shown, "x86-64-v2") == 0 ? 2 : strcmp(shown, "x86-64-v4") == 0 ? 4 : 3;
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = on_segv;
  act.sa_flags = SA_SIGINFO | SA_NODEFER;
  real_sigaction()(SIGSEGV, &act, NULL);
  if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0)
    fprintf(stderr, "cpuid_mask: this CPU or kernel has no CPUID faulting; nothing is hidden\n");
}
