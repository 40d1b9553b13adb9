"""SPMD test programs written here: every collective over the element types
(on 1 x 2 devices) and every process-group strategy (on 2 x 2 devices).

Each case is one result of one program, named ``<collective>:<detail>:<type>``
so that a failure reads as a row of the collectives x types table.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np

SHAPE = (4, 8)
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
         "i8": np.int8, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui32": np.uint32,
         "i1": np.bool_, "complex<f32>": np.complex64, "f8E4M3FN": ml_dtypes.float8_e4m3fn}
_REDUCE_OPS = {"add": "add", "mul": "multiply", "min": "minimum", "max": "maximum",
               "and": "and", "or": "or", "xor": "xor"}


def tensor(shape, element: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _groups(rows) -> str:
    return f"dense<{rows}> : tensor<{len(rows)}x{len(rows[0])}xi64>"


def _attrs(groups=None, channel=0, global_ids=False, extra="") -> str:
    parts = [extra] if extra else []
    if channel:
        parts.append(f"channel_handle = #stablehlo.channel_handle<handle = {channel}, type = 1>")
    if groups is not None:
        parts.append(f"replica_groups = {_groups(groups)}")
    if global_ids:
        parts.append("use_global_device_ids")
    return "<{" + ", ".join(parts) + "}>"


class Program:
    """A function @main(one argument per element type) -> (one result per case)."""

    def __init__(self, replicas: int, partitions: int, elements: list[str]):
        self.replicas, self.partitions = replicas, partitions
        self.elements = elements
        self.lines: list[str] = []
        self.results: list[tuple[str, str, str]] = []   # (case name, value, type)

    def arg(self, element: str) -> str:
        return f"%in{self.elements.index(element)}"

    def add(self, name: str, text: str, result_type: str) -> None:
        value = f"%v{len(self.results)}"
        self.lines.append(f"    {value} = {self._own_channel(text)}")
        self.results.append((name, value, result_type))

    def reducing(self, name, op, element, reduction, attrs, result_shape=SHAPE, count=1):
        """A reducing collective; ``count`` > 1: variadic, the same argument ``count`` times."""
        k, scalar = len(self.results), tensor((), element)
        body = (f"({{\n    ^bb0(%l{k}: {scalar}, %r{k}: {scalar}):\n"
                f"      %c{k} = stablehlo.{_REDUCE_OPS[reduction]} %l{k}, %r{k} : {scalar}\n"
                f"      stablehlo.return %c{k} : {scalar}\n    }})")
        ins = ", ".join([tensor(SHAPE, element)] * count)
        outs = ", ".join([tensor(result_shape, element)] * count)
        value = f"%v{k}" + (f":{count}" if count > 1 else "")
        self.lines.append(f'    {value} = "stablehlo.{op}"({", ".join([self.arg(element)] * count)}) '
                          f"{self._own_channel(attrs)} {body} : ({ins}) -> ({outs})")
        for i in range(count):
            self.results.append((name + (f"#{i}" if count > 1 else ""),
                                 f"%v{k}" + (f"#{i}" if count > 1 else ""),
                                 tensor(result_shape, element)))

    def moving(self, name, op, element, attrs, result_shape=SHAPE):
        self.add(name, f'"stablehlo.{op}"({self.arg(element)}) {attrs} : '
                 f"({tensor(SHAPE, element)}) -> {tensor(result_shape, element)}",
                 tensor(result_shape, element))

    def _own_channel(self, text: str) -> str:
        """Every op its own channel id, as XLA gives them (the interpreter pairs ops by it)."""
        return re.sub(r"handle = \d+", f"handle = {len(self.lines) + 1}", text)

    def text(self) -> str:
        args = ", ".join(f"%in{i}: {tensor(SHAPE, e)}" for i, e in enumerate(self.elements))
        types = ", ".join(t for _, _, t in self.results)
        values = ", ".join(v for _, v, _ in self.results)
        return (f"module @spmd attributes {{mhlo.num_partitions = {self.partitions} : i32, "
                f"mhlo.num_replicas = {self.replicas} : i32}} {{\n"
                f"  func.func public @main({args}) -> ({types}) {{\n" + "\n".join(self.lines)
                + f"\n    return {values} : {types}\n  }}\n}}\n")

    def without(self, drop) -> Program:
        """The program without the ops any of whose results ``drop(name)`` says to drop."""
        gone = {value.split("#")[0] for name, value, _ in self.results if drop(name)}
        kept = Program(self.replicas, self.partitions, self.elements)
        kept.lines = [line for line in self.lines if line.split("=")[0].strip().split(":")[0] not in gone]
        kept.results = [r for r in self.results if r[1].split("#")[0] not in gone]
        return kept

    def names(self) -> list[str]:
        return [name for name, _, _ in self.results]

    def inputs(self, seed: int = 0) -> list[list[np.ndarray]]:
        """Every device's arguments (small integers: products and sums stay exact)."""
        rng = np.random.default_rng(seed)
        devices = []
        for _ in range(self.replicas * self.partitions):
            devices.append([_random(rng, e) for e in self.elements])
        return devices


