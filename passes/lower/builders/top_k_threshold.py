"""A floor under the top-k's k-th best key, found before the row's one pass.

The row's last ``chunks * groups`` elements (at most MAX_CHUNKS chunks) are
dealt into ``groups`` >= k groups (one element of each chunk a group, at the
same place) and each group's best key taken:
those are ``groups`` different elements, so at least k elements have a key
at least the least of them, ``T``, and no element with a key below ``T`` can
be in the top k (ties included: k elements beat it). The one pass then
considers only keys above ``max(k-th best so far, T - 1)``.

Why: the pass inserts every element that beats the k-th best so far, so on
ascending rows each of the n elements enters the buffer and moves all of it
(n inserts instead of ~k log(n / k) on random rows). With the floor, an
ascending row's groups' bests are its last elements and ``T`` is its exact
k-th best: ~2k inserts (the first k fill the buffer); a descending row
needs no floor (nothing beats its first k). On random rows the floor is a
high quantile (each group's best of up to 16: ~0.7 at k = 300 of 8000) and
saves about a third of the inserts. The cost is a vector pass of compares over at most
MAX_CHUNKS chunks, whatever the order: `maxsi` of ``groups / lanes`` column
vectors, chunk after chunk, then a `minsi` across.
"""

from __future__ import annotations

from xlac.passes.lower.builders.top_k_keys import BITS, key_lines

# The floor is computed from k = MIN_K on where the row has at least
# MIN_CHUNKS chunks of ``groups`` (else the floor is low: each group's best
# of a few elements). Below k = 16 an ascending row's walks are short (k = 8
# of 32 x 8000 f32 ascending: 0.5-0.8x XLA without the floor, Zen 4) and
# the floored kernel measured ~10% slower at k = 3 of 1200 x 2000 random.
MIN_K = 16
MIN_CHUNKS = 4
# At most this many chunks, the row's last: the pass's cost bounded at
# 16 x groups elements; ascending rows need only the last chunk, and random
# ones lose little (at k = 300 of 8000 a floor at the ~0.7 quantile, not ~0.8).
MAX_CHUNKS = 16


def group_count(k: int, lanes: int) -> int:
    """k rounded up to whole vectors."""
    return (k + lanes - 1) // lanes * lanes


def wanted(k: int, n: int, lanes: int) -> bool:
    return k >= MIN_K and n // group_count(k, lanes) >= MIN_CHUNKS


def floor_lines(x: str, flat: str, element: str, order, k: int, n: int, lanes: int,
                indent: str = "    ") -> str:
    """Lines defining ``%floor``: ``T - 1`` as a key (``T`` when it is the
    least key: nothing is below it), for the row ``%row`` of ``x``. Needs
    ``%c0``, ``%lanes`` and ``%pad`` (the element's zero)."""
    bits = BITS[element]
    key = f"i{bits}"
    keys = f"vector<{lanes}x{key}>"
    groups = group_count(k, lanes)
    start = n - min(n // groups, MAX_CHUNKS) * groups
    lines, block_key = key_lines(element, "%t_block", order, lanes, "t")
    block_key_lines = "".join(f"{indent}    {line}\n" for line in lines)
    least, most = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    read = f"{{in_bounds = [true]}} : {flat}, vector<{lanes}x{element}>"
    return f"""{indent}%t_groups = arith.constant {groups} : index
{indent}%t_start = arith.constant {start} : index
{indent}%t_n = arith.constant {n} : index
{indent}%t_least = arith.constant {least} : {key}
{indent}%t_most = arith.constant {most} : {key}
{indent}%t_one = arith.constant 1 : {key}
{indent}%t_lowest = arith.constant dense<{least}> : {keys}
{indent}%t_min = scf.for %t_g = %c0 to %t_groups step %lanes iter_args(%t_m = %t_most) -> ({key}) {{
{indent}  %t_first = arith.addi %t_start, %t_g : index
{indent}  %t_best = scf.for %t_c = %t_first to %t_n step %t_groups iter_args(%t_a = %t_lowest) -> ({keys}) {{
{indent}    %t_block = vector.transfer_read {x}[%row, %t_c], %pad {read}
{block_key_lines}{indent}    %t_a1 = arith.maxsi %t_a, {block_key} : {keys}
{indent}    scf.yield %t_a1 : {keys}
{indent}  }}
{indent}  %t_least_best = vector.reduction <minsi>, %t_best : {keys} into {key}
{indent}  %t_m1 = arith.minsi %t_m, %t_least_best : {key}
{indent}  scf.yield %t_m1 : {key}
{indent}}}
{indent}%t_is_least = arith.cmpi eq, %t_min, %t_least : {key}
{indent}%t_below = arith.subi %t_min, %t_one : {key}
{indent}%floor = arith.select %t_is_least, %t_least, %t_below : {key}
"""
