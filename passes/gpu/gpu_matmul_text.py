"""The matmul kernel of ``xla-gpu-kernels``: shared-memory tiles, register blocking.

Each 16x16-thread block computes a 64x64 tile of C (batch b = blockIdx.z).
K advances 16 at a time: the block stages A[64x16] (transposed, so a
thread's four rows are one broadcast read) and B[16x64] (from B's transpose
as A is staged, where the matmul reads a transposed copy) in shared memory,
then each thread accumulates its 4x4 outputs (rows ty + 16i, columns
tx + 16j: neighbouring threads touch neighbouring columns, so loads and
stores coalesce and shared reads are conflict-free) in registers. Edges are
bounds-checked only when a dimension is not a multiple of the tile.
"""

from __future__ import annotations

from xlac.passes.gpu.gpu_kernel_text import (
    Lines,
    call_body,
    carried_loop,
    guarded,
    helper,
    launch_header,
    load,
    placeholder,
    store,
)

TILE, DEPTH, SIDE = 64, 16, 16          # output tile, K step, threads per side
PER = TILE // SIDE                      # outputs per thread per side (4)


def matmul_kernel(name: str, memrefs: list[str], element: str, batch: int, m: int, n: int,
                  k: int, init: str = "", epilogue=None, b_transposed: bool = False) -> str:
    """Helper @name(%a0: A, %a1: B, %a2: C, ...) doing C += A . B (batched if batch > 0).

    ``b_transposed``: %a1 holds B's transpose (n x k, a weight or attention's K as
    stored): its tiles are staged as A's are, rows of k read along, and transposed
    into shared memory, so no kernel transposes it first.

    ``init``: C's value before (an arith.constant attribute's text) when its fill was
    folded in: C = init + A . B, and C is not read. ``epilogue`` (matmul_epilogue.py):
    each new C value goes through ``@name_body`` (the epilogue's region) with the
    epilogue's other inputs (helper arguments after C), its result stored to C.
    """
    shared = f"memref<{DEPTH}x{TILE}x{element}, #gpu.address_space<workgroup>>"
    grid = (-(-n // TILE), -(-m // TILE), max(batch, 1))
    lines = launch_header(grid, (SIDE, SIDE, 1), [f"%as : {shared}", f"%bs : {shared}"])
    body = Lines()
    lead = ["%bz"] if batch else []
    tile = body.const(TILE)
    row0 = body.op(f"arith.muli %by, {tile} : index")
    col0 = body.op(f"arith.muli %bx, {tile} : index")
    thread = body.op(f"arith.addi {body.op(f'arith.muli %ty, {body.const(SIDE)} : index')}, %tx : index")
    zero = body.const("0.0", element)
    sizes = {"m": body.const(m), "n": body.const(n), "k": body.const(k)}
    ragged = {"m": m % TILE != 0, "n": n % TILE != 0, "k": k % DEPTH != 0}
    types = [element] * (PER * PER)

    def k_step(step: Lines, k0: str, accs: list[str]) -> list[str]:
        _stage(step, "%a0", memrefs[0], lead, thread, row0, k0, (TILE, DEPTH), "m", "k",
               "%as", shared, True, zero, sizes, ragged)
        if b_transposed:
            _stage(step, "%a1", memrefs[1], lead, thread, col0, k0, (TILE, DEPTH), "n", "k",
                   "%bs", shared, True, zero, sizes, ragged)
        else:
            _stage(step, "%a1", memrefs[1], lead, thread, k0, col0, (DEPTH, TILE), "k", "n",
                   "%bs", shared, False, zero, sizes, ragged)
        step.add("gpu.barrier")
        inner = _accumulate(step, accs, shared, element)
        step.add("gpu.barrier")
        return inner

    bounds = (body.const(0), sizes["k"], body.const(DEPTH))
    result = carried_loop(body, bounds, [zero] * len(types), types, k_step)
    for i in range(PER):
        for j in range(PER):
            _write(body, result[i * PER + j], memrefs[2], lead, row0, col0, i, j,
                   element, sizes, ragged, init, (name, epilogue))
    return helper(name, memrefs, lines + body.lines + ["gpu.terminator", "}"])


def _stage(body: Lines, source: str, memref: str, lead: list[str], thread: str,
           row_base: str, col_base: str, shape: tuple[int, int], row_dim: str, col_dim: str,
           target: str, shared: str, transpose: bool, zero: str, sizes: dict, ragged: dict) -> None:
    """Copy a rows x cols tile of ``source`` at (row_base, col_base) into shared memory."""
    rows, cols = shape
    for r in range(rows * cols // (SIDE * SIDE)):
        index = body.op(f"arith.addi {thread}, {body.const(r * SIDE * SIDE)} : index")
        row = body.op(f"arith.divui {index}, {body.const(cols)} : index")
        col = body.op(f"arith.remui {index}, {body.const(cols)} : index")
        at_row = body.op(f"arith.addi {row_base}, {row} : index")
        at_col = body.op(f"arith.addi {col_base}, {col} : index")
        where = ", ".join(lead + [at_row, at_col])
        checks = [(at_row, row_dim), (at_col, col_dim)]
        value = _checked_load(body, f"memref.load {source}[{where}] : {memref}", checks,
                              zero, sizes, ragged, memref)
        slot = f"{col}, {row}" if transpose else f"{row}, {col}"
        body.add(f"memref.store {value}, {target}[{slot}] : {shared}")


def _checked_load(body: Lines, load: str, checks, zero: str, sizes: dict, ragged: dict,
                  memref: str) -> str:
    conditions = [body.op(f"arith.cmpi ult, {value}, {sizes[dim]} : index")
                  for value, dim in checks if ragged[dim]]
    if not conditions:
        return body.op(load)
    inside = conditions[0]
    for other in conditions[1:]:
        inside = body.op(f"arith.andi {inside}, {other} : i1")
    element = memref.split(",")[0].rsplit("x", 1)[1].rstrip(">")   # a layout may follow
    value = body.fresh("ld")
    body.add(f"{value} = scf.if {inside} -> ({element}) {{")
    then = body.nested()
    then.add(f"scf.yield {then.op(load)} : {element}")
    body.lines += then.lines
    body.add(f"}} else {{\nscf.yield {zero} : {element}\n}}")
    return value


def _accumulate(body: Lines, accs: list[str], shared: str, element: str) -> list[str]:
    """The 4x4 register tile over the 16 staged k: acc[i][j] += a[i] * b[j]."""
    types = [element] * len(accs)

    def kk_step(loop: Lines, kk: str, carried: list[str]) -> list[str]:
        a = [loop.op(f"memref.load %as[{kk}, {loop.op(f'arith.addi %ty, {loop.const(SIDE * i)} : index')}]"
                     f" : {shared}") for i in range(PER)]
        b = [loop.op(f"memref.load %bs[{kk}, {loop.op(f'arith.addi %tx, {loop.const(SIDE * j)} : index')}]"
                     f" : {shared}") for j in range(PER)]
        return [loop.op(f"math.fma {a[i]}, {b[j]}, {carried[i * PER + j]} : {element}")
                for i in range(PER) for j in range(PER)]

    bounds = (body.const(0), body.const(DEPTH), body.const(1))
    return carried_loop(body, bounds, accs, types, kk_step)


def _write(body: Lines, value: str, memref: str, lead: list[str], row0: str, col0: str,
           i: int, j: int, element: str, sizes: dict, ragged: dict, init: str,
           named_epilogue=("", None)) -> None:
    row = body.op(f"arith.addi {row0}, {body.op(f'arith.addi %ty, {body.const(SIDE * i)} : index')} : index")
    col = body.op(f"arith.addi {col0}, {body.op(f'arith.addi %tx, {body.const(SIDE * j)} : index')} : index")
    where = ", ".join(lead + [row, col])
    update = body.nested()
    old = update.op(f"arith.constant {init}" if init else f"memref.load %a2[{where}] : {memref}")
    total = update.op(f"arith.addf {old}, {value} : {element}")
    name, epilogue = named_epilogue
    if epilogue is None:
        update.add(f"memref.store {total}, %a2[{where}] : {memref}")
    else:
        _apply_epilogue(update, name, epilogue, total, lead + [row, col])
    conditions = [body.op(f"arith.cmpi ult, {v}, {sizes[d]} : index")
                  for v, d in ((row, "m"), (col, "n")) if ragged[d]]
    if not conditions:
        body.lines += update.lines
        return
    inside = conditions[0] if len(conditions) == 1 else body.op(
        f"arith.andi {conditions[0]}, {conditions[1]} : i1")
    guarded(body, inside, update)


def _apply_epilogue(body: Lines, name: str, epilogue, total: str, dims: list[str]) -> None:
    """Store ``@name_body(inputs at dims, C's new value among them)`` to the epilogue's output."""
    *inputs, out = epilogue.operands
    args = [total if k == epilogue.c_input else load(body, operand, dims)
            for k, operand in enumerate(inputs)]
    (result,) = call_body(body, name, args + [placeholder(body, out.element)],
                          [operand.element for operand in epilogue.operands], [out.element])
    store(body, result, out, dims)
