/* xlac_mpi: the small C ABI that compiled StableHLO collectives call.
 *
 * Compiled code never sees an MPI handle: it passes an int communicator slot,
 * raw buffer pointers, an element count and int codes for the element type
 * and the reduction (passes/cpu/mpi_text.py holds the same codes). This file
 * is compiled against whichever mpi.h the process uses (MPICH: int handles,
 * Open MPI: pointers), so the compiled code is the same for every MPI.
 *
 * Errors: every MPI call goes through CHECK, which aborts the whole job with
 * a message: a collective that failed on one rank would hang the others.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds this rank spent blocked in collectives (a blocking call, or the
   wait of a started one): the communication the computation did not hide. */
static double g_blocked_seconds = 0.0;
static int64_t g_blocked_calls = 0;
static double now_seconds(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#define BLOCKED(call) do { double t0_ = now_seconds(); call; \
  g_blocked_seconds += now_seconds() - t0_; ++g_blocked_calls; } while (0)

#define XLAC_EXPORT __attribute__((visibility("default")))

enum { DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8, DT_I16, DT_I32, DT_I64,
       DT_U8, DT_U16, DT_U32, DT_U64, DT_PRED, DT_C64, DT_C128, DT_BYTES, DT_COUNT };
enum { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR, OP_COUNT };

static int g_rank = -1, g_size = 0, g_owns_mpi = 0;
static MPI_Comm *g_comms = NULL;
static int g_ncomms = 0;
static MPI_Op g_half_ops[2][4];  /* [f16, bf16][sum, prod, min, max]: f32 math inside */

XLAC_EXPORT void xlac_mpi_abort(int code, const char *msg) {
  fprintf(stderr, "xlac: rank %d: %s\n", g_rank, msg ? msg : "(no message)");
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
  abort();
}

