/* LD_PRELOAD for the parallel reference interpreter only (xlac/reference/parallel.py):
   sched_getaffinity reports $REFERENCE_CPU_COUNT CPUs (default 8). The interpreter's
   run_parallel runs each device on LLVM's default thread pool, sized by the
   affinity mask; with more devices than CPUs it waits for a device that never
   gets a thread. Never loaded into compiled programs. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask) {
  (void)pid;
  const char *text = getenv("REFERENCE_CPU_COUNT");
  int count = text ? atoi(text) : 8;
  memset(mask, 0, size);
  for (int i = 0; i < count && (size_t)i < size * 8; ++i) CPU_SET_S(i, size, mask);
  return 0;
}
