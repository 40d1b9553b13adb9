"""xlac's ``--pass-pipeline`` parser.

The syntax is MLIR's: ``builtin.module(func.func(cse),canonicalize,
xla-select-entry{entry=main})``. xlac owns the parser because its Python
passes are not in MLIR's global registry: each element is sent either to
``pm.add(text)`` (upstream passes and op anchors) or to ``pm.add(callable)``
(xlac passes), and xlac's named pipelines expand in place.
"""

from __future__ import annotations

import functools

from xlac.record import factory, record


class PipelineSyntaxError(ValueError):
    """The pipeline text is malformed; the message points at the column."""


@record
class Element:
    """One pipeline element: a pass (with options) or an op anchor."""

    name: str
    options: str = ""                       # the text between { and }, verbatim
    children: tuple[Element, ...] | None = None  # set for op anchors: func.func(...)

    def text(self) -> str:
        out = self.name + (f"{{{self.options}}}" if self.options else "")
        if self.children is not None:
            out += "(" + ",".join(child.text() for child in self.children) + ")"
        return out


@record(mutable=True)
class _Scanner:
    source: str
    pos: int = 0
    elements: list = factory(list)

    def error(self, message: str) -> PipelineSyntaxError:
        pointer = " " * self.pos + "^"
        return PipelineSyntaxError(f"pass pipeline:1:{self.pos + 1}: error: {message}\n"
                                   f"{self.source}\n{pointer}")

    def skip_spaces(self) -> None:
        while self.pos < len(self.source) and self.source[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.source[self.pos] if self.pos < len(self.source) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "the end"
            raise self.error(f"expected '{char}', found {found}")
        self.pos += 1

    def name(self) -> str:
        self.skip_spaces()
        start = self.pos
        while self.pos < len(self.source) and (self.source[self.pos].isalnum()
                                               or self.source[self.pos] in "-_."):
            self.pos += 1
        if start == self.pos:
            raise self.error("expected a pass or operation name")
        return self.source[start:self.pos]

    def braced(self) -> str:
        """The text inside balanced braces (quotes respected), braces consumed."""
        self.expect("{")
        start, depth, quote = self.pos, 1, ""
        while self.pos < len(self.source):
            char = self.source[self.pos]
            if quote:
                quote = "" if char == quote else quote
            elif char in "\"'":
                quote = char
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    self.pos += 1
                    return self.source[start:self.pos - 1]
            self.pos += 1
        raise self.error("unbalanced '{' in pass options")

    def element(self) -> Element:
        name, options, children = self.name(), "", None
        if self.peek() == "{":
            options = self.braced()
        if self.peek() == "(":
            self.pos += 1
            children = tuple(self.sequence(closing=")"))
            self.expect(")")
        return Element(name, options, children)

    def sequence(self, closing: str) -> list[Element]:
        items = []
        if self.peek() == closing:
            return items
        items.append(self.element())
        while self.peek() == ",":
            self.pos += 1
            items.append(self.element())
        return items


@functools.lru_cache(maxsize=4096)
def parse_pipeline(text: str) -> tuple[Element, ...]:
    """Parse pipeline text; a top ``builtin.module(...)`` wrapper is removed.

    Cached: a compile's steps are parsed once per process, however often a
    pipeline is built, filtered or named.
    """
    scanner = _Scanner(text)
    elements = scanner.sequence(closing="")
    if scanner.peek():
        raise scanner.error(f"unexpected '{scanner.peek()}'")
    if len(elements) == 1 and elements[0].name == "builtin.module" and \
            elements[0].children is not None:
        return elements[0].children
    return tuple(elements)


def parse_options(text: str) -> dict[str, str]:
    """``a=1 b-c=x,y`` (space separated, as MLIR) -> {'a': '1', 'b-c': 'x,y'}."""
    options: dict[str, str] = {}
    for item in _split_top_level(text):
        key, _, value = item.partition("=")
        options[key.strip()] = value.strip().strip("\"'") if value else "true"
    return options


def _split_top_level(text: str) -> list[str]:
    items, depth, current, quote = [], 0, "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char.isspace() and depth == 0:
            if current:
                items.append(current)
            current = ""
            continue
        current += char
    if current:
        items.append(current)
    return items


def without_passes(steps: list[str], disabled) -> list[str]:
    """``steps`` minus every element named in ``disabled``, nested ones too."""
    if not disabled:
        return steps
    kept = []
    for step in steps:
        kept += [e.text() for e in _drop(parse_pipeline(step), frozenset(disabled))]
    return kept


def _drop(elements, names) -> list[Element]:
    kept = []
    for element in elements:
        if element.name in names:
            continue
        if element.children is not None:
            children = tuple(_drop(element.children, names))
            if not children:
                continue
            element = Element(element.name, element.options, children)
        kept.append(element)
    return kept


def pass_names(steps: list[str]) -> list[str]:
    """Every pass and anchor named in ``steps``, nested ones too, in order."""
    names = []

    def visit(elements):
        for element in elements:
            names.append(element.name)
            visit(element.children or ())

    for step in steps:
        visit(parse_pipeline(step))
    return names


def innermost_name(step: str) -> str:
    """The pass a one-pass step runs: ``func.func(cse)`` -> ``cse``."""
    elements = parse_pipeline(step)
    while elements and elements[0].children:
        elements = elements[0].children
    return elements[0].name if elements else step


def pipeline_text(steps: list[str]) -> str:
    return "builtin.module(" + ",".join(steps) + ")"
