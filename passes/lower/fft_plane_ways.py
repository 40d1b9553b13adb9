"""The ways into and out of fft_stages' blocked planes, written in place.

Where the transforms are whole register blocks and padded only to move
their rows off powers of two (fft_stages.padded_batch), the transpose in
writes the first B columns of the padded (2N, wide) planes and a fill
zeroes the rest, where a stablehlo.pad copied the whole input first; the
transpose out writes the result's whole blocks and the rows past them
(RFFT's 2(M+1)) straight into it, where a transpose of the padded planes
was followed by a slice copy.
"""

from __future__ import annotations


class PlaneWays:
    """The transposes of PlanarStages (mixed into FastStage)."""

    def _side(self) -> int:
        """The register blocks' side of the planes' transposes."""
        return 16 if self.real == "f32" else 8

    def _planes_out(self, planes: str, shape: list[int], batch: int, count: int) -> str:
        """(rows, wide) planes -> their first ``count`` rows' first ``batch``
        columns transposed, (B, count): the whole register blocks in one
        transpose, the columns and rows past them in one each, all written
        in place (a transpose of the padded planes then a slice copied the
        result again: 26-35 us of rfft 256x1024)."""
        return self._in_pieces(planes, shape, count, batch)

    def _in_pieces(self, src: str, shape: list[int], count: int, batch: int) -> str:
        """src[:count, :batch] transposed, (batch, count): one transpose where
        that is all of src and whole blocks (or none); else the whole blocks
        in one, the columns and the rows past them in one each, in place.
        Unpadded planes of no whole blocks go so both ways: 14000 x 21 f32
        (c64 21 x 7000's way out) took 125 us in one transpose, 44 + 50 so;
        its way in 106 -> 74 + 17 at x86-64-v3, alike at the host."""
        rows, cols = self._whole(count), self._whole(batch)
        if shape == [count, batch] and (rows, cols) in ((count, batch), (0, 0)):
            return self._op("transpose", src, self._t(shape), self._t(shape[::-1]),
                            ", dims = [1, 0]")
        dest = self._fresh("tout")
        self._emit(f"{dest} = tensor.empty() : {self._t([batch, count])}")
        for r0, nr, c0, nc in ((0, rows, 0, cols), (0, count, cols, batch - cols),
                               (rows, count - rows, 0, cols)):
            dest = self._transposed_into(dest, [batch, count], src, shape, r0, nr, c0, nc)
        return dest

    def _padded_planes(self, rows: str, batch: int, wide: int, count: int) -> str:
        """(B, count) rows -> (count, wide) planes: transposes write columns
        0..B of the planes in place (the whole blocks, then the rest), a fill
        zeroes the others (a stablehlo.pad before them was a copy of the whole
        input, 25-36 us of rfft 256x1024 or fft 180x720)."""
        if wide == batch:
            return self._in_pieces(rows, [batch, count], batch, count)
        out, full, tail = self._fresh("tin"), self._t([count, wide]), self._t([count, wide - batch])
        self._emit(f"{out}_e = bufferization.alloc_tensor() : {full}",
                   f"{out}_z = arith.constant 0.0 : {self.real}",
                   f"{out}_t = tensor.extract_slice {out}_e[0, {batch}] [{count}, {wide - batch}] "
                   f"[1, 1] : {full} to {tail}",
                   f"{out}_f = linalg.fill ins({out}_z : {self.real}) outs({out}_t : {tail}) -> {tail}",
                   f"{out} = tensor.insert_slice {out}_f into {out}_e[0, {batch}] "
                   f"[{count}, {wide - batch}] [1, 1] : {tail} into {full}")
        dest, cols = out, self._whole(batch)
        for b0, nb in ((0, cols), (cols, batch - cols)):
            dest = self._transposed_into(dest, [count, wide], rows, [batch, count], b0, nb, 0, count)
        return dest

    def _whole(self, extent: int) -> int:
        return extent // self._side() * self._side()

    def _transposed_into(self, dest: str, dest_shape: list[int], src: str, src_shape: list[int],
                         r0: int, nr: int, c0: int, nc: int) -> str:
        """``dest`` with src[r0:r0+nr, c0:c0+nc] transposed into its [c0.., r0..]."""
        if not nr or not nc:
            return dest
        out, piece, part = self._fresh("tpart"), self._t([nr, nc]), self._t([nc, nr])
        full = self._t(dest_shape)
        self._emit(f"{out}_r = tensor.extract_slice {src}[{r0}, {c0}] [{nr}, {nc}] [1, 1] : "
                   f"{self._t(src_shape)} to {piece}",
                   f"{out}_s = tensor.extract_slice {dest}[{c0}, {r0}] [{nc}, {nr}] [1, 1] : "
                   f"{full} to {part}",
                   f"{out}_x = linalg.transpose ins({out}_r : {piece}) outs({out}_s : {part}) "
                   "permutation = [1, 0]",
                   f"{out} = tensor.insert_slice {out}_x into {dest}[{c0}, {r0}] [{nc}, {nr}] "
                   f"[1, 1] : {part} into {full}")
        return out