def _random(rng, element: str) -> np.ndarray:
    if element == "i1":
        return rng.integers(0, 2, SHAPE).astype(np.bool_)
    if element.startswith(("i", "ui")):
        low = 0 if element.startswith("ui") else -3
        return rng.integers(low, 4, SHAPE).astype(NUMPY[element])
    if element.startswith("complex"):
        return (rng.integers(-3, 4, SHAPE) + 1j * rng.integers(-3, 4, SHAPE)).astype(np.complex64)
    return (rng.integers(-8, 9, SHAPE) / 4).astype(NUMPY[element])


ELEMENTS = ["f32", "f64", "f16", "bf16", "i8", "i32", "i64", "ui8", "ui32", "i1", "complex<f32>",
            "f8E4M3FN"]
_REDUCIBLE = [e for e in ELEMENTS if e != "f8E4M3FN"]


def element_types_program() -> Program:
    """1 replica x 2 partitions, JAX's way (channel, global device ids): every
    collective over the element types it applies to."""
    p = Program(1, 2, ELEMENTS)
    jax = {"groups": [[0, 1]], "channel": 1, "global_ids": True}
    for element in _REDUCIBLE:
        p.reducing(f"all_reduce:add:{element}", "all_reduce", element, "add", _attrs(**jax))
    for element, reductions in {"f32": "mul min max", "bf16": "mul max", "f16": "min",
                                "i32": "mul max and", "i8": "min", "i64": "min",
                                "ui32": "min", "ui8": "max or xor", "i1": "and or xor",
                                "complex<f32>": "mul", "f64": "max"}.items():
        for reduction in reductions.split():
            p.reducing(f"all_reduce:{reduction}:{element}", "all_reduce", element, reduction,
                       _attrs(**jax))
    p.reducing("all_reduce:variadic:f32", "all_reduce", "f32", "add", _attrs(**jax), count=2)
    for element in ELEMENTS:
        p.moving(f"all_gather:dim1:{element}", "all_gather", element,
                 _attrs(extra="all_gather_dim = 1 : i64", **jax), (4, 16))
    p.moving("all_gather:dim0:f32", "all_gather", "f32",
             _attrs(extra="all_gather_dim = 0 : i64", **jax), (8, 8))
    for element, dim in (("f32", 0), ("bf16", 0), ("i32", 0), ("f16", 1), ("i64", 1), ("ui8", 1)):
        shape = (2, 8) if dim == 0 else (4, 4)
        p.reducing(f"reduce_scatter:dim{dim}:{element}", "reduce_scatter", element, "add",
                   _attrs(extra=f"scatter_dimension = {dim} : i64", **jax), shape)
    for element in ("f32", "i8", "bf16", "i1", "f8E4M3FN", "f64"):
        split, concat, shape = (1, 0, (8, 4)) if element != "f64" else (0, 1, (2, 16))
        p.moving(f"all_to_all:split{split}:{element}", "all_to_all", element,
                 _attrs(extra=f"concat_dimension = {concat} : i64, split_count = 2 : i64, "
                        f"split_dimension = {split} : i64", groups=[[0, 1]], channel=1), shape)
    swap = "source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>"
    for element in ("f32", "complex<f32>", "i1", "f8E4M3FN"):
        p.moving(f"collective_permute:swap:{element}", "collective_permute", element,
                 _attrs(extra=swap, channel=1))
    p.moving("collective_permute:one_way:f32", "collective_permute", "f32",
             _attrs(extra="source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>", channel=1))
    for element in ("f32", "i64", "bf16"):
        p.moving(f"collective_broadcast:root1:{element}", "collective_broadcast", element,
                 _attrs(groups=[[1, 0]], channel=1))
    _ids(p)
    return p


# The region of a summing reduction or all-reduce.
_SUM = ("({\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %s = stablehlo.add %a, %b : "
        "tensor<f32>\n      stablehlo.return %s : tensor<f32>\n    })")


