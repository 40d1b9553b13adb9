// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-target-cpu{cpu=x86-64-v3})' | FileCheck %s
// RUN: xla-opt %s --pass-pipeline='builtin.module(xla-target-cpu{cpu=host})' | FileCheck %s --check-prefix=HOST
// RUN: not xla-opt %s --pass-pipeline='builtin.module(xla-target-cpu{cpu=pentium})' 2>&1 | FileCheck %s --check-prefix=BAD

/// Every function with a body is made for the level, with exactly its
/// features (none of the host's extra ones) and, with AVX2, LLVM's fast-gather
/// tuning (vector gathers, not one load per lane); declarations are left alone.
// CHECK: llvm.func @malloc(i64) -> !llvm.ptr{{$}}
// CHECK: llvm.func @main() attributes {target_cpu = "x86-64-v3", target_features = #llvm.target_features<[{{.*}}"+avx2"{{.*}}"+fma"{{.*}}"+sse4.2"{{.*}}"+fast-gather"]>}
// CHECK-NOT: avx512
// HOST-NOT: target_cpu
// BAD: error: unknown CPU 'pentium' (known: host, x86-64-v2, x86-64-v3, x86-64-v4)
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @main() {
  llvm.return
}
