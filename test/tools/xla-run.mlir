// RUN: xla-run %S/Inputs/scale.mlir --input=2x3xf32=1,2,3,4,5,6 --input=f32=2.5 | FileCheck %s
// RUN: xla-run %S/Inputs/scale.mlir --function=double --input="4xi32=[1 2 3 4]" | FileCheck %s --check-prefix=DOUBLE
// RUN: xla-run %S/Inputs/scale.mlir --input=2x3xf32=1 --input=f32=1 --reference | FileCheck %s --check-prefix=REF
// RUN: xla-run %S/Inputs/scale.mlir --input=2x3xf32=1 --input=f32=1 --benchmark=3 | FileCheck %s --check-prefix=BENCH
// RUN: xla-run %S/Inputs/scale.mlir --input=2x3xf32=1 --input=f32=1 --profile=%t.trace.json | FileCheck %s --check-prefix=PROFILE
// RUN: %PYTHON -c "import json; assert json.load(open('%t.trace.json'))['traceEvents']"
// RUN: %PYTHON -c "import numpy as np; np.save('%t.npy', np.arange(4, dtype=np.int32))"
// RUN: xla-run %S/Inputs/scale.mlir --function=double --input=@%t.npy | FileCheck %s --check-prefix=NPY

/// Results print as iree-run-module does.
// CHECK: EXEC @main
// CHECK-NEXT: result[0]: 2x3xf32=[2.5 5 7.5][10 12.5 15]
// CHECK-NEXT: result[1]: i1=0
// DOUBLE: result[0]: 4xi32=[2 4 6 8]
// REF: reference: result[0] largest difference 0
// REF: reference: result[1] largest difference 0
// BENCH: benchmark: 3 runs, median
// NPY: result[0]: 4xi32=[0 2 4 6]

/// --profile times each kernel over 10 runs and names its source line.
// PROFILE: profile: {{[0-9]+}} kernels, 10 runs
// PROFILE: ms/call   share   calls    mean us  kernel
// PROFILE: Inputs/scale.mlir:{{[0-9]+}}:{{[0-9]+}}
// PROFILE: trace written to {{.*}}trace.json