def _weight_gradient(result: str, x: str) -> list[str]:
    """Two matmuls of the argument (4 x 4, then 4 x 8): a weight-gradient-like ``result``."""
    mat, square = tensor(SHAPE, "f32"), tensor((4, 4), "f32")
    return [f"    %h = stablehlo.dot_general {x}, {x}, contracting_dims = [1] x [1] : "
            f"({mat}, {mat}) -> {square}",
            f"    {result} = stablehlo.dot_general %h, {x}, contracting_dims = [1] x [0] : "
            f"({square}, {mat}) -> {mat}"]


def _all_reduce(result: str, value: str, attrs: str, type_text: str) -> str:
    return f'    {result} = "stablehlo.all_reduce"({value}) {attrs} {_SUM} : ({type_text}) -> {type_text}'


def _column_sum(result: str, value: str) -> str:
    """``value`` (4 x 8) summed over its rows from %zero."""
    return (f"    {result} = stablehlo.reduce({value} init: %zero) applies stablehlo.add across "
            f"dimensions = [0] : ({tensor(SHAPE, 'f32')}, tensor<f32>) -> {tensor((8,), 'f32')}")


def training_step_program(partitions: int = 2) -> Program:
    """1 x ``partitions``: a data-parallel step's shape. Two "weight gradients"
    (matmuls) and a "bias gradient" (a column sum) are all-reduced while later
    matmuls still compute, then "updates" use them; the loss-like sum is
    all-reduced last but made first. The schedule xla-overlap-collectives
    builds (starts early, dones late) and the buckets of
    xla-combine-all-reduces have something to move here."""
    p = Program(1, partitions, ["f32"])
    everyone = [list(range(partitions))]
    row, mat, vec = tensor((8,), "f32"), tensor(SHAPE, "f32"), tensor((4, 4), "f32")
    psum = _attrs(groups=everyone, channel=1, global_ids=True)
    channel = {k: _attrs(groups=everyone, channel=100 + k, global_ids=True) for k in range(3)}
    add = _SUM
    zero = "%zero = stablehlo.constant dense<0.0> : tensor<f32>"
    lr = f"%lr = stablehlo.constant dense<0.25> : {mat}"
    x = p.arg("f32")
    p.lines += [f"    {zero}", f"    {lr}",
                f"    %loss = stablehlo.reduce({x} init: %zero) applies stablehlo.add across "
                f"dimensions = [0, 1] : ({mat}, tensor<f32>) -> tensor<f32>",
                *_weight_gradient("%g1", x),
                f"    %sq = stablehlo.multiply {x}, {x} : {mat}",
                _column_sum("%b1", "%sq"),
                _all_reduce("%s1", "%g1", channel[0], mat),
                _all_reduce("%sb", "%b1", channel[1], row),
                f"    %h2 = stablehlo.multiply %h, %h : {vec}",
                f"    %g2 = stablehlo.dot_general %h2, {x}, contracting_dims = [1] x [0] : "
                f"({vec}, {mat}) -> {mat}",
                _all_reduce("%s2", "%g2", channel[2], mat),
                f"    %d1 = stablehlo.multiply %lr, %s1 : {mat}",
                f"    %d2 = stablehlo.multiply %lr, %s2 : {mat}"]
    p.add("update:1", f"stablehlo.subtract {x}, %d1 : {mat}", mat)
    p.add("update:2", f"stablehlo.subtract {x}, %d2 : {mat}", mat)
    p.add("bias", f"stablehlo.negate %sb : {row}", row)
    p.add("loss", f'"stablehlo.all_reduce"(%loss) {psum} {add} : (tensor<f32>) -> tensor<f32>',
          "tensor<f32>")
    return p


