"""A floor under the top-k's k-th best key, found before the row's one pass.

The row's first ``chunks * groups`` elements are dealt into ``groups`` >= k
groups (element j into group j mod groups) and each group's best key taken:
those are ``groups`` different elements, so at least k elements have a key
at least the least of them, ``T``, and no element with a key below ``T`` can
be in the top k (ties included: k elements beat it). The one pass then
considers only keys above ``max(k-th best so far, T - 1)``.

Why: the pass inserts every element that beats the k-th best so far, so on
ascending rows each of the n elements enters the buffer and moves all of it
(n inserts instead of ~k log(n / k) on random rows). With the floor, an
ascending row's groups' bests are its last elements and ``T`` is its exact
k-th best: ~2k inserts (the first k fill the buffer). A descending row's
groups' bests are its first elements: ``T`` exact again. On random rows the
floor is a high quantile (each group's best of n / groups) and saves about
half of the inserts. The cost is one vector pass of compares over the row,
whatever its order: `maxsi` of ``groups / lanes`` column vectors, chunk after
chunk, then a `minsi` across.
"""

from __future__ import annotations

from xlac.passes.lower.builders.top_k_keys import BITS, key_lines

# The floor is computed from k = MIN_K on (k = 1 inserts by one replace:
# the floor pass measured a cost, no gain) where the row has at least
# MIN_CHUNKS chunks of ``groups`` (else the floor is low: each group's best
# of a few elements). At 32 x 8000 f32 (Zen 4) it made k = 8 ascending 45x
# faster; random rows at k = 3 and 8 no slower.
MIN_K = 2
MIN_CHUNKS = 4


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
    chunk_end = n // groups * groups
    lines, block_key = key_lines(element, "%t_block", order, lanes, "t")
    block_key_lines = "".join(f"{indent}    {line}\n" for line in lines)
    least, most = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    read = f"{{in_bounds = [true]}} : {flat}, vector<{lanes}x{element}>"
    return f"""{indent}%t_groups = arith.constant {groups} : index
{indent}%t_chunk_end = arith.constant {chunk_end} : index
{indent}%t_least = arith.constant {least} : {key}
{indent}%t_most = arith.constant {most} : {key}
{indent}%t_one = arith.constant 1 : {key}
{indent}%t_lowest = arith.constant dense<{least}> : {keys}
{indent}%t_min = scf.for %t_g = %c0 to %t_groups step %lanes iter_args(%t_m = %t_most) -> ({key}) {{
{indent}  %t_best = scf.for %t_c = %t_g to %t_chunk_end step %t_groups iter_args(%t_a = %t_lowest) -> ({keys}) {{
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
