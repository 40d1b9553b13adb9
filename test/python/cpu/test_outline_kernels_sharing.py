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
    real = outline_kernels._Kernels._text

    def counted(self, func, name):
        printed.append(name)
        return real(self, func, name)

    monkeypatch.setattr(outline_kernels._Kernels, "_text", counted)
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


def _functions(module) -> dict:
    return {op.operation.attributes["sym_name"].value: op.operation for op in module.body.operations
            if op.operation.name == "func.func"}


def test_the_kernels_printed_are_handed_to_the_pieces_keys_as_printed_again():
    """``printed_texts``: the texts of the kernels kept, each what printing it now
    gives (the pieces' keys reuse them); a twin's name, freed when the twin is
    erased and taken by a later kernel, not handed over with the twin's text."""
    # the twin of the first loop is made second (xla_kernel_1) and erased; the
    # longer third loop takes its name
    program = PROGRAM.replace(LOOP.format(src="b", dest="c", extra="\n    %z = arith.negf %y : f32"),
                              LOOP.format(src="b", dest="c", extra="")) \
        .replace(LOOP.format(src="c", dest="d", extra=""),
                 LOOP.format(src="c", dest="d", extra="\n    %z = arith.negf %y : f32"))
    for text in (PROGRAM, program):
        module = parse_module(new_context(), text.encode(), "t.mlir")
        run_passes(module, ["xla-outline-kernels"])
        handed = outline_kernels.printed_texts(module.operation)
        functions = _functions(module)
        assert handed and set(handed) <= set(functions)
        for name, printed in handed.items():
            assert printed == functions[name].get_asm(enable_debug_info=False, use_local_scope=True,
                                                      assume_verified=True)
        assert outline_kernels.printed_texts(module.operation) == {}        # taken once
    assert "xla_kernel_1" in functions and "xla_kernel_1" not in handed      # the freed name
    assert "arith.negf" in str(functions["xla_kernel_1"])


def test_the_texts_are_handed_only_for_the_module_the_pass_last_ran_on():
    first = parse_module(new_context(), PROGRAM.encode(), "t.mlir")
    run_passes(first, ["xla-outline-kernels"])
    other = parse_module(new_context(), PROGRAM.encode(), "t.mlir")
    assert outline_kernels.printed_texts(other.operation) == {}
    assert outline_kernels.printed_texts(first.operation) == {}          # the look took them


def test_a_long_kernels_text_is_handed_whole():
    """Kernels of thousands of ops (the 1-D convolution of 1,280 taps unrolled
    made such kernels): each handed text is the whole of a fresh print."""
    chain = "".join(f"\n    %e{k} = math.exp %{f'e{k - 1}' if k else 'y'} : f32" for k in range(3000))
    program = PROGRAM.replace(LOOP.format(src="a", dest="b", extra=""), LOOP.format(src="a", dest="b", extra=chain)) \
        .replace(LOOP.format(src="c", dest="d", extra=""), LOOP.format(src="c", dest="d", extra=chain))
    module = parse_module(new_context(), program.encode(), "t.mlir")
    run_passes(module, ["xla-outline-kernels"])
    handed = outline_kernels.printed_texts(module.operation)
    functions = _functions(module)
    assert max(map(len, handed.values())) > 90_000
    for name, printed in handed.items():
        assert printed == functions[name].get_asm(enable_debug_info=False, use_local_scope=True,
                                                  assume_verified=True)


def test_a_compile_keeps_no_module_nor_text_past_its_end():
    """A program compiled in one JIT (no cut takes the texts) leaves neither its
    module nor its kernels' texts with the pass once compiled."""
    import numpy as np

    import xlac
    from xlac.options import Options
    text = ("func.func @main(%a: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {\n"
            "  %0 = stablehlo.exponential %a : tensor<64xf32>\n  %1 = stablehlo.exponential %b : tensor<64xf32>\n"
            "  return %0, %1 : tensor<64xf32>, tensor<64xf32>\n}\n")
    options = Options.from_env().replace(cache_dir=None, progress="off")
    exe = xlac.compile(text, options=options, cache=False)
    assert outline_kernels._PRINTED["module"] is None and outline_kernels._PRINTED["texts"] == {}
    a = np.linspace(-1, 1, 64, dtype=np.float32)
    np.testing.assert_allclose(exe(a, a)[0], np.exp(a), rtol=1e-6)
