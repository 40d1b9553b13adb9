"""Shardy's pretty ops as generic MLIR text, so the bindings can parse them.

The bindings have no Shardy (``sdy``) dialect, and an unregistered dialect's
ops parse only in the generic form (``"sdy.return"(%x) : (...) -> ()``).
Its attributes (``#sdy.sharding<...>``) parse as they are, as opaque
attributes, once unregistered dialects are allowed. So the handful of ops
JAX prints in pretty form are rewritten, as text, into the generic form
before parsing; ``xlac.frontend.spmd`` then reads and removes them.

Why text and not another parser: JAX's own MLIR (jaxlib) reads Shardy, but
xlac must read these programs without JAX installed. Shardy's pretty syntax
for the ops JAX emits is small and regular (one op per line, the region of
a manual computation between braces), so a scanner that matches brackets
and skips string literals is enough. Any other ``sdy`` op is named in an
error.

    %0 = sdy.manual_computation(%a) in_shardings=[<@m, [{"x"}]>] out_shardings=[<@m, [{}]>]
         manual_axes={"x"} (%b: tensor<4xf32>) { ... sdy.return %c : tensor<4xf32> }
         : (tensor<16xf32>) -> tensor<4xf32>
  becomes
    %0 = "sdy.manual_computation"(%a) <{in_shardings = #sdy.sharding_per_value<[<@m, [{"x"}]>]>,
         manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[...]>}>
         ({ ^bb0(%b: tensor<4xf32>): ... "sdy.return"(%c) : (tensor<4xf32>) -> () })
         : (tensor<16xf32>) -> tensor<4xf32>
"""

from __future__ import annotations

import re

# a pretty sdy op where an op starts: after `=` or at the start of a line
_PRETTY_OP = re.compile(r"(?:(?<==)|^)(\s*)sdy\.([a-z_]+)\b", re.MULTILINE)
_CLOSERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


class ShardyTextError(ValueError):
    """A Shardy op this rewrite does not know, or text it cannot follow."""


def has_pretty_shardy(text: str) -> bool:
    return _PRETTY_OP.search(text) is not None


def to_generic(text: str) -> str:
    """``text`` with every pretty ``sdy`` op JAX emits in generic form; each
    manual computation's body becomes a function of its own (``xla.body``)."""
    hoisted: list[str] = []
    rewritten = _rewrite(text, hoisted)
    if not hoisted:
        return rewritten
    # at the end of the module: the lines before stay where they were (diagnostics)
    in_module = re.search(r"^\s*module\b", rewritten, re.MULTILINE) is not None
    at = rewritten.rfind("}") if in_module else len(rewritten)
    return rewritten[:at] + "".join(hoisted) + rewritten[at:]


def _rewrite(text: str, hoisted: list[str]) -> str:
    out, position = [], 0
    while (match := _PRETTY_OP.search(text, position)) is not None:
        name = match.group(2)
        if name not in _REWRITES:
            line = text.count("\n", 0, match.start()) + 1
            raise ShardyTextError(f"line {line}: the Shardy op 'sdy.{name}' is not supported "
                                  f"(xlac reads {', '.join('sdy.' + n for n in _REWRITES)})")
        out.append(text[position:match.end(1)])
        generic, position = _REWRITES[name](text, match.end(), hoisted)
        out.append(generic)
    out.append(text[position:])
    return "".join(out)


def closing(text: str, start: int) -> int:
    """Index just past the bracket that closes the one at ``text[start]``.

    Brackets of every kind nest; string literals are skipped; ``->`` is an
    arrow, not a closer.
    """
    stack, i = [], start
    while i < len(text):
        char = text[i]
        if char == '"':
            i = _string_end(text, i)
            continue
        if char in _CLOSERS and not (char == "<" and text.startswith("<=", i)):
            stack.append(_CLOSERS[char])
        elif stack and char == stack[-1] and not (char == ">" and text[i - 1] == "-"):
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise ShardyTextError("unbalanced brackets in a Shardy op")


def _string_end(text: str, start: int) -> int:
    i = start + 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _group(text: str, i: int, opener: str) -> tuple[str, int]:
    """The bracketed group starting at ``text[i]`` (after blanks): (its inside, index past it)."""
    i = _skip_space(text, i)
    if not text.startswith(opener, i):
        raise ShardyTextError(f"expected '{opener}' in a Shardy op near: {text[i:i + 40]!r}")
    end = closing(text, i)
    return text[i + 1:end - 1], end


def _keyword(text: str, i: int, word: str) -> int:
    i = _skip_space(text, i)
    if not text.startswith(word, i):
        raise ShardyTextError(f"expected '{word}' in a Shardy op near: {text[i:i + 40]!r}")
    return i + len(word)


