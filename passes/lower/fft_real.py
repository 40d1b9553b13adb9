"""Real-input FFTs of even length N as complex FFTs of length N/2 (fft_fast).

Why: RFFT through the complex transform of (x, 0) does twice the work. The
classic packing instead reads x as N/2 complex values z[n] = x[2n] + i*x[2n+1]
(in FastStage's pair layout that is only a reshape), transforms those, and
separates the spectra of the even and odd samples with one elementwise pass:
  X[k] = (Z[k] + conj(Z[M-k])) / 2 + W_N^k * (Z[k] - conj(Z[M-k])) / (2i),
for k = 0..M (M = N/2, Z[M] = Z[0]). IRFFT runs it backwards:
  Z'[k] = (X[k] + conj(X[M-k])) + i * W_N^-k * (X[k] - conj(X[M-k])),
whose unnormalized length-M inverse is N * (x[2n] + i*x[2n+1]): the
helper's one division by N then gives x.
Each output is linear in (Re, Im) of the two inputs with per-k coefficients
(exact f64 tables, rounded once), so the pass is a*P + swap(a)*Q + b*R +
swap(b)*S on pairs: every operand used once, one fused loop.
"""

from __future__ import annotations

import functools

import numpy as np

from xlac.passes.lower.fft_stages import MAX_STAGE_RADIX

#: The split's and merge's products and their pairs' sums may fuse (FMA): two
#: multiplies and two fused multiply-adds where there were four and three
#: adds (in f64, rounded once to f32 after: the same error; rfft 256 x 1024's
#: split 111 -> 100 us, irfft 240 x 540's merge 75 -> 65, docs/PERFORMANCE.md).
FUSED = " fastmath<contract>"


def size_of(tables) -> int:
    """The rows of split/merge coefficient tables."""
    return len(tables[0][0])


