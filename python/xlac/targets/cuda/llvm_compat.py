"""LLVM IR text from MLIR's translator (LLVM 24) made readable by llvmlite (LLVM 22).

Only floating-point literals differ (LLVM PR #190649 changed how they print):
LLVM 24 writes ``+inf``, ``-qnan``, ``+nan(0x..)``, ``f0x7F7FFFFF`` and the
shortest decimal in the type's own precision (``float 1.000000e-01``), which
LLVM 22 rejects. Each literal is rewritten as LLVM 22's exact hex form, its
type taken from the nearest type keyword before it on the line.
"""

from __future__ import annotations

import re
import struct

import ml_dtypes
import numpy as np

_TYPE = r"\b(half|bfloat|float|double)\b"
_LITERAL = (r"(?<![\w.%@$\"-])([+-]?(?:inf|qnan)|[+-]?s?nan\(0x[0-9a-fA-F]+\)|f0x[0-9a-fA-F]+"
            r"|[+-]?\d+\.\d+e[+-]\d+)(?![\w.])")
_TOKEN = re.compile(f"{_TYPE}|{_LITERAL}")
_BITS = {"half": (16, 10), "bfloat": (16, 7), "float": (32, 23), "double": (64, 52)}


def llvm24_to_llvm22(text: str) -> str:
    return "\n".join(_fix_line(line) for line in text.splitlines()) + "\n"


def _fix_line(line: str) -> str:
    if line.lstrip().startswith(("!", ";")) or not re.search(_TYPE, line):
        return line
    current = [None]

    def replace(match: re.Match) -> str:
        if match.group(1):
            current[0] = match.group(1)
            return match.group(0)
        return _hex(current[0], match.group(2)) if current[0] else match.group(0)

    return _TOKEN.sub(replace, line)


def _hex(kind: str, literal: str) -> str:
    bits = _type_bits(kind, literal)
    if kind == "half":
        return f"0xH{bits:04X}"
    if kind == "bfloat":
        return f"0xR{bits:04X}"
    if kind == "float":                                # LLVM 22 spells floats as the double they widen to
        return f"0x{_float_to_double_bits(bits):016X}"
    return f"0x{bits:016X}"


def _type_bits(kind: str, literal: str) -> int:
    width, mantissa = _BITS[kind]
    exponent_ones = ((1 << (width - mantissa - 1)) - 1) << mantissa
    sign = (1 << (width - 1)) if literal.startswith("-") else 0
    body = literal.lstrip("+-")
    if body.startswith("f0x"):
        return int(body[3:], 16)
    if body == "inf":
        return sign | exponent_ones
    if body == "qnan":
        return sign | exponent_ones | (1 << (mantissa - 1))
    if "nan(" in body:
        payload = int(body[body.index("(") + 1:-1], 16)
        quiet = 0 if body.startswith("snan") else 1 << (mantissa - 1)
        return sign | exponent_ones | quiet | payload
    return _decimal_bits(kind, float(literal))


def _decimal_bits(kind: str, value: float) -> int:
    if kind == "double":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    dtype = {"half": np.float16, "bfloat": ml_dtypes.bfloat16, "float": np.float32}[kind]
    return int(np.array(value, dtype=dtype).view({"float": np.uint32}.get(kind, np.uint16)))


def _float_to_double_bits(bits: int) -> int:
    sign, exponent, mantissa = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exponent == 0xFF:                               # inf/NaN: keep the payload bit for bit
        return (sign << 63) | (0x7FF << 52) | (mantissa << 29)
    value = np.array(bits, dtype=np.uint32).view(np.float32).astype(np.float64)
    return int(value.view(np.uint64))
