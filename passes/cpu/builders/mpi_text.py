"""The text of xla-collectives-to-mpi: the shim's C ABI as MLIR declarations,
a body per collective, the communicator globals and ``@__xlac_init``.

The codes below are the shim's (``enum`` in python/xlac/spmd/xlac_mpi.c);
a test checks that the two agree.
"""

from __future__ import annotations

import math

from xlac.passes.base import PassFailure

DTYPE_CODES = {"f32": 0, "f64": 1, "f16": 2, "bf16": 3, "i8": 4, "i16": 5, "i32": 6, "i64": 7,
               "ui8": 8, "ui16": 9, "ui32": 10, "ui64": 11, "i1": 12, "complex<f32>": 13,
               "complex<f64>": 14}
BYTES_CODE = 15        # any other element type (one byte each in memory): moved, never reduced
OP_CODES = {"add": 0, "mul": 1, "min": 2, "max": 3, "and": 4, "or": 5, "xor": 6}

SHIM_DECLARATIONS = """\
  func.func private @xlac_mpi_comm_create(!llvm.ptr, i64, i64) -> i32
  func.func private @xlac_mpi_all_reduce(i32, !llvm.ptr, !llvm.ptr, i64, i32, i32)
  func.func private @xlac_mpi_all_gather(i32, !llvm.ptr, !llvm.ptr, i64, i32)
  func.func private @xlac_mpi_reduce_scatter(i32, !llvm.ptr, !llvm.ptr, i64, i32, i32)
  func.func private @xlac_mpi_all_to_all(i32, !llvm.ptr, !llvm.ptr, i64, i32)
  func.func private @xlac_mpi_collective_permute(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr, i64)
  func.func private @xlac_mpi_collective_broadcast(i32, !llvm.ptr, !llvm.ptr, i64, i32)
  func.func private @xlac_mpi_world_rank() -> i32
  func.func private @xlac_mpi_all_reduce_start(i32, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
  func.func private @xlac_mpi_all_gather_start(i32, !llvm.ptr, !llvm.ptr, i64, i32) -> i32
  func.func private @xlac_mpi_reduce_scatter_start(i32, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> i32
  func.func private @xlac_mpi_all_to_all_start(i32, !llvm.ptr, !llvm.ptr, i64, i32) -> i32
  func.func private @xlac_mpi_collective_permute_start(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr, i64) -> i32
  func.func private @xlac_mpi_collective_broadcast_start(i32, !llvm.ptr, !llvm.ptr, i64, i32) -> i32
  func.func private @xlac_mpi_wait(i32)
"""

_REDUCING = ("all_reduce", "reduce_scatter")


