"""The op-support table (docs/op-support.md), generated from ``xlac.passes.ingest.support``.

    python -m xlac.passes.ingest.op_table > docs/op-support.md
"""

from __future__ import annotations

from xlac.passes.ingest.custom_calls import TABLE_CELLS
from xlac.passes.ingest.support import TYPE_RULES, UNSUPPORTED

_STABLEHLO = """abs add after_all all_gather all_reduce all_to_all and atan2 batch_norm_grad
batch_norm_inference batch_norm_training bitcast_convert broadcast broadcast_in_dim case cbrt ceil
cholesky clamp collective_broadcast collective_permute compare complex composite concatenate
constant convert convolution cosine count_leading_zeros create_token cross-replica-sum custom_call
divide dot dot_general dynamic_broadcast_in_dim dynamic_conv dynamic_gather dynamic_iota dynamic_pad
dynamic_reshape dynamic_slice dynamic_update_slice einsum exponential exponential_minus_one fft
floor gather get_dimension_size get_tuple_element if imag infeed iota is_finite log log_plus_one
logistic map maximum minimum multiply negate not optimization_barrier or outfeed pad partition_id
popcnt power real real_dynamic_slice recv reduce reduce_precision reduce_scatter reduce_window
remainder replica_id reshape reverse rng rng_bit_generator round_nearest_afz round_nearest_even
rsqrt scatter select select_and_scatter send set_dimension_size shift_left shift_right_arithmetic
shift_right_logical sign sine slice sort sqrt subtract tan tanh torch_index_select transpose
triangular_solve tuple unary_einsum uniform_dequantize uniform_quantize while xor"""

_CHLO = """acos acosh asin asinh atan atanh bessel_i1e broadcast_add broadcast_and broadcast_atan2
broadcast_compare broadcast_complex broadcast_divide broadcast_maximum broadcast_minimum
broadcast_multiply broadcast_next_after broadcast_or broadcast_polygamma broadcast_power
broadcast_remainder broadcast_select broadcast_shift_left broadcast_shift_right_arithmetic
broadcast_shift_right_logical broadcast_subtract broadcast_xor broadcast_zeta conj constant
constant_like cosh digamma erf erf_inv erfc is_inf is_neg_inf is_pos_inf lgamma next_after
polygamma ragged_dot sinh square tan top_k zeta"""

TARGETS = ("cpu", "cuda")


def all_ops() -> list[str]:
    """Every StableHLO and CHLO op these bindings know."""
    from xlac.context import new_context
    ctx = new_context()
    names = [f"stablehlo.{n}" for n in _STABLEHLO.split()] + [f"chlo.{n}" for n in _CHLO.split()]
    return [name for name in names if ctx.is_registered_operation(name)]


def markdown() -> str:
    lines = ["# Op support", "",
             "Generated from `passes/ingest/support.py` by `python -m xlac.passes.ingest.op_table`; do not edit.",
             "An op is compiled on a target unless a reason is given.", "",
             "| op | " + " | ".join(TARGETS) + " |", "|---|" + "---|" * len(TARGETS)]
    for name in all_ops():
        reason = UNSUPPORTED.get(name)
        cell = f"no: {reason}" if reason else "yes"
        cells = [TABLE_CELLS[t] for t in TARGETS] if name == "stablehlo.custom_call" \
            else [cell for _ in TARGETS]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    lines += ["", "CHLO ops are legalized to StableHLO during ingestion; their support is that of",
              "the StableHLO they become.", "",
             "`cuda` (sm_90, `pip install 'xlac[cuda]'`) compiles an op where `cpu` does, with",
             "static shapes only; its PTX is checked by ptxas here, but it has not yet run on a",
             "GPU. Ops lowered to sequential loops (sort, scatter, top_k, ...) run as a",
             "one-thread kernel: correct in principle, slow. `while`, `if` and `case` run on",
             "the host, the work in their regions as kernels, the predicate or index read",
             "back from the device (none with a known trip count): docs/cuda.md.", "",
              "Whatever the op, the support check also rejects:", ""]
    lines += [f"- {rule}" for rule in TYPE_RULES]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
