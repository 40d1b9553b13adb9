/* Calls the ahead-of-time compiled model.mlir through its plain C ABI.
 *
 * Inputs: x[i] = 0.1 * i - 0.5, w[i] = 0.05 * i - 0.3, b[i] = 0.1 * i
 * (row-major). Prints the signature, then every output value. */
#include <stdio.h>

#include "model.h"

static void print_desc(const char *kind, int index, const xlac_tensor_desc *d) {
  printf("%s[%d]: %s[", kind, index, d->element_type);
  for (int i = 0; i < d->rank; ++i) printf(i ? ",%lld" : "%lld", (long long)d->dims[i]);
  printf("] %zu bytes\n", d->size_bytes);
}

int main(void) {
  float x[2 * 4], w[4 * 3], b[3], y[2 * 3], s[2];
  for (int i = 0; i < 8; ++i) x[i] = 0.1f * i - 0.5f;
  for (int i = 0; i < 12; ++i) w[i] = 0.05f * i - 0.3f;
  for (int i = 0; i < 3; ++i) b[i] = 0.1f * i;

  const xlac_signature *sig = model_main_signature();
  printf("entry %s: %d inputs, %d outputs\n", sig->entry, sig->num_inputs, sig->num_outputs);
  for (int i = 0; i < sig->num_inputs; ++i) print_desc("input", i, &sig->inputs[i]);
  for (int i = 0; i < sig->num_outputs; ++i) print_desc("output", i, &sig->outputs[i]);

  const void *inputs[MODEL_MAIN_NUM_INPUTS] = {x, w, b};
  void *outputs[MODEL_MAIN_NUM_OUTPUTS] = {y, s};
  int status = model_main(inputs, outputs);
  if (status != 0) {
    fprintf(stderr, "model_main failed: %d\n", status);
    return 1;
  }
  for (int i = 0; i < 6; ++i) printf("y[%d] = %.6f\n", i, y[i]);
  for (int i = 0; i < 2; ++i) printf("s[%d] = %.6f\n", i, s[i]);
  return 0;
}
