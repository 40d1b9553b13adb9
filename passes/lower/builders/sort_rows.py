"""The loop over rows both sort kernels share (merge sort, radix sort).

Each row of the ``[rows, n]`` operands is copied into row 0 of a two-row
scratch per operand (``%in{k}``), sorted between the scratch's rows by the
kernel, and the row holding the result (``final``) copied out. ``parallel``:
the rows are an scf.forall (the CPU runs its iterations on its threads), each
with a scratch of its own, results inserted in parallel; else an scf.for
sharing one scratch (a target that maps scf.forall to nothing, CUDA). The
kernel's body goes between ``head`` and ``tail``; it must leave its sorted
scratch in ``%sorted#{k}``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.passes.helper_calls import tensor_type


@dataclass(frozen=True)
class RowLoop:
    elements: tuple[str, ...]   # each operand's element type, as MLIR text
    rows: int
    n: int
    parallel: bool

    @property
    def flat(self) -> list[str]:
        return [tensor_type([self.rows, self.n], e) for e in self.elements]

    @property
    def scratch(self) -> list[str]:
        return [tensor_type([2, self.n], e) for e in self.elements]

    def _row(self, k: int) -> str:
        return tensor_type([1, self.n], self.elements[k])

    def head(self) -> str:
        """The results' empties, the loop (``%res``, row ``%row``, results ``%o{k}``),
        the scratch and the row copied into it (``%in{k}``). Needs ``%c0``, ``%c1``
        and ``%rows`` defined before."""
        count, outs = len(self.elements), ", ".join(self.flat)
        lines = [f"  %e{k} = tensor.empty() : {t}" for k, t in enumerate(self.flat)]
        scratch = [f"%scratch{k} = tensor.empty() : {t}" for k, t in enumerate(self.scratch)]
        shared = ", ".join(f"%o{k} = %e{k}" for k in range(count))
        if self.parallel:
            lines.append(f"  %res:{count} = scf.forall (%row) in ({self.rows}) "
                         f"shared_outs({shared}) -> ({outs}) {{")
            lines += ["    " + line for line in scratch]
        else:
            lines += ["  " + line for line in scratch]
            lines.append(f"  %res:{count} = scf.for %row = %c0 to %rows step %c1 "
                         f"iter_args({shared}) -> ({outs}) {{")
        for k, (full, two) in enumerate(zip(self.flat, self.scratch)):
            lines.append(f"    %row{k} = tensor.extract_slice %a{k}[%row, 0] [1, {self.n}] [1, 1] "
                         f": {full} to {self._row(k)}")
            lines.append(f"    %in{k} = tensor.insert_slice %row{k} into %scratch{k}[0, 0] "
                         f"[1, {self.n}] [1, 1] : {self._row(k)} into {two}")
        return "\n".join(lines)

    def tail(self, final: str) -> str:
        """Row ``final`` of ``%sorted#{k}`` into the results; the loop closed; the return."""
        count = len(self.elements)
        lines = [f"    %done{k} = tensor.extract_slice %sorted#{k}[{final}, 0] [1, {self.n}] [1, 1] "
                 f": {two} to {self._row(k)}" for k, two in enumerate(self.scratch)]
        inserts = [f"%done{k} into %o{k}[%row, 0] [1, {self.n}] [1, 1] : {self._row(k)} into {full}"
                   for k, full in enumerate(self.flat)]
        if self.parallel:
            lines += ["    scf.forall.in_parallel {",
                      *(f"      tensor.parallel_insert_slice {insert}" for insert in inserts), "    }"]
        else:
            lines += [f"    %g{k} = tensor.insert_slice {insert}" for k, insert in enumerate(inserts)]
            lines.append(f"    scf.yield {', '.join(f'%g{k}' for k in range(count))} : "
                         f"{', '.join(self.flat)}")
        lines += ["  }", f"  return {', '.join(f'%res#{k}' for k in range(count))} : "
                         f"{', '.join(self.flat)}"]
        return "\n".join(lines)
