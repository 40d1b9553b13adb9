// RUN: xla-compile %S/Inputs/scale.mlir -o %t.so --header %t.h --name scale --entry main,double 2>&1 | FileCheck %s --check-prefix=WROTE
// RUN: FileCheck %s --check-prefix=HEADER < %t.h
// RUN: %PYTHON -c "import numpy as np, xlac; print(xlac.load('%t.so', entry='double')(np.arange(4, dtype=np.int32)))" | FileCheck %s --check-prefix=LOAD
// RUN: not xla-compile %S/Inputs/scale.mlir -o %t.bad.so --entry nope 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: not xla-compile %t.missing.mlir -o %t.bad.so 2>&1 | FileCheck %s --check-prefix=MISSING

/// One exported function per entry, named <name>_<entry>.
// WROTE: xla-compile: wrote {{.*}}.so (scale_main, scale_double) and {{.*}}.h

/// The header declares each entry, its signature function and its buffers.
// HEADER: typedef struct xlac_tensor_desc {
// HEADER: /* @main(f32[2,3], f32[]) -> (f32[2,3], pred[])
// HEADER-NEXT:  *   inputs[0]:  f32[2,3], 24 bytes
// HEADER: #define SCALE_MAIN_NUM_INPUTS 2
// HEADER: int scale_main(const void *const *inputs, void *const *outputs);
// HEADER: const xlac_signature *scale_main_signature(void);
// HEADER: int scale_double(const void *const *inputs, void *const *outputs);

/// xlac.load runs an entry of the library, with no MLIR in the loop.
// LOAD: [0 2 4 6]

/// A missing entry is one diagnostic naming the functions there are.
// ERROR: error: no function @nope in the module (functions: @main, @double)
// MISSING: error: cannot read file
