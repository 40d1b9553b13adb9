"""The body of a helper function written as MLIR text, one SSA value a line."""

from __future__ import annotations


class SsaText:
    """Lines of ``%vN = ...`` with fresh names, and lines with no result."""

    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def add(self, rhs: str) -> str:
        """A line defining a fresh value as ``rhs``; returns the value's name."""
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"  {name} = {rhs}")
        return name

    def plain(self, text: str) -> None:
        self.lines.append(f"  {text}")

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)
