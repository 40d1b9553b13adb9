"""The "weights as constants" twin of a program whose weights are entry arguments.

    python bench/weights_as_constants.py ../shared/models/flax_resnet18.mlir /tmp/resnet18_consts.mlir
    python bench/weights_as_constants.py --compare flax_resnet18 --rounds 5     # both, timed
    python bench/weights_as_constants.py --synthetic 64     # 8 weights of 8 MB added in

Every argument of ``@main`` but the last ``--keep`` becomes a ``stablehlo.constant``
of a ``dense_resource`` blob, as torch-mlir exports a torchvision model with its
weights in it: ResNet-18's 102 weights, 46.8 MB. The values are the ones
``../shared/models/make_inputs.py`` draws for the model (``--random``: seeded
normal values), so the twin computes what the original does with those inputs.

``--compare`` (``--synthetic``) compiles both in one process with xlac and
with XLA (jaxlib's CPU client), taking turns (cache off, after a warm-up
compile), times xlac's calls in interleaved batches, and prints the medians:
compile time of "weights as constants" against "weights as arguments", and
against XLA's (docs/compile-time.md). ``--synthetic MB``: a program whose code
is the same for any MB, so its compile time shows what the bytes cost.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED_MODELS = HERE.parent.parent / "shared" / "models"


def constants_twin(text: str, weights: list[np.ndarray], entry: str = "main",
                   resource: bool = True, bytecode: bool = False) -> str | bytes:
    """``text`` with the first ``len(weights)`` arguments of ``@entry`` made
    ``dense_resource`` constants holding ``weights`` (``resource=False``: plain
    ``dense`` ones, the only kind jaxlib's client takes; ``bytecode``: as MLIR
    bytecode, where a blob is its bytes, not their hex)."""
    from xlac.context import new_context
    from xlac.mlir import ir
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        func = next(op.operation for op in module.body.operations
                    if op.operation.name == "func.func"
                    and ir.StringAttr(op.operation.attributes["sym_name"]).value == entry)
        block = func.regions[0].blocks[0]
        for index, weight in reversed(list(enumerate(weights))):   # each first in the body
            argument = block.arguments[index]
            value = ir.DenseResourceElementsAttr.get_from_buffer(
                np.ascontiguousarray(weight), f"weight{index}", argument.type) if resource \
                else ir.DenseElementsAttr.get(np.ascontiguousarray(weight), type=argument.type)
            with ir.InsertionPoint.at_block_begin(block):
                constant = ir.Operation.create("stablehlo.constant", results=[argument.type],
                                               attributes={"value": value})
            argument.replace_all_uses_with(constant.result)
        for index in reversed(range(len(weights))):
            block.erase_argument(index)
        old = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        inputs = [a.type for a in block.arguments]
        func.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, old.results))
        if "arg_attrs" in func.attributes:
            kept = list(ir.ArrayAttr(func.attributes["arg_attrs"]))[len(weights):]
            func.attributes["arg_attrs"] = ir.ArrayAttr.get(kept)
        if bytecode:
            buffer = io.BytesIO()
            module.operation.write_bytecode(buffer)
            return buffer.getvalue()
        return module.operation.get_asm(enable_debug_info=True)


def model_weights(name: str, keep: int, random: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(weights, the rest)`` of a shared model's inputs (make_inputs.py's)."""
    sys.path.insert(0, str(SHARED_MODELS))
    from make_inputs import inputs
    values = inputs(name)
    if random:
        rng = np.random.default_rng(0)
        values = [(rng.standard_normal(v.shape) * 0.05).astype(v.dtype) for v in values]
    return values[:len(values) - keep], values[len(values) - keep:]


TINY = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


def synthetic(megabytes: float, layers: int = 8) -> tuple[str, list[np.ndarray], list[np.ndarray]]:
    """``(text, weights, data)``: x [rows, 1024] f32 plus ``layers`` weights of
    its shape (``megabytes`` in all), each added then multiplied in: the code
    is the same for any size but its loop bounds."""
    rows = max(1, round(megabytes * 1e6 / layers / 4096))
    shape, tensor = (rows, 1024), f"tensor<{rows}x1024xf32>"
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(shape).astype(np.float32) for _ in range(layers)]
    params = ", ".join(f"%w{k}: {tensor}" for k in range(layers))
    body = []
    for k in range(layers):
        op = "add" if k % 2 == 0 else "multiply"
        body.append(f"  %h{k + 1} = stablehlo.{op} %h{k}, %w{k} : {tensor}")
    text = (f"func.func public @main({params}, %h0: {tensor}) -> {tensor} {{\n"
            + "\n".join(body) + f"\n  return %h{layers} : {tensor}\n}}\n")
    return text, weights, [np.ones(shape, np.float32)]


def xla_compiler():
    """Text -> compiled by jaxlib's CPU client, as bench/run.py does."""
    from jax._src import compiler
    from jax._src.lib import xla_client
    from jax.extend.backend import get_backend
    client = get_backend("cpu")
    devices = xla_client.DeviceList((client.local_devices()[0],))
    options = compiler.get_compile_options(num_replicas=1, num_partitions=1, backend=client)
    client.compile_and_load(TINY, devices, options)             # start-up out of the times
    return lambda text: client.compile_and_load(text, devices, options)


