"""The fuzzer's inputs: seed programs in four forms, and seeded mutations of them.

Forms: pretty text, generic text, bytecode and a StableHLO portable artifact
(VHLO), the last three made from the text by the MLIR/StableHLO bindings at
run time. A mutation is a pure function of (seed program, form, random
generator), so ``(seed, index)`` always rebuilds the same input.
"""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

FORMS = ("pretty", "generic", "bytecode", "vhlo")

# Small programs of our own, so the fuzzer runs without ../shared; the bench
# programs are added when the shared data is beside the repo.
OWN_SEEDS = {
    "add_mul": """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.multiply %0, %a : tensor<4xf32>
  return %1 : tensor<4xf32>
}
""",
    "reduce_while": """func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
       : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c3 = stablehlo.constant dense<3> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %s) : tensor<i32>, tensor<2xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %n = stablehlo.add %i, %c1 : tensor<i32>
      %d = stablehlo.add %acc, %acc : tensor<2xf32>
      stablehlo.return %n, %d : tensor<i32>, tensor<2xf32>
    }
  return %r#1 : tensor<2xf32>
}
""",
}
BENCH_SEEDS = ("matmul", "reduce_sum", "conv2d", "gelu", "softmax")


def seed_programs(shared: Path | None) -> dict[str, str]:
    """Our own seeds, and the small bench programs if ``shared`` has them."""
    seeds = dict(OWN_SEEDS)
    for name in BENCH_SEEDS:
        path = shared / "bench" / "suite" / f"{name}.stablehlo.mlir" if shared else None
        if path is not None and path.exists():
            seeds[name] = path.read_text()
    return seeds


def seed_forms(text: str) -> dict[str, bytes]:
    """One program in the four forms (through the MLIR and StableHLO bindings)."""
    from xlac.context import new_context
    from xlac.mlir import ir, stablehlo
    with new_context():
        module = ir.Module.parse(text)
        generic = module.operation.get_asm(print_generic_op_form=True)
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        vhlo = stablehlo.serialize_portable_artifact(module, stablehlo.get_current_version())
    return {"pretty": text.encode(), "generic": generic.encode(), "bytecode": buffer.getvalue(),
            "vhlo": bytes(vhlo)}


_TOKEN = re.compile(rb"%[\w#]+|@\w+|[A-Za-z_][\w.$]*|\d+(?:\.\d+)?|[^\s\w]")
_DIM = re.compile(rb"(?<=[<x])\d+(?=x)")
_HUGE = (b"9223372036854775807", b"18446744073709551616", b"4294967296", b"99999999999999",
         b"-1", b"0", b"1000000000000000000000000000000")
_BAD_UTF8 = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf0\x28\x8c\x28", b"\x80\x80", b"\x00")


def mutate(data: bytes, form: str, rng: random.Random, others: list[bytes]) -> tuple[bytes, str]:
    """One mutation of ``data``; returns the input and the mutation's name."""
    text_form = form in ("pretty", "generic")
    kinds = ["flip", "truncate", "splice", "bad_utf8", "repeat"]
    kinds += ["token", "token", "deep_nesting", "huge_dim"] if text_form else ["flip", "varint"]
    kind = rng.choice(kinds)
    return _MUTATORS[kind](bytearray(data), rng, others), kind


def _flip(data: bytearray, rng, others) -> bytes:
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def _truncate(data: bytearray, rng, others) -> bytes:
    return bytes(data[:rng.randrange(len(data) + 1)])


def _splice(data: bytearray, rng, others) -> bytes:
    other = rng.choice(others) if others else bytes(data)
    start, end = sorted(rng.randrange(len(data) + 1) for _ in range(2))
    a, b = sorted(rng.randrange(len(other) + 1) for _ in range(2))
    return bytes(data[:start]) + other[a:b] + bytes(data[end:])


def _bad_utf8(data: bytearray, rng, others) -> bytes:
    names = [m.end() for m in re.finditer(rb"stablehlo\.|func\.|@", bytes(data))]
    at = rng.choice(names) if names and rng.random() < 0.7 else rng.randrange(len(data) + 1)
    return bytes(data[:at]) + rng.choice(_BAD_UTF8) + bytes(data[at:])


def _repeat(data: bytearray, rng, others) -> bytes:
    start = rng.randrange(len(data) + 1)
    piece = bytes(data[start:start + rng.randint(1, 64)])
    return bytes(data[:start]) + piece * rng.randint(2, 2000) + bytes(data[start:])


def _token(data: bytearray, rng, others) -> bytes:
    tokens = [m.span() for m in _TOKEN.finditer(bytes(data))]
    if not tokens:
        return bytes(data)
    start, end = rng.choice(tokens)
    choice = rng.random()
    if choice < 0.3:
        replacement = b""                                       # delete
    elif choice < 0.6:
        a, b = rng.choice(tokens)
        replacement = bytes(data[a:b])                          # another token of the input
    elif choice < 0.8:
        replacement = bytes(data[start:end]) * 2                # duplicate
    else:
        replacement = rng.choice(_HUGE)
    return bytes(data[:start]) + replacement + bytes(data[end:])


def _deep_nesting(data: bytearray, rng, others) -> bytes:
    depth = rng.choice((300, 1000, 5000, 20000, 100000))
    text = bytes(data)
    types = [m.span() for m in re.finditer(rb"tensor<[^>]*>", text)]
    if types and rng.random() < 0.5:
        start, end = rng.choice(types)
        return text[:start] + b"tuple<" * depth + text[start:end] + b">" * depth + text[end:]
    at = rng.randrange(len(text) + 1)
    opener = rng.choice((b"{", b"(", b"[", b"<", b"{^bb0:", b"dense<["))
    return text[:at] + opener * depth + text[at:]


def _huge_dim(data: bytearray, rng, others) -> bytes:
    text = bytes(data)
    dims = [m.span() for m in _DIM.finditer(text)]
    if not dims:
        return _token(data, rng, others)
    start, end = rng.choice(dims)
    return text[:start] + rng.choice(_HUGE) + text[end:]


def _varint(data: bytearray, rng, others) -> bytes:
    """Bytecode's sizes are varints: a run of 0xff makes one enormous."""
    at = rng.randrange(len(data) + 1)
    return bytes(data[:at]) + b"\xff" * rng.randint(1, 9) + bytes(data[at + 1:])


_MUTATORS = {"flip": _flip, "truncate": _truncate, "splice": _splice, "bad_utf8": _bad_utf8,
             "repeat": _repeat, "token": _token, "deep_nesting": _deep_nesting,
             "huge_dim": _huge_dim, "varint": _varint}