#define CHECK(call)                                                            \
  do {                                                                         \
    int rc_ = (call);                                                          \
    if (rc_ != MPI_SUCCESS) {                                                  \
      char err_[MPI_MAX_ERROR_STRING], text_[MPI_MAX_ERROR_STRING + 256];      \
      int len_ = 0;                                                            \
      MPI_Error_string(rc_, err_, &len_);                                      \
      snprintf(text_, sizeof text_, "%s failed: %s", #call, err_);             \
      xlac_mpi_abort(rc_, text_);                                              \
    }                                                                          \
  } while (0)

/* ---- f16 / bf16: MPI has no such types; reduce them with user ops in f32 ---- */
static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f;
}
static uint16_t f32_to_bf16(float f) {         /* round to nearest even; NaN stays NaN */
  uint32_t u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float f16_to_f32(uint16_t h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
static uint16_t f32_to_f16(float f) { _Float16 x = (_Float16)f; uint16_t h; memcpy(&h, &x, 2); return h; }

#define HALF_OP(name, to32, from32, expr)                                      \
  static void name(void *in, void *inout, int *len, MPI_Datatype *dt) {        \
    (void)dt; const uint16_t *a = in; uint16_t *b = inout;                     \
    for (int i = 0; i < *len; ++i) {                                           \
      float x = to32(a[i]), y = to32(b[i]);                                    \
      b[i] = from32(expr);                                                     \
    }                                                                          \
  }
/* min/max propagate NaN, as stablehlo.minimum/maximum do */
#define HALF_OPS(T, to32, from32)                                              \
  HALF_OP(T##_sum, to32, from32, x + y)                                        \
  HALF_OP(T##_prod, to32, from32, x * y)                                       \
  HALF_OP(T##_min, to32, from32, (x != x || y != y) ? x + y : (x < y ? x : y)) \
  HALF_OP(T##_max, to32, from32, (x != x || y != y) ? x + y : (x > y ? x : y))
HALF_OPS(f16, f16_to_f32, f32_to_f16)
HALF_OPS(bf16, bf16_to_f32, f32_to_bf16)

static MPI_Datatype dtype_of(int code) {
  switch (code) {
  case DT_F32: return MPI_FLOAT;
  case DT_F64: return MPI_DOUBLE;
  case DT_F16: case DT_BF16: case DT_U16: return MPI_UINT16_T;
  case DT_I8: return MPI_INT8_T;
  case DT_I16: return MPI_INT16_T;
  case DT_I32: return MPI_INT32_T;
  case DT_I64: return MPI_INT64_T;
  case DT_U8: case DT_PRED: case DT_BYTES: return MPI_UINT8_T;
  case DT_U32: return MPI_UINT32_T;
  case DT_U64: return MPI_UINT64_T;
  case DT_C64: return MPI_C_FLOAT_COMPLEX;
  case DT_C128: return MPI_C_DOUBLE_COMPLEX;
  }
  xlac_mpi_abort(2, "unknown element type code");
  return MPI_DATATYPE_NULL;
}

static MPI_Op op_of(int op, int dtype) {
  if (op < 0 || op >= OP_COUNT) xlac_mpi_abort(2, "unknown reduction code");
  if (dtype == DT_F16 || dtype == DT_BF16) {
    if (op > OP_MAX) xlac_mpi_abort(2, "bitwise reduction of a float type");
    return g_half_ops[dtype == DT_BF16][op];
  }
  if (dtype == DT_PRED) {        /* i1 as a byte: add = or, mul = and, as StableHLO */
    switch (op) {
    case OP_SUM: case OP_MAX: case OP_OR: return MPI_LOR;
    case OP_XOR: return MPI_LXOR;
    default: return MPI_LAND;
    }
  }
  switch (op) {
  case OP_SUM: return MPI_SUM;
  case OP_PROD: return MPI_PROD;
  case OP_MIN: return MPI_MIN;
  case OP_MAX: return MPI_MAX;
  case OP_AND: return MPI_BAND;
  case OP_OR: return MPI_BOR;
  default: return MPI_BXOR;
  }
}

static int64_t size_of(int dtype) {
  static const int sizes[DT_COUNT] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8, 16, 1};
  if (dtype < 0 || dtype >= DT_COUNT) xlac_mpi_abort(2, "unknown element type code");
  return sizes[dtype];
}

static int as_int(int64_t count) {
  if (count < 0 || count > 0x7fffffff)
    xlac_mpi_abort(2, "a collective of more than 2^31 elements (or bytes) is not supported "
                      "in one piece; split the tensor");
  return (int)count;
}

static MPI_Comm comm_of(int slot) {
  if (slot < 0 || slot >= g_ncomms) xlac_mpi_abort(2, "bad communicator slot: was @__xlac_init called?");
  MPI_Comm c = g_comms[slot];
  if (c == MPI_COMM_NULL) xlac_mpi_abort(2, "this rank is in none of the collective's replica groups");
  return c;
}

/* ---- setup ---- */

/* Initialize MPI unless someone (mpi4py) already did. Returns the world rank. */
XLAC_EXPORT int xlac_mpi_init(void) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    /* MPICH's progress thread (MPIR_CVAR_ASYNC_PROGRESS=1), which moves started
       collectives on while the computation runs, needs MPI_THREAD_MULTIPLE */
    const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    int level = async && async[0] == '1' ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, provided;
    CHECK(MPI_Init_thread(NULL, NULL, level, &provided));
    g_owns_mpi = 1;
  }
  CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  CHECK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  static int ops_made = 0;
  if (!ops_made) {
    MPI_User_function *fns[2][4] = {{f16_sum, f16_prod, f16_min, f16_max},
                                    {bf16_sum, bf16_prod, bf16_min, bf16_max}};
    for (int t = 0; t < 2; ++t)
      for (int o = 0; o < 4; ++o) CHECK(MPI_Op_create(fns[t][o], 1, &g_half_ops[t][o]));
    ops_made = 1;
  }
  return g_rank;
}

XLAC_EXPORT int32_t xlac_mpi_world_rank(void) { return g_rank; }
XLAC_EXPORT int32_t xlac_mpi_world_size(void) { return g_size; }

static int32_t add_comm(MPI_Comm comm) {
  MPI_Comm *grown = realloc(g_comms, sizeof(MPI_Comm) * (size_t)(g_ncomms + 1));
  if (!grown) xlac_mpi_abort(4, "out of memory");
  g_comms = grown;
  g_comms[g_ncomms] = comm;
  return g_ncomms++;
}

/* One group of every rank in world order: MPI_COMM_WORLD itself. MPICH runs other
   algorithms on a communicator split from it even when it holds the same ranks:
   measured 0.87 ms on the world against 2.96 ms (split) and 2.30 ms (dup) for a 1 MB
   all-reduce on 2 ranks; the same at 4 KB and 16 MB. Every rank sees the same groups,
   so every rank takes this branch or none does. */
static int is_world(const int64_t *groups, int64_t num_groups, int64_t group_size) {
  if (num_groups != 1 || group_size != g_size) return 0;
  for (int64_t i = 0; i < group_size; ++i)
    if (groups[i] != i) return 0;
  return 1;
}

/* Collective over MPI_COMM_WORLD: one communicator per replica-group set.
   groups: num_groups x group_size world ranks (row-major). This rank joins
   the group that lists it, ranked by its position there. Returns a slot. */
XLAC_EXPORT int32_t xlac_mpi_comm_create(const int64_t *groups, int64_t num_groups, int64_t group_size) {
  if (is_world(groups, num_groups, group_size)) return add_comm(MPI_COMM_WORLD);
  int color = MPI_UNDEFINED, key = 0;
  for (int64_t g = 0; g < num_groups; ++g)
    for (int64_t i = 0; i < group_size; ++i)
      if (groups[g * group_size + i] == g_rank) { color = (int)g; key = (int)i; }
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm));
  return add_comm(comm);
}

/* Every rank says whether it is ready (1) or not (0); all learn the minimum.
   Called before the first collective so that one rank's compile error makes
   every rank stop instead of the others waiting in a collective forever. */
XLAC_EXPORT int32_t xlac_mpi_agree(int32_t ok) {
  /* Waiting ranks sleep between polls: MPI's blocking calls spin, and here the
     others may still be compiling on the same cores. */
  int mine = ok, all = 0, done = 0;
  MPI_Request request;
  CHECK(MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request));
  for (;;) {
    CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return all;
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
}

XLAC_EXPORT void xlac_mpi_finalize(void) {
  for (int i = 0; i < g_ncomms; ++i)
    if (g_comms[i] != MPI_COMM_NULL && g_comms[i] != MPI_COMM_WORLD) MPI_Comm_free(&g_comms[i]);
  g_ncomms = 0;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_owns_mpi && !finalized) MPI_Finalize();
}

