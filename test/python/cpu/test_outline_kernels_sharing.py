"""xla-outline-kernels shares identical kernels without printing every one
(passes/outline.py's ``FirstAlike``): a kernel is printed only when an earlier
one has what any identical kernel has alike (its arguments' types, its ops'
names and counts), and the kernels shared are those that printing them all shared."""

from __future__ import annotations

from xlac.context import new_context
from xlac.frontend.parse import parse_module
from xlac.passes.cpu import outline_kernels
from xlac.passes.outline import FirstAlike
from xlac.pipeline.pass_manager import run_passes

# three loops: the first and third the same kernel on other buffers, the second
# one op longer (exp then negate): alone in its key, it is never printed
LOOP = """
  scf.for %i = %c0 to %c8 step %c1 {{
    %x = memref.load %{src}[%i] : memref<8xf32>
    %y = math.exp %x : f32{extra}
    memref.store %y, %{dest}[%i] : memref<8xf32>
  }}"""
PROGRAM = """
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>, %d: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index""" + LOOP.format(src="a", dest="b", extra="") + LOOP.format(
    src="b", dest="c", extra="\n    %z = arith.negf %y : f32") + LOOP.format(src="c", dest="d", extra="") + """
  return
}
"""


def _outlined(monkeypatch, printed: list[str]) -> str:
    real = outline_kernels._text

    def counted(func, name):
        printed.append(name)
        return real(func, name)

    monkeypatch.setattr(outline_kernels, "_text", counted)
    module = parse_module(new_context(), PROGRAM.encode(), "t.mlir")
    run_passes(module, ["xla-outline-kernels"])
    return str(module)


def test_only_kernels_alike_in_key_are_printed(monkeypatch):
    printed: list[str] = []
    text = _outlined(monkeypatch, printed)
    assert sorted(printed) == ["xla_kernel_0", "xla_kernel_2"]       # not the longer kernel
    assert text.count("func.func private @xla_kernel_") == 2           # the twins are one
    calls = [line.split("@")[1].split("(")[0] for line in text.splitlines() if "call @xla_kernel_" in line]
    assert calls == ["xla_kernel_0", "xla_kernel_1", "xla_kernel_0"]


def test_first_alike_prints_each_item_at_most_once():
    prints: list[str] = []

    def text(item: str, body: str):
        return lambda: prints.append(item) or body

    alike = FirstAlike()
    assert alike.first(("k",), "a", text("a", "x")) is None
    assert prints == []                                # alone in its key: not printed
    assert alike.first(("other",), "b", text("b", "x")) is None
    assert alike.first(("k",), "c", text("c", "y")) is None       # same key, other text
    assert alike.first(("k",), "d", text("d", "y")) == "c"
    assert alike.first(("k",), "e", text("e", "x")) == "a"
    assert sorted(prints) == ["a", "c", "d", "e"]      # each once; "b" never
