"""lit configuration for xlac's IR tests (``lit test``)."""

import os
import shutil
import sys

import lit.formats

config.name = "xlac"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.test_source_root, "Output")
config.excludes = ["Inputs", "python", "Output"]

# xla-opt, xla-run and FileCheck live beside the Python that runs lit.
tool_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([tool_dir, config.environment.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
config.substitutions.append(("%PYTHON", sys.executable))

shared = os.path.abspath(os.path.join(config.test_source_root, "..", "..", "shared"))
if os.path.isdir(shared):
    config.available_features.add("shared")
    config.substitutions.append(("%shared", shared))

for tool in ("FileCheck", "xla-opt", "xla-run"):
    if not shutil.which(tool, path=config.environment["PATH"]):
        lit_config.fatal(f"{tool} not found next to {sys.executable}: pip install -e '.[test]'")