class RealSpectrum:
    """The half-length RFFT / IRFFT of FastStage (mixed into it)."""

    def half_length(self, flat: str, batch: int, kind: str, size: int, sign: int) -> str:
        """(B, N) real -> (B, M+1) complex (r2c) or (B, M+1) complex -> (B, N) real (c2r)."""
        half = size // 2
        if kind == "r2c":
            z = self._reshape(flat, [batch, half, 2], self.real, [batch, size])
            plan = self._planar_plan(batch, half)
            if plan is not None:              # the split on the planes, before the way out
                after = functools.partial(self._split_planes, size=size, sign=sign)
                spectrum = self.planar(z, batch, half, sign, plan, after)
                return self._from_pairs(spectrum, batch, half + 1, half + 1, self.complex)
            z = self._transform(z, batch, half, sign)
            spectrum = self._split_spectrum(z, batch, size, sign)
            return self._from_pairs(spectrum, batch, half + 1, half + 1, self.complex)
        pairs = self._to_pairs(flat, batch, half + 1, "c2c", half + 1)
        plan, wide = self.stages_of(batch, half), self._merged_planes(batch, half)
        if plan is not None:                  # the merge on the planes, after the way in
            if wide is None:
                planes = self._op("transpose", pairs, self._t([batch, half + 1, 2]),
                                  self._t([half + 1, 2, batch]), ", dims = [1, 2, 0]")
            else:
                rows = self._reshape(pairs, [batch, 2 * half + 2], self.real, [batch, half + 1, 2])
                planes = self._reshape(self._padded_planes(rows, batch, wide, 2 * half + 2),
                                       [half + 1, 2, wide], self.real, [2 * half + 2, wide])
            dest = self._fresh("rmerge")
            self._emit(f"{dest} = tensor.empty() : {self._t([half, 2, wide or batch])}")
            dest = self._split_rows(dest, (planes, half + 1), 0, half,
                                    self._merge_tables(size, sign), half, wide or batch, wrap=False)
            scale, self.scale = self.scale, 1.0
            if wide is None:
                z = self._gathered(None, batch, half, sign, plan, scale, planes=dest)
            else:
                dest = self._reshape(dest, [2 * half, wide], self.real, [half, 2, wide])
                z = self.stages_out(dest, batch, wide, half, sign, plan, scale)[0]
        else:
            z = self._merge_spectrum(pairs, batch, size, sign)
            z = self._transform(z, batch, half, sign)
        return self._reshape(z, [batch, size], self.real, [batch, half, 2])

    def _planar_plan(self, batch: int, half: int) -> list[int] | None:
        """The stages of _transform for the split on the planes (planar's
        blocked path, or its 2-D transposes where they gather), else None.
        Where they gather, a prime stage (> 16) goes last, the one computed
        in f32 (228 x 1140: the 19-point stage 226 -> 113 us, first in f64)."""
        plan = self.stages_of(batch, half)
        if plan is None or self.blocked_planes(batch, half) is not None:
            return plan
        return sorted(plan, key=lambda r: r > MAX_STAGE_RADIX)

    def _merged_planes(self, batch: int, half: int) -> int | None:
        """IRFFT's planes where its ways in and out transpose whole blocks of
        transforms (padded, or 2M+2 and 2M rows ragged: their last rows a
        transpose of their own), else None (gathered)."""
        wide = self.blocked_planes(batch, half)
        return wide if wide is not None or batch % self._side() else batch

    def _split_planes(self, planes: str, wide: int, size: int, sign: int) -> tuple[str, int, int]:
        """_split_spectrum on Z's planes (2M, B) -> X's (2(M+1), B) in (2(M+R),
        B) (R rows more, a register block: the transpose out in whole blocks;
        1026 rows gathered, 0.67 ms against 0.10): Z[k] and Z[(M-k) mod M]
        are whole rows (reads along the B transforms, the mirror a row
        index): a generic for k < M, Z[k] read in order (its bytes counted:
        the threads take it), and one for the row k = M (Z[M] = Z[0])."""
        half = size // 2
        src = self._reshape(planes, [half, 2, wide], self.real, [2 * half, wide])
        cos, sin = self._twiddles(size, sign)
        c, s = cos[: half + 1] / 2, sin[: half + 1] / 2
        tables = ([0.5 + s, 0.5 + s], [c, -c], [0.5 - s, s - 0.5], [c, c])
        rows_out = half + (8 if self.real == "f32" else 4)
        dest = self._fresh("rsplit")
        self._emit(f"{dest} = tensor.empty() : {self._t([rows_out, 2, wide])}")
        for start, count in ((0, half), (half, 1)):
            dest = self._split_rows(dest, (src, half), start, count, tables, rows_out, wide)
        return self._reshape(dest, [2 * rows_out, wide], self.real, [rows_out, 2, wide]), \
            half + 1, rows_out

    def _split_rows(self, dest: str, source: tuple[str, int], start: int, count: int, tables,
                    rows_out: int, wide: int, wrap: bool = True) -> str:
        """X's rows start.. start+count into ``dest``'s: X = a*P + swap(a)*Q +
        b*R + swap(b)*S, a = Z[k mod M] read in order, b = Z[(M-k) mod M]
        through tensor.extract (a row index: contiguous vector loads); ``source``
        (Z, its rows); without ``wrap``, b = Z[M-k] (IRFFT's X, M+1 rows)."""
        ct, real, half = self.compute, self.real, size_of(tables) - 1 if wrap else size_of(tables)
        src, src_rows = source
        out, shape = self._fresh("xrows"), [count, wide]
        lane, t_row, whole = self._t(shape), self._t([count], ct), self._t([src_rows, 2, wide])
        table_names = []
        for name, table in zip("pqrs", tables):
            for part in range(2):
                values = np.asarray(table[part])[start:start + count]
                self._emit(f"{out}_{name}{part} = arith.constant dense<{self._hex(values)}> : {t_row}")
                table_names.append(f"{out}_{name}{part}")
        padded = self._t([rows_out, 2, wide])
        ins, outs = [], []
        for part in range(2):
            self._emit(f"{out}_a{part} = tensor.extract_slice {src}[0, {part}, 0] [{count}, 1, "
                       f"{wide}] [1, 1, 1] : {whole} to {lane}",
                       f"{out}_o{part} = tensor.extract_slice {dest}[{start}, {part}, 0] [{count}, "
                       f"1, {wide}] [1, 1, 1] : {padded} to {lane}")
            ins.append(f"{out}_a{part}")
            outs.append(f"{out}_o{part}")
        full, row = "affine_map<(k, b) -> (k, b)>", "affine_map<(k, b) -> (k)>"
        lines = [f"{out}:2 = linalg.generic {{indexing_maps = [{full}, {full}, "
                 f"{', '.join([row] * 8)}, {full}, {full}], iterator_types = "
                 f"[\"parallel\", \"parallel\"]}} ins({', '.join(ins + table_names)} : "
                 f"{lane}, {lane}, {', '.join([t_row] * 8)}) outs({', '.join(outs)} : "
                 f"{lane}, {lane}) {{",
                 f"^bb0(%ar: {real}, %ai: {real}, "
                 + ", ".join(f"%{n}{p}: {ct}" for n in "pqrs" for p in range(2))
                 + f", %o0: {real}, %o1: {real}):"]
        body = ["%k = linalg.index 0 : index", "%b = linalg.index 1 : index",
                "%i0 = arith.constant 0 : index", "%i1 = arith.constant 1 : index",
                f"%im = arith.constant {half} : index", f"%top = arith.constant {half - start} : index",
                "%mk = arith.subi %top, %k : index", "%wrap = arith.cmpi eq, %mk, %im : index",
                "%kb = arith.select %wrap, %i0, %mk : index" if wrap else   # (M-k) mod M
                "%kb = arith.addi %mk, %i0 : index",
                f"%br = tensor.extract {src}[%kb, %i0, %b] : {whole}",
                f"%bi = tensor.extract {src}[%kb, %i1, %b] : {whole}"]
        wide_of = {v: f"%{v}" for v in ("ar", "ai", "br", "bi")}
        if ct != real:
            for v in wide_of:
                body.append(f"%{v}w = arith.extf %{v} : {real} to {ct}")
                wide_of[v] = f"%{v}w"
        results = []
        for part, (x, sx, y, sy) in enumerate((("ar", "ai", "br", "bi"), ("ai", "ar", "bi", "br"))):
            terms = []
            for name, v in zip("pqrs", (x, sx, y, sy)):
                body.append(f"%{name}t{part} = arith.mulf {wide_of[v]}, %{name}{part}{FUSED} : {ct}")
                terms.append(f"%{name}t{part}")
            body += [f"%u{part} = arith.addf {terms[0]}, {terms[1]}{FUSED} : {ct}",
                     f"%v{part} = arith.addf {terms[2]}, {terms[3]}{FUSED} : {ct}",
                     f"%y{part} = arith.addf %u{part}, %v{part} : {ct}"]
            if ct != real:
                body.append(f"%z{part} = arith.truncf %y{part} : {ct} to {real}")
            results.append(f"%z{part}" if ct != real else f"%y{part}")
        lines += ["  " + line for line in body]
        lines += [f"  linalg.yield {', '.join(results)} : {real}, {real}",
                  f"}} -> ({lane}, {lane})"]
        for part in range(2):
            nxt = f"{out}_i{part}"
            lines.append(f"{nxt} = tensor.insert_slice {out}#{part} into {dest}[{start}, {part}, 0] "
                         f"[{count}, 1, {wide}] [1, 1, 1] : {lane} into {padded}")
            dest = nxt
        self._emit(*lines)
        return dest

    def _split_spectrum(self, z: str, batch: int, size: int, sign: int) -> str:
        """Z (B, M, 2) -> X[k] for k = 0..M (B, M+1, 2)."""
        half = size // 2
        first = self._slice(z, [batch, half, 2], [0, 0, 0], [batch, 1, 2])
        shape = [batch, half + 1, 2]
        ext = self._fresh("zext")
        self._emit(f"{ext} = stablehlo.concatenate {z}, {first}, dim = 1 : "
                   f"({self._t([batch, half, 2])}, {self._t([batch, 1, 2])}) -> {self._t(shape)}")
        a = self._convert(ext, shape, self.real, self.compute)
        cos, sin = self._twiddles(size, sign)
        c, s = cos[: half + 1] / 2, sin[: half + 1] / 2
        tables = ([0.5 + s, 0.5 + s], [c, -c], [0.5 - s, s - 0.5], [c, c])
        return self._narrow(self._combine(a, shape, tables), shape)

    def _merge_spectrum(self, pairs: str, batch: int, size: int, sign: int) -> str:
        """X (B, M+1, 2) -> Z' (B, M, 2); the imaginary parts of X[0] and X[M]
        are ignored (as numpy's and pocketfft's irfft), their coefficients 0."""
        half = size // 2
        x = self._convert(pairs, [batch, half + 1, 2], self.real, self.compute)
        shape = [batch, half, 2]
        head = self._slice(x, [batch, half + 1, 2], [0, 0, 0], shape, self.compute)
        z = self._combine(head, shape, self._merge_tables(size, sign),
                          mirror_of=(x, [batch, half + 1, 2]))
        return self._narrow(z, shape)

    def _merge_tables(self, size: int, sign: int):
        """_merge_spectrum's (P, Q, R, S), each (real part's, imaginary part's)."""
        half = size // 2
        cos, sin = self._twiddles(size, sign)
        c, s = cos[:half], sin[:half]
        p, q, r, t = [1 - s, 1 - s], [-c, c], [1 + s, -(1 + s)], [-c, -c]
        p[1], q[0], r[1], t[0] = (np.where(np.arange(half) == 0, 0.0, v)
                                  for v in (p[1], q[0], r[1], t[0]))
        return p, q, r, t

    def _term(self, a: str, shape: list[int], name: str, mirror_of) -> str:
        """a, swap(a), b or swap(b), each its own reverse of the source (a
        reverse read twice would be materialized, not fused)."""
        ct = self.compute
        dims = {"p": [], "q": [2], "r": [1], "s": [1, 2]}[name]
        source, source_shape = (a, shape) if name in "pq" or mirror_of is None else mirror_of
        if not dims:
            return a
        if source_shape != shape:                 # b[k] = x[M-k] for k < M: x[1:] reversed
            source = self._slice(source, source_shape, [0, 1, 0], source_shape, ct)
        st = self._t(shape, ct)
        return self._op("reverse", source, st, st, f", dims = {dims}")

    def _combine(self, a: str, shape: list[int], tables, mirror_of=None) -> str:
        """a*P + swap(a)*Q + b*R + swap(b)*S with b[k] = a[M-k] (``a`` of M+1
        rows) or, with ``mirror_of`` = (x, its shape), b[k] = x[M-k] for k < M."""
        ct = self.compute
        tp = self._t(shape, ct)
        terms = []
        for name, table in zip("pqrs", tables):
            value = self._term(a, shape, name, mirror_of)
            coef = self._fresh(f"k{name}")
            rows = [shape[1], 2]
            data = np.stack([np.asarray(table[0]), np.asarray(table[1])], -1)
            self._emit(f"{coef}_0 = stablehlo.constant dense<{self._hex(data)}> : "
                       f"{self._t(rows, ct)}",
                       f"{coef} = stablehlo.broadcast_in_dim {coef}_0, dims = [1, 2] : "
                       f"({self._t(rows, ct)}) -> {tp}",
                       f"{coef}_x = stablehlo.multiply {value}, {coef} : {tp}")
            terms.append(f"{coef}_x")
        total = terms[0]
        for term in terms[1:]:
            out = self._fresh("sum")
            self._emit(f"{out} = stablehlo.add {total}, {term} : {tp}")
            total = out
        return total
