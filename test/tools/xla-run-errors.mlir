// RUN: not xla-run %S/Inputs/scale.mlir --input=2x3xf32=1,2,3 --input=f32=1 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not xla-run %S/Inputs/scale.mlir --input=2x4xf32=1 --input=i32=1 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not xla-run %S/Inputs/scale.mlir --input=2x3xq9=1 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not xla-run %S/Inputs/scale.mlir --input=1 2>&1 | FileCheck %s --check-prefix=GRAMMAR
// RUN: not xla-run %S/Inputs/scale.mlir --function=nope 2>&1 | FileCheck %s --check-prefix=FUNC
// RUN: not xla-run %S/Inputs/missing.mlir 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: head -c 200 %S/Inputs/scale.mlir > %t.mlir
// RUN: not xla-run %t.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC

/// Bad input: one line saying what is wrong (and what to try), exit code 1, no traceback.
// COUNT: xla-run: error: --input '2x3xf32=1,2,3' has 3 values for a shape of 6 elements
// SHAPE: xla-run: error: argument 0 compiled for f32[2,3], called with f32[2,4]; argument 1 compiled for f32[], called with s32[]; the executable takes (f32[2,3], f32[])
// TYPE: unknown element type 'q9'
// GRAMMAR: expected SHAPExTYPE=VALUES
// FUNC: error: no function @nope in the module (functions: @main, @double)
// FILE: missing.mlir: error: cannot read file
// TRUNC: error:
// TRUNC: note: the input ends early: is the file truncated?
// COUNT-NOT: Traceback
// SHAPE-NOT: Traceback
