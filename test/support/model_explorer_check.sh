#!/usr/bin/env bash
# Opens a compiled program's graph the way Model Explorer does, without a browser:
# installs ai-edge-model-explorer into a scratch venv (not an xlac dependency,
# ~660 MB), writes the graph of a program with xlac, checks it against Model
# Explorer's own graph dataclasses, then runs Model Explorer's layout worker on
# it in Node and prints what a user would see (kernels as groups, positions).
#
#   bash test/support/model_explorer_check.sh [program.mlir]   (default: examples/softmax.mlir)
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
program=${1:-$REPO/examples/softmax.mlir}
scratch=${MODEL_EXPLORER_VENV:-/tmp/xlac-model-explorer}
[ -x "$scratch/bin/python" ] || python3 -m venv "$scratch"
"$scratch/bin/pip" install -q ai-edge-model-explorer==0.1.34 dacite==1.9.2
out=$(mktemp -d)
.venv/bin/python -m xlac.debug.fusion_picture "$program" -o "$out/graph.json"
"$scratch/bin/python" - "$out/graph" <<'PY'
import json, sys, dacite
from model_explorer import graph_builder, node_data_builder
base = sys.argv[1]
strict = dacite.Config(strict=True)
collection = dacite.from_dict(graph_builder.GraphCollection, json.load(open(base + ".json")), strict)
graph = collection.graphs[0]
for what in ("flops", "bytes"):
    for data in json.load(open(f"{base}.{what}.json")).values():
        dacite.from_dict(node_data_builder.GraphNodeData, data, strict)
print(f"Model Explorer's dataclasses accept the graph: {len(graph.nodes)} nodes and its node data")
PY
worker=$(ls "$scratch"/lib/python3*/site-packages/model_explorer/web_app/worker-*.js)
node "$REPO/test/support/model_explorer_layout.js" "$worker" "$out/graph.json"
echo "open it: $scratch/bin/model-explorer $out/graph.json --node_data_paths=$out/graph.flops.json,$out/graph.bytes.json"