def gradient_and_bias_step_program(partitions: int = 2) -> Program:
    """1 x ``partitions``: a matmul's result all-reduced (the weight's
    gradient) and also summed over its rows, that sum all-reduced (the
    bias's); the weight's update reads both. A weight-decay sum made first
    shares their zero. xla-fuse once moved that zero into the kernel of the
    decay sum and the update, while the gradient's sum (alone: a dot does not
    fuse into a reduction) read it there: kernel -> sum -> all_reduce -> the
    same kernel, a cycle."""
    p = Program(1, partitions, ["f32"])
    everyone = [list(range(partitions))]
    row, mat = tensor((8,), "f32"), tensor(SHAPE, "f32")
    sum_0, sum_1 = (_attrs(groups=everyone, channel=200 + k, global_ids=True) for k in range(2))
    x = p.arg("f32")
    p.lines += ["    %zero = stablehlo.constant dense<0.0> : tensor<f32>",
                f"    %lr = stablehlo.constant dense<0.25> : {mat}",
                f"    %sq = stablehlo.multiply {x}, {x} : {mat}",
                _column_sum("%decay", "%sq"),
                *_weight_gradient("%g", x),
                _column_sum("%colsum", "%g"),
                _all_reduce("%sg", "%g", sum_0, mat),
                _all_reduce("%sb", "%colsum", sum_1, row),
                f"    %sbm = stablehlo.broadcast_in_dim %sb, dims = [1] : ({row}) -> {mat}",
                f"    %step = stablehlo.add %sg, %sbm : {mat}",
                f"    %d = stablehlo.multiply %lr, %step : {mat}"]
    p.add("update:weight", f"stablehlo.subtract {x}, %d : {mat}", mat)
    p.add("update:bias", f"stablehlo.negate %sb : {row}", row)
    p.add("decay", f"stablehlo.negate %decay : {row}", row)
    return p


def _ids(p: Program) -> None:
    p.add("partition_id::ui32", "stablehlo.partition_id : tensor<ui32>", "tensor<ui32>")
    p.add("replica_id::ui32", "stablehlo.replica_id : tensor<ui32>", "tensor<ui32>")


def group_strategies_program() -> Program:
    """2 replicas x 2 partitions: each way the spec splits devices into groups."""
    p = Program(2, 2, ["f32"])
    add = "add"
    p.reducing("all_reduce:cross_replica:f32", "all_reduce", "f32", add, _attrs(groups=[[0, 1]]))
    p.reducing("all_reduce:cross_replica_and_partition:f32", "all_reduce", "f32", "mul",
               _attrs(groups=[[0], [1]], channel=1))
    p.reducing("all_reduce:flattened_ids:f32", "all_reduce", "f32", "min",
               _attrs(groups=[[0, 3], [2, 1]], channel=2, global_ids=True))
    p.moving("all_gather:cross_replica_and_partition:f32", "all_gather", "f32",
             _attrs(extra="all_gather_dim = 0 : i64", groups=[[1, 0]], channel=3), (16, 8))
    p.moving("all_gather:flattened_ids_reversed:f32", "all_gather", "f32",
             _attrs(extra="all_gather_dim = 1 : i64", groups=[[3, 2, 1, 0]], channel=4,
                    global_ids=True), (4, 32))
    p.moving("all_gather:cross_replica:f32", "all_gather", "f32",
             _attrs(extra="all_gather_dim = 0 : i64", groups=[[1, 0]]), (8, 8))
    p.reducing("reduce_scatter:flattened_ids:f32", "reduce_scatter", "f32", add,
               _attrs(extra="scatter_dimension = 1 : i64", groups=[[0, 1, 2, 3]], channel=5,
                      global_ids=True), (4, 2))
    p.reducing("reduce_scatter:cross_replica:f32", "reduce_scatter", "f32", "max",
               _attrs(extra="scatter_dimension = 0 : i64", groups=[[1, 0]]), (2, 8))
    p.moving("all_to_all:cross_replica:f32", "all_to_all", "f32",
             _attrs(extra="concat_dimension = 1 : i64, split_count = 2 : i64, "
                    "split_dimension = 0 : i64", groups=[[0, 1]]), (2, 16))
    p.moving("all_to_all:cross_partition:f32", "all_to_all", "f32",
             _attrs(extra="concat_dimension = 0 : i64, split_count = 2 : i64, "
                    "split_dimension = 1 : i64", groups=[[1, 0]], channel=6), (8, 4))
    p.moving("collective_permute:cross_replica:f32", "collective_permute", "f32",
             _attrs(extra="source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>"))
    p.moving("collective_permute:cross_partition:f32", "collective_permute", "f32",
             _attrs(extra="source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>",
                    channel=7))
    p.moving("collective_broadcast:cross_partition:f32", "collective_broadcast", "f32",
             _attrs(groups=[[1, 0]], channel=8))
    p.moving("collective_broadcast:cross_replica:f32", "collective_broadcast", "f32",
             _attrs(groups=[[0, 1]]))
    _ids(p)
    return p


# what NCCL has no reduction for (the CPU runs them through MPI)
NCCL_LACKS = ("all_reduce:and:i32", "all_reduce:or:ui8", "all_reduce:xor:ui8", "all_reduce:xor:i1",
              "all_reduce:mul:complex<f32>")


def for_nccl(program: Program) -> Program:
    return program.without(lambda name: name in NCCL_LACKS)
