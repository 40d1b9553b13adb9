"""XLA's numbers where upstream's lowering, or the JIT it feeds, would give
others: complex order and bitcasts, i1 and integer-power arithmetic, constant
powers, NaN and inf of narrow floats, conversions rounded once or saturated,
bf16/f16 contractions computed in f32."""
