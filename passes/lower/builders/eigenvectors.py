"""Real geev's eigenvectors, unpacked into complex ones, as StableHLO text.

LAPACK's sgeev/dgeev return real eigenvectors packed: where the j-th and
(j+1)-st eigenvalues are a complex conjugate pair (the one of positive
imaginary part first), v(j) = V(:,j) + i*V(:,j+1) and v(j+1) = V(:,j) - i*V(:,j+1);
a real eigenvalue's vector is V(:,j). jaxlib's geev kernel returns them
unpacked (complex), and so does xla-lower-custom-calls, with these ops.
"""

from __future__ import annotations


def unpack_eigenvectors(result: str, packed: str, wi: str, shape: list[int], real: str) -> list[str]:
    """Lines defining ``result`` (complex ``shape``: batch..., n, n; column j the
    j-th vector) from ``packed`` (real, the same shape) and ``wi`` (real, batch..., n:
    the eigenvalues' imaginary parts). A NaN imaginary part counts as real, as in jaxlib."""
    rank, n = len(shape), shape[-1]
    t, t1 = _tensor(shape, real), _tensor(shape, "i1")
    wide = _tensor([*shape[:-1], n + 2], real)
    p = result
    lows, highs = [0] * (rank - 1) + [1], [0] * (rank - 1) + [1]
    return [
        f"{p}_z = stablehlo.constant dense<0.0> : tensor<{real}>",
        f"{p}_zeros = stablehlo.constant dense<0.0> : {t}",
        f"{p}_wi = stablehlo.broadcast_in_dim {wi}, dims = {[*range(rank - 2), rank - 1]} : "
        f"({_tensor([*shape[:-2], n], real)}) -> {t}",
        f"{p}_pad = \"stablehlo.pad\"({packed}, {p}_z) {{edge_padding_low = {_array(lows)}, "
        f"edge_padding_high = {_array(highs)}, interior_padding = {_array([0] * rank)}}} : "
        f"({t}, tensor<{real}>) -> {wide}",
        _slice(f"{p}_next", f"{p}_pad", wide, t, [0] * (rank - 1) + [2], shape[:-1] + [n + 2]),
        _slice(f"{p}_prev", f"{p}_pad", wide, t, [0] * rank, shape),
        f"{p}_first = stablehlo.compare GT, {p}_wi, {p}_zeros : ({t}, {t}) -> {t1}",
        f"{p}_second = stablehlo.compare LT, {p}_wi, {p}_zeros : ({t}, {t}) -> {t1}",
        f"{p}_neg = stablehlo.negate {packed} : {t}",
        f"{p}_re = \"stablehlo.select\"({p}_second, {p}_prev, {packed}) : ({t1}, {t}, {t}) -> {t}",
        f"{p}_im2 = \"stablehlo.select\"({p}_second, {p}_neg, {p}_zeros) : ({t1}, {t}, {t}) -> {t}",
        f"{p}_im = \"stablehlo.select\"({p}_first, {p}_next, {p}_im2) : ({t1}, {t}, {t}) -> {t}",
        f"{p} = stablehlo.complex {p}_re, {p}_im : {_tensor(shape, f'complex<{real}>')}",
    ]


def _slice(result: str, source: str, source_type: str, result_type: str, start, limit) -> str:
    strides = [1] * len(start)
    return (f"{result} = \"stablehlo.slice\"({source}) {{start_indices = {_array(start)}, "
            f"limit_indices = {_array(limit)}, strides = {_array(strides)}}} : "
            f"({source_type}) -> {result_type}")


def _array(values) -> str:
    return "array<i64: " + ", ".join(str(v) for v in values) + ">"


def _tensor(shape, element) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + f"{element}>"
