"""xla-lower-fft: stablehlo.fft as a Cooley-Tukey (or direct) DFT per transformed dimension."""

from __future__ import annotations

import math

import numpy as np

from xlac.dtypes import tensor_type
from xlac.mlir import ir
from xlac.passes.base import ModulePass, PassFailure, module_ops
from xlac.passes.helper_calls import fresh_symbol, replace_with_call
from xlac.passes.lower.fft_codelet import twiddle_table
from xlac.passes.lower.fft_fast import PLANAR_BATCH, FastStage
from xlac.passes.lower.fft_plan import FAST_FROM, fast_plan, has_fast_path
from xlac.passes.lower.fft_stage_calls import declaration
from xlac.passes.lower.fft_stages import stage_plan
from xlac.record import record

_COMPLEX = "complex<f64>"


@record
class LowerFft(ModulePass):
    """Lower `stablehlo.fft` (FFT, IFFT, RFFT, IRFFT) to f64 DFTs per dimension.

    Why: upstream stablehlo-legalize-to-linalg has no FFT. A dimension whose
    length factors into radices <= 16 and a leaf <= 64 (or a prime <= 128)
    becomes the O(N log N) four-step Cooley-Tukey of fft_fast (small DFT
    matmuls, twiddle multiplies, transposes; RFFT/IRFFT of even lengths as
    half-length complex transforms (fft_real), odd ones through the complex
    transform); one with a prime factor > 128 is Bluestein's chirp-z, a
    convolution by two such transforms (fft_chirp, f64 between passes). Short
    ones (< 16) become one `linalg.generic` that sums x[n] * w[(n*k) mod N].
    The twiddles are exact f64 tables computed here (numpy). The arithmetic is
    f64 for every type (but a short last level of a single-precision plan);
    single precision on the fast path stores f32 between passes. IFFT/IRFFT divide once by the product of the lengths.

        %y = stablehlo.fft %x, type = FFT, length = [8]
      ->
        %y = call @xla_fft_0(%x)   // f64 convert, linalg.generic DFT, convert back
    """

    name = "xla-lower-fft"
    #: the Rader plans' stages call FFT micro-kernels (fft_kernel_text; the
    #: CPU's with micro-kernels on), not a codelet compiled in each program
    kernels: bool = False

    acts_on = frozenset({"stablehlo.fft"})

    def run(self, module: ir.Operation) -> None:
        for op in [op for op in module_ops(module) if op.name == "stablehlo.fft"]:
            name = fresh_symbol(module, "xla_fft")
            swapped = transposed_around(op)
            if swapped is None:
                fft, convert = _Fft.of(op, self.kernels), of_reals(op)
                if convert is None:
                    replace_with_call(module, op, fft.helper_text(name), name)
                    continue
                fft.operand = ir.RankedTensorType(convert.operands[0].type)
                replace_with_call(module, op, fft.helper_text(name), name,
                                  operands=[convert.operands[0]])
                convert.erase()
                continue
            source, before, after = swapped       # the leading axis of source, in place
            fft = _Fft.of(op, self.kernels)
            fft.operand, fft.result = ir.RankedTensorType(source.type), \
                ir.RankedTensorType(after.results[0].type)
            fft.leading = True
            replace_with_call(module, after, fft.helper_text(name), name, operands=[source])
            for dead in (op, *before):
                if not any(True for _ in dead.results[0].uses):
                    dead.erase()