def compare(text: str, weights: list[np.ndarray], data: list[np.ndarray], rounds: int,
            calls: int, xla: bool, bytecode: bool = False) -> dict:
    """Compile (and run) ``text`` with its weights as arguments and as constants,
    xlac and XLA taking turns; the medians. ``bytecode``: xlac is given the
    constants' program as MLIR bytecode, not text."""
    import xlac
    sources = {"arguments": text, "constants": constants_twin(text, weights, bytecode=bytecode)}
    dense = {"arguments": text, "constants": constants_twin(text, weights, resource=False)}
    inputs = {"arguments": [*weights, *data], "constants": data}
    options = xlac.Options.from_env().replace(cache_dir=None, progress="off")
    xlac.compile(TINY, cache=False, options=options)            # start-up out of the times
    compilers = {"xlac": lambda text: xlac.compile(text, cache=False, options=options)}
    if xla:
        compilers["xla"] = xla_compiler()
    seconds: dict = {(c, label): [] for c in compilers for label in sources}
    executables = {}
    for turn in range(rounds):
        order = [(c, label) for c in compilers for label in sources]
        for c, label in (order if turn % 2 == 0 else order[::-1]):
            start = time.perf_counter()
            compiled = compilers[c]((sources if c == "xlac" else dense)[label])
            seconds[c, label].append(time.perf_counter() - start)
            if c == "xlac":
                executables[label] = compiled
            del compiled
    outputs = {label: executables[label].run(*inputs[label]) for label in sources}
    same = all(np.asarray(a).tobytes() == np.asarray(b).tobytes()
               for a, b in zip(*outputs.values()))
    runs: dict = {label: [] for label in sources}
    for turn in range(rounds * 2):
        for label in sorted(sources, reverse=bool(turn % 2)):
            start = time.perf_counter()
            for _ in range(calls):
                executables[label].run(*inputs[label])
            runs[label].append((time.perf_counter() - start) / calls)
    return {"megabytes": sum(w.nbytes for w in weights) / 1e6, "identical": same,
            "compile_s": {f"{c} {label}": statistics.median(v) for (c, label), v in seconds.items()},
            "all_compile_s": {f"{c} {label}": v for (c, label), v in seconds.items()},
            "run_ms": {label: statistics.median(v) * 1e3 for label, v in runs.items()}}


def print_table(name: str, result: dict) -> None:
    print(f"{name}: {result['megabytes']:.1f} MB of weights; xlac outputs "
          f"{'identical' if result['identical'] else 'DIFFER'} both ways")
    print("| compiler, weights as | compile s (median; each) | run ms |\n|---|---|---|")
    for key, median in result["compile_s"].items():
        each = " ".join(f"{s:.2f}" for s in result["all_compile_s"][key])
        label = key.split()[1]
        run = f"{result['run_ms'][label]:.2f}" if key.startswith("xlac") else ""
        print(f"| {key} | {median:.2f} ({each}) | {run} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, nargs="?",
                        help="a program of ../shared/models (NAME.mlir)")
    parser.add_argument("output", type=Path, nargs="?")
    parser.add_argument("--keep", type=int, default=1, help="trailing arguments kept (the data)")
    parser.add_argument("--random", action="store_true", help="seeded random weights")
    parser.add_argument("--compare", metavar="NAME", help="time a shared model both ways")
    parser.add_argument("--synthetic", metavar="MB", type=float,
                        help="time a program of MB megabytes of weights both ways")
    parser.add_argument("--rounds", type=int, default=5, help="compiles of each (--compare)")
    parser.add_argument("--calls", type=int, default=10, help="calls per timed batch (--compare)")
    parser.add_argument("--no-xla", action="store_true", help="xlac only")
    parser.add_argument("--json", action="store_true", help="one JSON line, not a table")
    parser.add_argument("--bytecode", action="store_true",
                        help="give xlac the constants' program as MLIR bytecode")
    args = parser.parse_args(argv)
    if args.compare or args.synthetic:
        if args.compare:
            text = (SHARED_MODELS / f"{args.compare}.mlir").read_text()
            weights, data = model_weights(args.compare, args.keep, random=False)
        else:
            text, weights, data = synthetic(args.synthetic)
        result = compare(text, weights, data, args.rounds, args.calls, not args.no_xla,
                         args.bytecode)
        name = (args.compare or f"synthetic {args.synthetic:g} MB") + \
            (" (bytecode)" if args.bytecode else "")
        if args.json:
            print(json.dumps({"name": name, **result}))
        else:
            print_table(name, result)
        return 0
    if args.source is None or args.output is None:
        parser.error("give SOURCE and OUTPUT, or --compare NAME, or --synthetic MB")
    weights, _ = model_weights(args.source.stem, args.keep, args.random)
    args.output.write_text(constants_twin(args.source.read_text(), weights))
    print(f"{len(weights)} weights as constants, {sum(w.nbytes for w in weights) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