def _rest_of_line(text: str, i: int) -> tuple[str, str, int]:
    """(the line from ``i`` without its location, the ``loc(...)`` part, index of the newline)."""
    end = text.find("\n", i)
    end = len(text) if end < 0 else end
    line = text[i:end]
    at = line.find(" loc(")
    return (line, "", end) if at < 0 else (line[:at], line[at:], end)


def _mesh(text: str, i: int, hoisted: list[str]) -> tuple[str, int]:
    """``sdy.mesh @name = <axes> {attrs}``"""
    name = re.match(r"\s*@([\w.$-]+|\"[^\"]*\")\s*=", text[i:])
    if name is None:
        raise ShardyTextError("expected '@name =' after sdy.mesh")
    body, i = _group(text, i + name.end(), "<")
    symbol = name.group(1).strip('"')
    line, loc, end = _rest_of_line(text, i)
    attrs = line.strip()
    return (f'"sdy.mesh"() <{{mesh = #sdy.mesh<{body}>, sym_name = "{symbol}"}}> '
            f"{attrs}{' ' if attrs else ''}: () -> (){loc}", end)


def _manual_computation(text: str, i: int, hoisted: list[str]) -> tuple[str, int]:
    """The op without its region; the region becomes ``@__xlac_manual_<n>``.

    Why a function: the body may call functions (``func.call @relu``), and the
    verifier looks symbols up in the nearest op that may be a symbol table,
    which an unregistered op may be: inside it, ``@relu`` would not be found.
    """
    operands, i = _group(text, i, "(")
    ins, i = _group(text, _keyword(text, i, "in_shardings="), "[")
    outs, i = _group(text, _keyword(text, i, "out_shardings="), "[")
    axes, i = _group(text, _keyword(text, i, "manual_axes="), "{")
    arguments, i = _group(text, i, "(")
    i = _skip_space(text, i)
    body_end = closing(text, i)
    name = f"__xlac_manual_{len(hoisted)}"
    hoisted.append("")                        # reserve the name before nested bodies take theirs
    body, result_types = _body_returning(text[i + 1:body_end - 1])
    hoisted[int(name.rsplit("_", 1)[1])] = (
        f"  func.func private @{name}({arguments}) -> ({result_types}) {{"
        f"{_rewrite(body, hoisted)}}}\n")
    properties = (f"<{{in_shardings = #sdy.sharding_per_value<[{ins}]>, "
                  f"manual_axes = #sdy<manual_axes{{{axes}}}>, "
                  f"out_shardings = #sdy.sharding_per_value<[{outs}]>}}>")
    padding = "\n" * text.count("\n", i, body_end)  # the lines after keep their numbers
    return (f'"sdy.manual_computation"({operands}) {properties} {{xla.body = @{name}}}{padding}',
            body_end)


def _body_returning(body: str) -> tuple[str, str]:
    """The body with its terminating sdy.return as func.return; the returned types."""
    found = list(re.finditer(r"sdy\.return\b", body))
    terminator = found[-1] if found else None
    if terminator is None:
        raise ShardyTextError("a manual computation without sdy.return")
    line, loc, end = _rest_of_line(body, terminator.end())
    values, _, types = line.partition(" : ")
    returned = f"return {values.strip()} : {types.strip()}" if values.strip() else "return"
    return body[:terminator.start()] + returned + loc + body[end:], types.strip()


def _return(text: str, i: int, hoisted: list[str]) -> tuple[str, int]:
    """``sdy.return %a, %b : T1, T2`` (or a bare ``sdy.return``)."""
    line, loc, end = _rest_of_line(text, i)
    values, _, types = line.partition(" : ")
    return f'"sdy.return"({values.strip()}) : ({types.strip()}) -> (){loc}', end


def _with_sharding(name: str):
    """``sdy.<name> %v <sharding> : T``: an op that only annotates its operand."""
    def rewrite(text: str, i: int, hoisted: list[str]) -> tuple[str, int]:
        value = re.match(r"\s*(%[\w#.$-]+)", text[i:])
        if value is None:
            raise ShardyTextError(f"expected an operand after sdy.{name}")
        sharding, i = _group(text, i + value.end(), "<")
        line, loc, end = _rest_of_line(text, i)
        attrs, _, tensor = line.partition(":")
        extra = attrs.strip()[1:-1].strip() if attrs.strip().startswith("{") else ""
        props = f"sharding = #sdy.sharding<{sharding}>" + (f", {extra}" if extra else "")
        return (f'"sdy.{name}"({value.group(1)}) <{{{props}}}> : ({tensor.strip()}) -> '
                f"{tensor.strip()}{loc}", end)
    return rewrite


_REWRITES = {
    "mesh": _mesh,
    "manual_computation": _manual_computation,
    "return": _return,
    "sharding_constraint": _with_sharding("sharding_constraint"),
    "reshard": _with_sharding("reshard"),
}
