"""MLIR text of xlac's CUDA kernels, one ``gpu.launch`` per helper function.

Each emitter returns the body lines of a helper ``func.func`` whose arguments
are named ``%a0 .. %aN`` (the linalg op's operands, then its captures
``%cap0 ..``) and whose region computation is ``@<name>_body``: the pass
(``xla-gpu-kernels``) parses the text, moves the op's region into the body
function and calls the helper in place of the op; ``inline`` then folds both
into the host function, where ``gpu-kernel-outlining`` makes them kernels.

Three shapes of kernel, as XLA's GPU emitters have:

* loop: one thread per element of the iteration space, 1-D grid of
  256-thread blocks (the innermost dimension on consecutive threads, so
  loads and stores coalesce); 16 bytes a thread where aligned
  (gpu_kernel_vector.py); transposes through shared tiles (gpu_kernel_transpose.py);
* reduction: one block per output element (optionally split over several
  blocks, then a second launch combines the partial results); each thread
  folds a strided slice of the reduced elements in a register, then the
  block combines its threads with warp shuffles and shared memory (column
  reductions: outputs on threads, gpu_kernel_columns.py);
* matmul: 64x64 output tiles, K in steps of 16 staged through shared
  memory, 4x4 outputs per thread in registers.
"""

from __future__ import annotations

from dataclasses import dataclass

THREADS = 256
WARP = 32


@dataclass(frozen=True)
class Operand:
    """One operand of the op as the kernel sees it: ``%a<position>``."""
    position: int
    memref: str                 # its type, e.g. memref<4x8xf32>
    element: str                # f32
    indices: tuple[str, ...]    # one affine expression per dim, over d0..dn-1 ('' for 0-d)
    layout: tuple[int, tuple[int, ...]] | None = None   # (offset, strides) in elements, when static


@dataclass(frozen=True)
class Space:
    """An iteration space: sizes, and which dims are reductions."""
    sizes: tuple[int, ...]
    reduction: tuple[bool, ...]

    @property
    def parallel_sizes(self) -> list[int]:
        return [n for n, r in zip(self.sizes, self.reduction) if not r]

    @property
    def reduction_sizes(self) -> list[int]:
        return [n for n, r in zip(self.sizes, self.reduction) if r]


class Lines:
    """A growing text body with fresh SSA names."""

    def __init__(self, counter: list[int] | None = None):
        self.lines: list[str] = []
        self._counter = counter if counter is not None else [0]

    def nested(self) -> Lines:
        """An inner block's lines, sharing this body's names."""
        return Lines(self._counter)

    def fresh(self, stem: str = "v") -> str:
        self._counter[0] += 1
        return f"%{stem}{self._counter[0]}"

    def add(self, line: str) -> None:
        self.lines.append(line)

    def const(self, value, type_: str = "index") -> str:
        name = self.fresh("k")
        self.add(f"{name} = arith.constant {value} : {type_}")
        return name

    def op(self, text: str) -> str:
        """``text`` with one result; returns its name."""
        name = self.fresh()
        self.add(f"{name} = {text}")
        return name


def launch_header(grid: tuple[int, int, int], block: tuple[int, int, int],
                  workgroup: list[str] = (), tag: str = "k") -> list[str]:
    """Host constants and the ``gpu.launch`` line (its body follows); ``tag`` keeps the
    constants of several launches in one helper apart."""
    lines = [f"%grid{i}_{tag} = arith.constant {n} : index" for i, n in enumerate(grid)]
    lines += [f"%block{i}_{tag} = arith.constant {n} : index" for i, n in enumerate(block)]
    memory = f" workgroup({', '.join(workgroup)})" if workgroup else ""
    lines.append(f"gpu.launch blocks(%bx, %by, %bz) in (%gx = %grid0_{tag}, %gy = %grid1_{tag}, "
                 f"%gz = %grid2_{tag}) threads(%tx, %ty, %tz) in (%sx = %block0_{tag}, "
                 f"%sy = %block1_{tag}, %sz = %block2_{tag})" + memory + " {")
    return lines


def delinearize(body: Lines, linear: str, sizes: list[int]) -> list[str]:
    """Row-major indices of ``linear`` over ``sizes``."""
    indices, rest = [None] * len(sizes), linear
    for d in reversed(range(len(sizes))):
        if d == 0:
            indices[d] = rest
            break
        size = body.const(sizes[d])
        indices[d] = body.op(f"arith.remui {rest}, {size} : index")
        rest = body.op(f"arith.divui {rest}, {size} : index")
    return indices