class MpiModule:
    """Collects the communicator slots (one per distinct group set) and the
    constant tables while the bodies are written."""

    def __init__(self, partitions: int = 1):
        self.partitions = partitions          # rank = replica * partitions + partition
        self.slots: dict[tuple, int] = {}
        self.tables: list[str] = []

    def slot(self, groups: list[list[int]]) -> int:
        key = tuple(tuple(g) for g in groups)
        if key not in self.slots:
            self.slots[key] = len(self.slots)
        return self.slots[key]

    def table(self, rows: list[list[int]], width: int) -> tuple[str, str]:
        """(symbol, memref type) of a constant i64 table."""
        name = f"__xlac_table_{len(self.tables)}"
        mtype = f"memref<{len(rows)}x{width}xi64>"
        body = str([[int(x) for x in row] for row in rows]) if rows else ""
        self.tables.append(f'  memref.global "private" constant @{name} : {mtype} = dense<{body}>\n')
        return name, mtype

    def body(self, name: str, d: dict) -> str:
        """A private function @name(send?, recv) calling the shim; a started
        collective's start returns the shim's handle, its done waits for it."""
        kind, element, phase = d["kind"], d["element"], d.get("phase", "")
        params = ", ".join(f"%b{i}: {t}" for i, t in enumerate(d["types"]))
        lines = []
        if phase == "done":                         # (handle, operand, recv): wait
            lines += ["func.call @xlac_mpi_wait(%b0) : (i32) -> ()"]
        elif kind in ("replica_id", "partition_id"):
            split = "arith.remui" if kind == "partition_id" else "arith.divui"
            lines += ["%rank = func.call @xlac_mpi_world_rank() : () -> i32",
                      f"%p = arith.constant {self.partitions} : i32",
                      f"%id = {split} %rank, %p : i32",
                      f"memref.store %id, %b0[] : {d['types'][0]}"]
        else:
            lines += _pointer("s", "%b0", d["types"][0]) + _pointer("r", "%b1", d["types"][1])
            lines += self._call(kind, element, d, started=phase == "start")
        text = "\n    ".join(lines)
        if phase == "start":
            return (f"  func.func private @{name}({params}) -> i32 {{\n    {text}\n"
                    "    return %q : i32\n  }\n")
        return f"  func.func private @{name}({params}) {{\n    {text}\n    return\n  }}\n"

    def _call(self, kind: str, element: str, d: dict, started: bool = False) -> list[str]:
        """The shim call: blocking, or (``started``) the start, whose handle is %q."""
        call = f"%q = func.call @xlac_mpi_{kind}_start" if started else f"func.call @xlac_mpi_{kind}"
        result = "i32" if started else "()"
        code = _dtype_code(element, kind, d)
        count = math.prod(d["buffers"][1] if kind == "reduce_scatter" else d["buffers"][0])
        if kind == "all_to_all":                 # elements per block: one block per member
            count //= len(d["groups"][0])
        lines = [f"%n = arith.constant {count} : i64", f"%t = arith.constant {code} : i32"]
        if kind == "collective_permute":
            table, mtype = self.table(d["pairs"], 2)
            lines += [f"%pairs = memref.get_global @{table} : {mtype}"] + _pointer("p", "%pairs", mtype)
            lines += [f"%np = arith.constant {len(d['pairs'])} : i64",
                      f"{call}(%sp, %rp, %n, %t, %pp, %np) : "
                      f"(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr, i64) -> {result}"]
            return lines
        slot = self.slot(d["groups"])
        lines += [f"%cg = memref.get_global @__xlac_comm_{slot} : memref<i32>",
                  "%c = memref.load %cg[] : memref<i32>"]
        if kind in _REDUCING:
            lines += [f"%o = arith.constant {OP_CODES[d['reduction']]} : i32",
                      f"{call}(%c, %sp, %rp, %n, %t, %o) : "
                      f"(i32, !llvm.ptr, !llvm.ptr, i64, i32, i32) -> {result}"]
        else:
            lines += [f"{call}(%c, %sp, %rp, %n, %t) : "
                      f"(i32, !llvm.ptr, !llvm.ptr, i64, i32) -> {result}"]
        return lines

    def globals_text(self) -> str:
        slots = "".join(f'  memref.global "private" @__xlac_comm_{k} : memref<i32> = dense<-1>\n'
                        for k in self.slots.values())
        return slots + "".join(self.tables)

    def init_text(self) -> str:
        """``@__xlac_init``: one MPI communicator per group set, collectively."""
        lines = []
        for groups, k in self.slots.items():
            table, mtype = self.table([list(g) for g in groups], len(groups[0]))
            lines += [f"%g{k} = memref.get_global @{table} : {mtype}"]
            lines += _pointer(f"g{k}", f"%g{k}", mtype)
            lines += [f"%n{k} = arith.constant {len(groups)} : i64",
                      f"%s{k} = arith.constant {len(groups[0])} : i64",
                      f"%slot{k} = func.call @xlac_mpi_comm_create(%g{k}p, %n{k}, %s{k}) : "
                      "(!llvm.ptr, i64, i64) -> i32",
                      f"%cg{k} = memref.get_global @__xlac_comm_{k} : memref<i32>",
                      f"memref.store %slot{k}, %cg{k}[] : memref<i32>"]
        body = "".join(f"    {line}\n" for line in lines)
        return f"  func.func @__xlac_init() {{\n{body}    return\n  }}\n"


def _pointer(prefix: str, value: str, mtype: str) -> list[str]:
    return [f"%{prefix}i = memref.extract_aligned_pointer_as_index {value} : {mtype} -> index",
            f"%{prefix}l = arith.index_cast %{prefix}i : index to i64",
            f"%{prefix}p = llvm.inttoptr %{prefix}l : i64 to !llvm.ptr"]


def _dtype_code(element: str, kind: str, d: dict) -> int:
    if element in DTYPE_CODES:
        return DTYPE_CODES[element]
    if kind in _REDUCING:
        raise PassFailure(d["location"], f"'{kind}' of {element}: MPI cannot reduce this "
                          "element type; convert to f32 (or a wider integer) first")
    return BYTES_CODE
