"""The row kernel of a sort by one integer key: a stable LSD radix sort.

A sort whose comparator is a plain ``stablehlo.compare LT`` (or ``GT``) of the
first operand's two elements (jnp.sort and jnp.argsort of integers, keys with
their values) is sorted by the key's bytes, lowest first: per byte one pass
counts the digits, one turns the counts into starts, and one moves every
operand's element to its digit's next slot. Each pass keeps equal digits in
order, so the whole is stable, as the merge sort is. Per row that is
``bytes x 3`` passes over n elements and 256 counters, where the merge sort
makes ``log2(n)`` passes with a comparator call and a dependent load per
element (the integer sorts of bench/sweep.py ran at 1.7-4.4x XLA).

Signed keys flip the top byte's sign bit (so negatives come first); ``GT``
takes 255 - digit (largest first; equal keys still in order).
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.passes.lower.builders.sort_rows import RowLoop


@dataclass(frozen=True)
class RadixKey:
    """What the comparator compares: the key's width, its signedness, the order."""

    width: int                 # bits of the signless integer key: 8, 16, 32 or 64
    signed: bool
    descending: bool           # GT: largest first

    @property
    def passes(self) -> int:
        return self.width // 8


def rows_text(name: str, elements: tuple[str, ...], rows: int, n: int, key: RadixKey,
              parallel: bool) -> str:
    """``@name(%a0: [rows, n], ...) -> same``: every row (sort_rows.py) sorted by operand 0."""
    loop = RowLoop(elements, rows, n, parallel)
    params = ", ".join(f"%a{k}: {t}" for k, t in enumerate(loop.flat))
    return f"""func.func private @{name}({params}) -> ({", ".join(loop.flat)}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %rows = arith.constant {rows} : index
  %n = arith.constant {n} : index
  %passes = arith.constant {key.passes} : index
  %zeros = arith.constant dense<0> : tensor<256xindex>
{loop.head()}
{_passes(elements, n, loop.scratch, key)}
{loop.tail(str(key.passes % 2))}
}}
"""


def _passes(elements, n: int, bufs: list[str], key: RadixKey) -> str:
    """One digit per pass, from row %from into row %to; the buffers are %p{k}."""
    count = len(elements)
    types = ", ".join(bufs)
    iters = ", ".join(f"%b{k} = %in{k}" for k in range(count))
    moving = ", ".join(f"%m{k} = %b{k}" for k in range(count))
    return f"""    %sorted:{count} = scf.for %pass = %c0 to %passes step %c1 iter_args({iters}) -> ({types}) {{
      %from = arith.andi %pass, %c1 : index
      %to = arith.xori %from, %c1 : index
{_digit_setup(key)}
      %counts = scf.for %k = %c0 to %n step %c1 iter_args(%h = %zeros) -> (tensor<256xindex>) {{
        %key = tensor.extract %b0[%from, %k] : {bufs[0]}
{_digit(key, "%key", "%d", "        ")}
        %old = tensor.extract %h[%d] : tensor<256xindex>
        %new = arith.addi %old, %c1 : index
        %h1 = tensor.insert %new into %h[%d] : tensor<256xindex>
        scf.yield %h1 : tensor<256xindex>
      }}
      %starts:2 = scf.for %g = %c0 to %c256 step %c1
          iter_args(%st = %counts, %sum = %c0) -> (tensor<256xindex>, index) {{
        %here = tensor.extract %st[%g] : tensor<256xindex>
        %st1 = tensor.insert %sum into %st[%g] : tensor<256xindex>
        %next = arith.addi %sum, %here : index
        scf.yield %st1, %next : tensor<256xindex>, index
      }}
      %moved:{count + 1} = scf.for %k = %c0 to %n step %c1
          iter_args(%slot = %starts#0, {moving}) -> (tensor<256xindex>, {types}) {{
        %key = tensor.extract %m0[%from, %k] : {bufs[0]}
{_digit(key, "%key", "%d", "        ")}
        %at = tensor.extract %slot[%d] : tensor<256xindex>
        %at1 = arith.addi %at, %c1 : index
        %slot1 = tensor.insert %at1 into %slot[%d] : tensor<256xindex>
{_moves(elements, bufs)}
        scf.yield %slot1, {", ".join(f"%w{k}" for k in range(count))} : tensor<256xindex>, {types}
      }}
      scf.yield {", ".join(f"%moved#{k + 1}" for k in range(count))} : {types}
    }}"""


def _digit_setup(key: RadixKey) -> str:
    """The pass's shift (8 x pass) in the key's type, and whether it is the top byte."""
    t = f"i{key.width}"
    return "\n".join([
        f"      %pass_i = arith.index_cast %pass : index to {t}",
        f"      %c8_k = arith.constant 8 : {t}",
        f"      %shift = arith.muli %pass_i, %c8_k : {t}",
        f"      %c255_k = arith.constant 255 : {t}",
    ])


def _digit(key: RadixKey, value: str, name: str, pad: str) -> str:
    """``name``: the byte of ``value`` this pass sorts by, as an index in [0, 256)."""
    t = f"i{key.width}"
    lines = [f"{name}_s = arith.shrui {value}, %shift : {t}",
             f"{name}_b = arith.andi {name}_s, %c255_k : {t}"]
    last = f"{name}_b"
    if key.signed:                      # the top byte's sign bit flipped: negatives first
        lines += [f"{name}_top = arith.constant {key.width - 8} : {t}",
                  f"{name}_is_top = arith.cmpi eq, %shift, {name}_top : {t}",
                  f"{name}_c128 = arith.constant 128 : {t}",
                  f"{name}_zero = arith.constant 0 : {t}",
                  f"{name}_flip = arith.select {name}_is_top, {name}_c128, {name}_zero : {t}",
                  f"{name}_f = arith.xori {last}, {name}_flip : {t}"]
        last = f"{name}_f"
    if key.descending:                  # largest first
        lines.append(f"{name}_r = arith.subi %c255_k, {last} : {t}")
        last = f"{name}_r"
    lines.append(f"{name} = arith.index_castui {last} : {t} to index")
    return "\n".join(pad + line for line in lines)


def _moves(elements, bufs: list[str]) -> str:
    lines = []
    for k, _ in enumerate(elements):
        lines.append(f"        %v{k} = tensor.extract %m{k}[%from, %k] : {bufs[k]}")
        lines.append(f"        %w{k} = tensor.insert %v{k} into %m{k}[%to, %at] : {bufs[k]}")
    return "\n".join(lines)
