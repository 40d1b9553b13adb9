"""Weights kept as ``dense_resource`` blobs in a program's text are decoded
apart from its code (``xlac.frontend.resource_blobs``): the parser, isolated
or not, sees only the code, and the results are the bits the whole text gives."""

from __future__ import annotations

import numpy as np
import pytest

import xlac
from xlac.errors import CompileError
from xlac.frontend import isolation, resource_blobs
from xlac.options import Options

RNG = np.random.default_rng(11)
W = RNG.standard_normal((64, 32)).astype(np.float32)
B = RNG.standard_normal((32,)).astype(np.float32)
X = RNG.standard_normal((4, 64)).astype(np.float32)


def _hex(value: np.ndarray, alignment: int = 16) -> str:
    return alignment.to_bytes(4, "little").hex() + value.tobytes().hex()


def _program(resources: str | None = None, comment: str = "") -> str:
    resources = resources if resources is not None else (
        f'w: "0x{_hex(W)}",\n      b: "0x{_hex(B, 4)}"')
    return (
        "func.func public @main(%x: tensor<4x64xf32>) -> tensor<4x32xf32> {\n"
        f"  {comment}\n"
        "  %w = stablehlo.constant dense_resource<w> : tensor<64x32xf32>\n"
        "  %b = stablehlo.constant dense_resource<b> : tensor<32xf32>\n"
        "  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]"
        " : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>\n"
        "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<4x32xf32>\n"
        "  %z = stablehlo.add %y, %bb : tensor<4x32xf32>\n"
        "  return %z : tensor<4x32xf32>\n"
        "}\n"
        "{-#\n  dialect_resources: {\n    builtin: {\n      " + resources + "\n    }\n  }\n#-}\n")


def _compile(text: str, **changes) -> xlac.Executable:
    options = Options.from_env().replace(**{"cache_dir": None, "progress": "off", **changes})
    return xlac.compile(text, options=options, cache=False)


@pytest.fixture
def split_always(monkeypatch):
    monkeypatch.setattr(resource_blobs, "MIN_SECTION_BYTES", 0)


@pytest.fixture
def sent_to_parser(monkeypatch):
    """What the isolated parser is given, per call."""
    sent = []
    vet = isolation.vet

    def spy(data, source_name, timeout):
        sent.append(data)
        return vet(data, source_name, timeout)

    monkeypatch.setattr(isolation, "vet", spy)
    return sent


@pytest.mark.parametrize("isolate", [True, False])
def test_the_weights_bits_arrive_without_the_parser_reading_them(split_always, sent_to_parser,
                                                                 isolate):
    text = _program()
    got = np.asarray(_compile(text, isolate_input=isolate)(X))
    want = X @ W + B
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if isolate:
        assert len(sent_to_parser) == 1 and b"0x" not in sent_to_parser[0]
    resource_blobs.MIN_SECTION_BYTES = 1 << 62                   # the whole text, as before
    whole = np.asarray(_compile(text, isolate_input=isolate)(X))
    assert got.tobytes() == whole.tobytes()


def test_only_the_plain_form_is_split(split_always):
    plain = _program().encode()
    blobs = resource_blobs.split_blobs(plain)
    assert blobs is not None and blobs.uses == 2
    assert plain.startswith(blobs.code) and b"{-#" not in blobs.code
    assert blobs.data["w"][0].tobytes() == W.tobytes() and blobs.data["w"][1] == 16
    assert blobs.data["b"][0].ctypes.data % 64 == 0
    unusual = [
        _program().replace("builtin: {", "other: {"),             # another dialect's resources
        _program(f'"w": "0x{_hex(W)}"'),                           # a quoted key
        _program(f'w: "0x{_hex(W)}0"'),                            # an odd number of digits
        _program(f'w: "0x{_hex(W)}", w: "0x{_hex(W)}"'),           # a name twice
        _program(f'w: "0x{_hex(W, 3)}"'),                          # not a power of two
        _program("w: 12"),                                         # not a blob
    ]
    assert [resource_blobs.split_blobs(text.encode()) for text in unusual] == [None] * 6
    assert resource_blobs.split_blobs(b"func.func @f() { return }") is None


def test_a_handle_that_is_not_a_constant_falls_back_to_the_whole_text(split_always):
    text = _program(comment="// dense_resource<w> in a comment")
    got = np.asarray(_compile(text)(X))
    np.testing.assert_allclose(got, X @ W + B, rtol=1e-5, atol=1e-5)


def test_a_blob_of_the_wrong_size_is_named(split_always):
    text = _program(f'w: "0x{_hex(W[:10])}",\n      b: "0x{_hex(B)}"')
    with pytest.raises(CompileError) as caught:
        _compile(text)
    assert "resource 'w' has 1280 bytes; its constant of type tensor<64x32xf32> needs 8192" \
        in str(caught.value)


def test_errors_in_the_code_keep_their_lines(split_always):
    text = _program().replace("stablehlo.add %y", "stablehlo.addd %y")
    messages = []
    for limit in (0, 1 << 62):
        resource_blobs.MIN_SECTION_BYTES = limit
        with pytest.raises(CompileError) as caught:
            _compile(text)
        messages.append(str(caught.value).splitlines()[0])
    assert messages[0] == messages[1] and ":7:" in messages[0]