/* ---- collectives: buffers are dense and row-major; counts are elements ---- */

/* Reduced in pieces of at most 2^30 elements: MPI counts are ints. */
XLAC_EXPORT void xlac_mpi_all_reduce(int32_t slot, const void *send, void *recv, int64_t count,
                                     int32_t dtype, int32_t op) {
  const int64_t piece = (int64_t)1 << 30, bytes = size_of(dtype);
  for (int64_t done = 0; done < count; done += piece) {
    int64_t n = count - done < piece ? count - done : piece;
    BLOCKED(CHECK(MPI_Allreduce((const char *)send + done * bytes, (char *)recv + done * bytes, (int)n,
                        dtype_of(dtype), op_of(op, dtype), comm_of(slot))));
  }
}

/* recv: one block of `count` elements per group member, in group order. */
XLAC_EXPORT void xlac_mpi_all_gather(int32_t slot, const void *send, void *recv, int64_t count,
                                     int32_t dtype) {
  int n = as_int(count * size_of(dtype));
  BLOCKED(CHECK(MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_of(slot))));
}

/* send: one block of `count` elements per member; recv: this rank's block, reduced. */
XLAC_EXPORT void xlac_mpi_reduce_scatter(int32_t slot, const void *send, void *recv, int64_t count,
                                         int32_t dtype, int32_t op) {
  BLOCKED(CHECK(MPI_Reduce_scatter_block(send, recv, as_int(count), dtype_of(dtype),
                                         op_of(op, dtype), comm_of(slot))));
}

/* send: block j (`count` elements) goes to member j; recv: block j came from member j. */
XLAC_EXPORT void xlac_mpi_all_to_all(int32_t slot, const void *send, void *recv, int64_t count,
                                     int32_t dtype) {
  int n = as_int(count * size_of(dtype));
  BLOCKED(CHECK(MPI_Alltoall(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_of(slot))));
}