def interleave(space: Space, parallel: list[str], reduction: list[str]) -> list[str]:
    """The iteration dims' indices in order, from the parallel and reduction ones."""
    parallel, reduction, dims = list(parallel), list(reduction), []
    for is_reduction in space.reduction:
        dims.append(reduction.pop(0) if is_reduction else parallel.pop(0))
    return dims


def operand_indices(body: Lines, operand: Operand, dims: list[str]) -> str:
    """``%i, %j`` addressing ``operand`` at iteration point ``dims``."""
    names = []
    for expr in operand.indices:
        if expr.startswith("d") and expr[1:].isdigit():
            names.append(dims[int(expr[1:])])
        elif expr.isdigit():
            names.append(body.const(int(expr)))
        else:
            domain = ", ".join(f"d{i}" for i in range(len(dims)))
            names.append(body.op(f"affine.apply affine_map<({domain}) -> ({expr})>"
                                 f"({', '.join(dims)})"))
    return ", ".join(names)


def load(body: Lines, operand: Operand, dims: list[str]) -> str:
    if not operand.memref.startswith("memref<"):      # a scalar input (linalg.fill's value)
        return f"%a{operand.position}"
    at = operand_indices(body, operand, dims)
    return body.op(f"memref.load %a{operand.position}[{at}] : {operand.memref}")


def store(body: Lines, value: str, operand: Operand, dims: list[str]) -> None:
    at = operand_indices(body, operand, dims)
    body.add(f"memref.store {value}, %a{operand.position}[{at}] : {operand.memref}")


def call_body(body: Lines, name: str, args: list[str], arg_types: list[str],
              result_types: list[str]) -> list[str]:
    """Call the region's function; its results' names."""
    result = body.fresh("r")
    count = len(result_types)
    head = f"{result}:{count} = " if count > 1 else f"{result} = " if count else ""
    body.add(f"{head}func.call @{name}_body({', '.join(args)}) : ({', '.join(arg_types)}) -> "
             f"({', '.join(result_types)})")
    return [f"{result}#{i}" for i in range(count)] if count > 1 else [result] * count


def placeholder(body: Lines, element: str) -> str:
    """A value for an output's block argument that the region never reads."""
    return body.const("0.0" if element.startswith(("f", "bf")) else "0", element)


def global_thread(body: Lines) -> str:
    """blockIdx.x * blockDim.x + threadIdx.x."""
    threads = body.const(THREADS)
    base = body.op(f"arith.muli %bx, {threads} : index")
    return body.op(f"arith.addi {base}, %tx : index")


def carried_loop(body: Lines, bounds: tuple[str, str, str], inits: list[str], types: list[str],
                 step_body) -> list[str]:
    """``scf.for`` over ``bounds`` (lower, upper, step) carrying ``inits``; ``step_body(loop,
    index, carried)`` adds the step's lines to ``loop`` and returns the values it yields.
    Returns the names of the loop's results."""
    index, carried, result = body.fresh("k"), [body.fresh("c") for _ in inits], body.fresh("loop")
    lower, upper, step = bounds
    head = f"{result}:{len(types)} = " if len(types) > 1 else f"{result} = "
    pairs = ", ".join(f"{c} = {i}" for c, i in zip(carried, inits))
    body.add(f"{head}scf.for {index} = {lower} to {upper} step {step} iter_args({pairs}) -> "
             f"({', '.join(types)}) {{")
    loop = body.nested()
    yielded = step_body(loop, index, carried)
    loop.add(f"scf.yield {', '.join(yielded)} : {', '.join(types)}")
    body.lines += loop.lines
    body.add("}")
    return [f"{result}#{i}" for i in range(len(types))] if len(types) > 1 else [result]


def guarded(body: Lines, condition: str, inner: Lines) -> None:
    body.add(f"scf.if {condition} {{")
    body.lines += inner.lines
    body.add("}")


def helper(name: str, arg_types: list[str], lines: list[str]) -> str:
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    return (f"func.func private @{name}({args}) {{\n" + "\n".join(lines)
            + "\nreturn\n}\n")