@record(mutable=True)
class _Fft:
    kind: str                       # FFT, IFFT, RFFT, IRFFT
    lengths: list[int]
    operand: ir.RankedTensorType
    result: ir.RankedTensorType
    lines: list[str]
    # The stored precision between passes (f32 for single precision on the
    # fast path, see _stores_f32); the arithmetic (`compute`) is f64 always.
    real: str = "f64"
    compute: str = "f64"
    # IFFT/IRFFT's 1/N, until a transform's butterfly stages take it
    pending_scale: float = 1.0
    # a 1-D c2c transform of the operand's leading axis (transposed_around)
    leading: bool = False
    # the FFT micro-kernels the helper calls (None: the stages inline their codelets)
    kernels: set[str] | None = None

    @property
    def complex(self) -> str:
        return f"complex<{self.real}>"

    @staticmethod
    def of(op: ir.Operation, kernels: bool = False) -> _Fft:
        operand = ir.RankedTensorType(op.operands[0].type)
        result = ir.RankedTensorType(op.results[0].type)
        if not (operand.has_static_shape and result.has_static_shape):
            raise PassFailure(op.location, "stablehlo.fft with dynamic shapes is not "
                                           "supported; run stablehlo-refine-shapes first")
        kind = str(op.attributes["fft_type"]).split()[-1].rstrip(">")
        lengths = list(ir.DenseI64ArrayAttr(op.attributes["fft_length"]))
        if not 1 <= len(lengths) <= min(3, operand.rank) or min(lengths) < 1:
            raise PassFailure(op.location, f"stablehlo.fft: unsupported fft_length {lengths}")
        return _Fft(kind, lengths, operand, result, [], kernels=set() if kernels else None)

    def helper_text(self, name: str) -> str:
        if self._stores_f32():
            self.real = "f32"
        value, shape = self._widen("%arg", self.operand)
        rank, count = self.operand.rank, len(self.lengths)
        if self.kind in ("IFFT", "IRFFT"):
            self.pending_scale = 1.0 / math.prod(self.lengths)
        real_in = self.kind in ("FFT", "IFFT") and not str(self.operand.element_type).startswith("complex")
        if self.leading:
            value = self._complex_of(value, shape)
            value, shape = self._stage(value, shape, 0, "c2c", 1 if self.kind == "IFFT" else -1)
            if self.pending_scale != 1.0:
                value = self._scale(value, shape, math.prod(self.lengths))
            return self._text(name, self._narrow(value, shape))
        axes = list(range(rank - count, rank))
        if self.kind == "RFFT":    # real -> complex on the last axis first
            value, shape = self._stage(value, shape, axes[-1], "r2c", -1)
            axes = axes[:-1]
        last_c2r = self.kind == "IRFFT"
        for axis in (axes[:-1] if last_c2r else axes):
            value, shape = self._stage(value, shape, axis, "c2c",
                                       1 if self.kind in ("IFFT", "IRFFT") else -1, real_in)
            real_in = False
        if last_c2r:
            value, shape = self._stage(value, shape, axes[-1], "c2r", 1)
        if self.pending_scale != 1.0:       # no stage took it: a pass of its own
            value = self._scale(value, shape, math.prod(self.lengths))
        return self._text(name, self._narrow(value, shape))

    def _text(self, name: str, value: str) -> str:
        body = "\n  ".join(self.lines)
        kernels = "".join(declaration(k) + "\n" for k in sorted(self.kernels or ()))
        return (f"{kernels}func.func private @{name}(%arg: {self.operand}) -> {self.result} {{\n"
                f"  {body}\n  return {value} : {self.result}\n}}\n")

    def _complex_of(self, value: str, shape: list[int]) -> str:
        """A real operand (a convert's, taken over by transposed_around) as complex."""
        element = str(self.operand.element_type)
        if element.startswith("complex"):
            return value
        out = self._fresh("cplx")
        self._emit(f"{out} = stablehlo.convert {value} : ({_t(shape, self.real)}) -> "
                   f"{_t(shape, self.complex)}")
        return out

    def _stores_f32(self) -> bool:
        """Single precision with every axis on the fast path keeps f32 pairs
        between passes (half the bytes) and does each pass's arithmetic in
        f64, rounding once per pass: 0.3-0.6x XLA's error where f32
        arithmetic was 1.1-2.3x (docs/PERFORMANCE.md)."""
        single = "f32" in str(self.operand.element_type)
        return single and all(fast_plan(n) is not None for n in self.lengths)

    def _emit(self, *lines: str) -> None:
        self.lines.extend(lines)

    def _fresh(self, stem: str) -> str:
        return f"%{stem}{len(self.lines)}"

    def _widen(self, value: str, tensor: ir.RankedTensorType) -> tuple[str, list[int]]:
        """The operand in f64 (or complex<f64>)."""
        shape, element = list(tensor.shape), str(tensor.element_type)
        if element in (self.real, self.complex):
            return value, shape
        if element.startswith("complex"):
            return self._map_parts(value, shape, element, self.complex), shape
        wide = self._fresh("wide")
        self._emit(f"{wide} = stablehlo.convert {value} : ({_t(shape, element)}) -> "
                   f"{_t(shape, self.real)}")
        return wide, shape

    def _narrow(self, value: str, shape: list[int]) -> str:
        element = str(self.result.element_type)
        if element in (self.real, self.complex):
            return value
        if element.startswith("complex"):
            return self._map_parts(value, shape, self.complex, element)
        narrow = self._fresh("narrow")
        self._emit(f"{narrow} = stablehlo.convert {value} : ({_t(shape, self.real)}) -> "
                   f"{_t(shape, element)}")
        return narrow

    def _map_parts(self, value: str, shape: list[int], source: str, target: str,
                   divisor: int | None = None) -> str:
        """Convert (or divide) the real and imaginary parts separately: exact
        per part, unlike a complex division."""
        out = self._fresh("parts")
        real, imag = (self._map_part(value, shape, source, target, part, divisor, out)
                      for part in ("real", "imag"))
        self._emit(f"{out} = stablehlo.complex {real}, {imag} : {_t(shape, target)}")
        return out

    def _map_part(self, value: str, shape: list[int], source: str, target: str,
                  part: str, divisor: int | None, out: str) -> str:
        src, dst = _t(shape, source[8:-1]), _t(shape, target[8:-1])
        name = f"{out}_{part}"
        self._emit(f"{name} = stablehlo.{part} {value} : ({_t(shape, source)}) -> {src}")
        if divisor is not None:
            self._emit(f"{name}_n = stablehlo.constant dense<{float(divisor)!r}> : {src}",
                       f"{name}_d = stablehlo.divide {name}, {name}_n : {src}")
            name = f"{name}_d"
        if src != dst:
            self._emit(f"{name}_c = stablehlo.convert {name} : ({src}) -> {dst}")
            name = f"{name}_c"
        return name

    def _scale(self, value: str, shape: list[int], divisor: int) -> str:
        element = self.complex if self.kind == "IFFT" else self.real
        if element == self.complex:
            return self._map_parts(value, shape, self.complex, self.complex, divisor)
        out = self._fresh("scaled")
        self._emit(f"{out}_n = stablehlo.constant dense<{float(divisor)!r}> : {_t(shape, self.real)}",
                   f"{out} = stablehlo.divide {value}, {out}_n : {_t(shape, self.real)}")
        return out

    def _stage(self, value: str, shape: list[int], axis: int, kind: str,
               sign: int, real_in: bool = False) -> tuple[str, list[int]]:
        """One transform along ``axis``: Cooley-Tukey matmuls where the length
        factors into small radices (fft_fast), else the direct DFT. ``real_in``:
        a c2c transform of a real ``value`` (of_reals)."""
        size = self.lengths[axis - (len(shape) - len(self.lengths))]
        if real_in and not has_fast_path(size):
            value, real_in = self._complex_of(value, shape), False
        if has_fast_path(size):
            stage = FastStage(self._emit, self._fresh, twiddle_table, self.real, self.compute)
            stage.scale = self.pending_scale
            stage.declare = None if self.kernels is None else self.kernels.add
            out = stage.stage(value, shape, axis, kind, size, sign, real_in)
            if stage.scale == 1.0:          # taken (all else is linear: anywhere will do)
                self.pending_scale = 1.0
            return out
        return self._direct_stage(value, shape, axis, kind, size, sign)

    def _direct_stage(self, value: str, shape: list[int], axis: int, kind: str,
                      size: int, sign: int) -> tuple[str, list[int]]:
        """One DFT along ``axis``: out[.., k, ..] = sum_n in[.., n, ..] w[(n*k) mod N]."""
        n_out = {"r2c": size // 2 + 1, "c2r": size}.get(kind, size)
        out_shape = shape[:axis] + [n_out] + shape[axis + 1:]
        in_element = "f64" if kind == "r2c" else _COMPLEX
        out_element = "f64" if kind == "c2r" else _COMPLEX
        s = self._fresh("dft")
        cos, sin = _twiddles(size, sign)
        rank = len(shape)
        dims = ", ".join(f"d{i}" for i in range(rank))
        in_dims = ", ".join("n" if i == axis else f"d{i}" for i in range(rank))
        zero = ("complex.constant [0.0 : f64, 0.0 : f64] : complex<f64>"
                if out_element == _COMPLEX else "arith.constant 0.0 : f64")
        iterators = ", ".join(['"parallel"'] * rank + ['"reduction"'])
        out_type = _t(out_shape, out_element)
        self._emit(
            f"{s}_cos = arith.constant dense<{cos}> : tensor<{size}xf64>",
            f"{s}_sin = arith.constant dense<{sin}> : tensor<{size}xf64>",
            f"{s}_len = arith.constant {size} : index",
            f"{s}_zero = {zero}",
            f"{s}_empty = tensor.empty() : {out_type}",
            f"{s}_init = linalg.fill ins({s}_zero : {out_element}) outs({s}_empty : {out_type})"
            f" -> {out_type}",
            f"{s} = linalg.generic {{indexing_maps = [affine_map<({dims}, n) -> ({in_dims})>, "
            f"affine_map<({dims}, n) -> ({dims})>], iterator_types = [{iterators}]}} "
            f"ins({value} : {_t(shape, in_element)}) outs({s}_init : {out_type}) {{",
            f"^bb0(%x: {in_element}, %acc: {out_element}):",
            f"  %k = linalg.index {axis} : index",
            f"  %n = linalg.index {rank} : index",
            "  %nk = arith.muli %n, %k : index",
            f"  %m = arith.remui %nk, {s}_len : index",
            f"  %wr = tensor.extract {s}_cos[%m] : tensor<{size}xf64>",
            f"  %wi = tensor.extract {s}_sin[%m] : tensor<{size}xf64>",
            *_BODIES[kind](size),
            f"}} -> {out_type}")
        return s, out_shape


def transposed_around(op: ir.Operation):
    """``(source, [convert,] transpose, transpose)`` where a 1-D FFT/IFFT reads
    ``transpose(source)`` of a matrix (through a convert to complex, as jax
    writes ``fft(x, axis=0)`` of a real x) and its one user transposes it
    back: a transform of source's leading axis, which the butterfly stages
    run on source's own layout (FastStage.leading_axis, no transposes); None
    otherwise (or where that axis would not take the stages)."""
    fft = _Fft.of(op)
    if fft.kind not in ("FFT", "IFFT") or len(fft.lengths) != 1 or fft.operand.rank != 2:
        return None
    users = [use.owner.operation for use in op.results[0].uses]
    if len(users) != 1 or not _swaps(users[0]):
        return None
    chain, owner = [], _producer(op.operands[0])
    if owner is not None and owner.name == "stablehlo.convert":
        chain.append(owner)
        owner = _producer(owner.operands[0])
    if owner is None or not _swaps(owner):
        return None
    if any(sum(1 for _ in o.results[0].uses) != 1 for o in chain):
        return None
    size, batch = fft.operand.shape[1], fft.operand.shape[0]
    if size < FAST_FROM or batch < PLANAR_BATCH or stage_plan(size, batch * size) is None:
        return None
    return owner.operands[0], [*chain, owner], users[0]


def of_reals(op: ir.Operation) -> ir.Operation | None:
    """The convert of reals to complex (of the same precision) that FFT/IFFT
    ``op`` alone reads (jax's ``fft`` of a real array), or None. The lowering
    then builds its pairs from the reals and zeros: no complex tensor before
    the transform, none of the scalar loops complex values run in, and the
    module can go as part pairs (xla-complex-as-pairs takes no convert of
    reals): fft of 180 x 720 f64 spent ~40% of its time in them."""
    owner = _producer(op.operands[0])
    if owner is None or owner.name != "stablehlo.convert" or _Fft.of(op).kind not in ("FFT", "IFFT"):
        return None
    source = ir.RankedTensorType(owner.operands[0].type).element_type
    target = ir.RankedTensorType(owner.results[0].type).element_type
    if not isinstance(target, ir.ComplexType) or target.element_type != source:
        return None
    return owner if sum(1 for _ in owner.results[0].uses) == 1 else None


def _producer(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def _swaps(op) -> bool:
    return op.name == "stablehlo.transpose" and \
        list(ir.DenseI64ArrayAttr(op.attributes["permutation"])) == [1, 0]


def _t(shape: list[int], element: str) -> str:
    return tensor_type(shape, element)


def _twiddles(size: int, sign: int) -> tuple[str, str]:
    cos, sin = twiddle_table(size, sign)
    return _literal(cos), _literal(sin)


def _literal(values: np.ndarray) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def _c2c(size: int) -> list[str]:
    return ["  %w = complex.create %wr, %wi : complex<f64>",
            "  %p = complex.mul %x, %w : complex<f64>",
            "  %s = complex.add %acc, %p : complex<f64>",
            "  linalg.yield %s : complex<f64>"]


def _r2c(size: int) -> list[str]:
    return ["  %pr = arith.mulf %x, %wr : f64",
            "  %pi = arith.mulf %x, %wi : f64",
            "  %p = complex.create %pr, %pi : complex<f64>",
            "  %s = complex.add %acc, %p : complex<f64>",
            "  linalg.yield %s : complex<f64>"]


def _c2r(size: int) -> list[str]:
    """Re(X[n] w) counted twice for n with a conjugate partner X[size-n] that
    the input omits; X[0] and (even size) X[size/2] once."""
    single = "%is_first" if size % 2 else "%single_pair"
    return ["  %c0 = arith.constant 0 : index",
            f"  %half = arith.constant {size // 2} : index",
            "  %is_first = arith.cmpi eq, %n, %c0 : index",
            "  %is_half = arith.cmpi eq, %n, %half : index",
            "  %single_pair = arith.ori %is_first, %is_half : i1",
            "  %one = arith.constant 1.0 : f64",
            "  %two = arith.constant 2.0 : f64",
            f"  %weight = arith.select {single}, %one, %two : f64",
            "  %xr = complex.re %x : complex<f64>",
            "  %xi = complex.im %x : complex<f64>",
            "  %a = arith.mulf %xr, %wr : f64",
            "  %b = arith.mulf %xi, %wi : f64",
            "  %re = arith.subf %a, %b : f64",
            "  %t = arith.mulf %re, %weight : f64",
            "  %s = arith.addf %acc, %t : f64",
            "  linalg.yield %s : f64"]


_BODIES = {"c2c": _c2c, "r2c": _r2c, "c2r": _c2r}