/* This rank's target and source among the (source, target) pairs; a rank
   that is no target gets zeros, as StableHLO says. */
static void permute_peers(const int64_t *pairs, int64_t num_pairs, int *dest, int *source,
                          void *recv, int64_t bytes) {
  *dest = *source = MPI_PROC_NULL;
  for (int64_t i = 0; i < num_pairs; ++i) {
    if (pairs[2 * i] == g_rank) *dest = (int)pairs[2 * i + 1];
    if (pairs[2 * i + 1] == g_rank) *source = (int)pairs[2 * i];
  }
  if (*source == MPI_PROC_NULL) memset(recv, 0, (size_t)bytes);
}

/* pairs: num_pairs x (source, target) world ranks. A rank that is no
   target gets zeros, as StableHLO says. */
XLAC_EXPORT void xlac_mpi_collective_permute(const void *send, void *recv, int64_t count, int32_t dtype,
                                             const int64_t *pairs, int64_t num_pairs) {
  int dest, source;
  int64_t bytes = count * size_of(dtype);
  permute_peers(pairs, num_pairs, &dest, &source, recv, bytes);
  BLOCKED(CHECK(MPI_Sendrecv(send, as_int(bytes), MPI_BYTE, dest, 7001, recv, as_int(bytes),
                             MPI_BYTE, source, 7001, MPI_COMM_WORLD, MPI_STATUS_IGNORE)));
}

/* The first member of each group sends its operand to the others; a rank in
   no group keeps zeros, as StableHLO says. */
XLAC_EXPORT void xlac_mpi_collective_broadcast(int32_t slot, const void *send, void *recv, int64_t count,
                                               int32_t dtype) {
  if (slot < 0 || slot >= g_ncomms) xlac_mpi_abort(2, "bad communicator slot: was @__xlac_init called?");
  int64_t bytes = count * size_of(dtype);
  if (g_comms[slot] == MPI_COMM_NULL) { memset(recv, 0, (size_t)bytes); return; }
  if (recv != send) memcpy(recv, send, (size_t)bytes);
  BLOCKED(CHECK(MPI_Bcast(recv, as_int(bytes), MPI_BYTE, 0, g_comms[slot])));
}

/* ---- started collectives: `start` posts the non-blocking MPI call and
   returns a handle, `wait` completes it (xla-overlap-collectives puts the
   computation that does not need the result between the two). Buffers must
   stay untouched until the wait: the compiled code keeps them alive. ---- */

enum { MAX_PIECES = 8 };     /* all_reduce pieces of 2^30 elements; permute: send + receive */
typedef struct { MPI_Request requests[MAX_PIECES]; int count, busy; } Started;
static Started *g_started = NULL;
static int g_nstarted = 0;

static int32_t started_new(void) {
  for (int i = 0; i < g_nstarted; ++i)
    if (!g_started[i].busy) { g_started[i].busy = 1; g_started[i].count = 0; return i; }
  Started *grown = realloc(g_started, sizeof(Started) * (size_t)(g_nstarted + 8));
  if (!grown) xlac_mpi_abort(4, "out of memory");
  memset(grown + g_nstarted, 0, sizeof(Started) * 8);
  g_started = grown;
  g_nstarted += 8;
  return started_new();
}

static MPI_Request *next_request(int32_t id) {
  Started *s = &g_started[id];
  if (s->count == MAX_PIECES) xlac_mpi_abort(2, "a started collective of too many pieces");
  return &s->requests[s->count++];
}

/* MPI moves a started collective only inside MPI calls (unless its progress
   thread runs): each start and wait lets the others advance. */
static void advance_others(int32_t id) {
  for (int i = 0; i < g_nstarted; ++i)
    if (i != id && g_started[i].busy && g_started[i].count) {
      int done = 0;
      CHECK(MPI_Testall(g_started[i].count, g_started[i].requests, &done, MPI_STATUSES_IGNORE));
    }
}

XLAC_EXPORT void xlac_mpi_wait(int32_t id) {
  if (id < 0 || id >= g_nstarted || !g_started[id].busy)
    xlac_mpi_abort(2, "waiting for a collective that was not started");
  BLOCKED(CHECK(MPI_Waitall(g_started[id].count, g_started[id].requests, MPI_STATUSES_IGNORE)));
  g_started[id].busy = 0;
  advance_others(id);
}

XLAC_EXPORT int32_t xlac_mpi_all_reduce_start(int32_t slot, const void *send, void *recv,
                                              int64_t count, int32_t dtype, int32_t op) {
  const int64_t piece = (int64_t)1 << 30, bytes = size_of(dtype);
  int32_t id = started_new();
  for (int64_t done = 0; done < count; done += piece) {
    int64_t n = count - done < piece ? count - done : piece;
    CHECK(MPI_Iallreduce((const char *)send + done * bytes, (char *)recv + done * bytes, (int)n,
                         dtype_of(dtype), op_of(op, dtype), comm_of(slot), next_request(id)));
  }
  advance_others(id);
  return id;
}

/* all-gather and all-to-all move `count` elements per member as bytes */
typedef int (*BlockCollective)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                               MPI_Comm, MPI_Request *);
static int32_t start_blocks(BlockCollective start, int32_t slot, const void *send, void *recv,
                            int64_t count, int32_t dtype) {
  int n = as_int(count * size_of(dtype));
  int32_t id = started_new();
  CHECK(start(send, n, MPI_BYTE, recv, n, MPI_BYTE, comm_of(slot), next_request(id)));
  advance_others(id);
  return id;
}

XLAC_EXPORT int32_t xlac_mpi_all_gather_start(int32_t slot, const void *send, void *recv,
                                              int64_t count, int32_t dtype) {
  return start_blocks(MPI_Iallgather, slot, send, recv, count, dtype);
}

XLAC_EXPORT int32_t xlac_mpi_reduce_scatter_start(int32_t slot, const void *send, void *recv,
                                                  int64_t count, int32_t dtype, int32_t op) {
  int32_t id = started_new();
  CHECK(MPI_Ireduce_scatter_block(send, recv, as_int(count), dtype_of(dtype), op_of(op, dtype),
                                  comm_of(slot), next_request(id)));
  advance_others(id);
  return id;
}

XLAC_EXPORT int32_t xlac_mpi_all_to_all_start(int32_t slot, const void *send, void *recv,
                                              int64_t count, int32_t dtype) {
  return start_blocks(MPI_Ialltoall, slot, send, recv, count, dtype);
}

XLAC_EXPORT int32_t xlac_mpi_collective_permute_start(const void *send, void *recv, int64_t count,
                                                      int32_t dtype, const int64_t *pairs,
                                                      int64_t num_pairs) {
  int dest, source;
  int64_t bytes = count * size_of(dtype);
  permute_peers(pairs, num_pairs, &dest, &source, recv, bytes);
  int32_t id = started_new();
  CHECK(MPI_Irecv(recv, as_int(bytes), MPI_BYTE, source, 7001, MPI_COMM_WORLD, next_request(id)));
  CHECK(MPI_Isend(send, as_int(bytes), MPI_BYTE, dest, 7001, MPI_COMM_WORLD, next_request(id)));
  advance_others(id);
  return id;
}

XLAC_EXPORT int32_t xlac_mpi_collective_broadcast_start(int32_t slot, const void *send, void *recv,
                                                        int64_t count, int32_t dtype) {
  if (slot < 0 || slot >= g_ncomms) xlac_mpi_abort(2, "bad communicator slot: was @__xlac_init called?");
  int64_t bytes = count * size_of(dtype);
  int32_t id = started_new();
  if (g_comms[slot] == MPI_COMM_NULL) { memset(recv, 0, (size_t)bytes); return id; }
  if (recv != send) memcpy(recv, send, (size_t)bytes);
  CHECK(MPI_Ibcast(recv, as_int(bytes), MPI_BYTE, 0, g_comms[slot], next_request(id)));
  advance_others(id);
  return id;
}

/* What the benchmarks read: seconds blocked in collectives and how many calls, since
   the last reset. */
XLAC_EXPORT void xlac_mpi_blocked(double *seconds, int64_t *calls) {
  *seconds = g_blocked_seconds;
  *calls = g_blocked_calls;
}
XLAC_EXPORT void xlac_mpi_reset_blocked(void) { g_blocked_seconds = 0.0; g_blocked_calls = 0; }
