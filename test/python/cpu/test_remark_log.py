"""A kernel left as scalar loops reaches the user: its remark is logged (the
``xlac.remarks`` logger, INFO, ``<location>: remark: ...``) and printed by
``xla-run --remarks``, naming the op, its types and shape.

The program is a scatter of rows with neither sorted nor unique indices: its
lowering applies the updates one at a time on one core (a remark), whatever
the CPU level.
"""

import logging
import subprocess
import sys
from pathlib import Path

import xlac

_SCATTER = """func.func @main(%x: tensor<300x16xf32>, %i: tensor<300x1xi32>,
                 %u: tensor<300x16xf32>) -> tensor<300x16xf32> {
  %r = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
        inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}
     : (tensor<300x16xf32>, tensor<300x1xi32>, tensor<300x16xf32>) -> tensor<300x16xf32>
  return %r : tensor<300x16xf32>
}
"""

_SAID = "remark: xla-apply-schedules: no vector schedule for stablehlo.scatter"


def test_the_scalar_scatter_is_logged(caplog):
    with caplog.at_level(logging.INFO, logger="xlac.remarks"):
        xlac.compile(_SCATTER, cpu="x86-64-v3", cache=False)
    lines = [r.getMessage() for r in caplog.records if r.name == "xlac.remarks"]
    said = [line for line in lines if _SAID in line]
    assert len(said) == 1, lines
    assert said[0].startswith("<input>:3:8: remark: ")         # where, as MLIR tools say it
    assert "300x16xf32" in said[0] and "scalar loops on one core" in said[0]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "xlac.remarks")


def test_nothing_is_logged_below_info(caplog):
    with caplog.at_level(logging.WARNING, logger="xlac.remarks"):
        xlac.compile(_SCATTER, cpu="x86-64-v3", cache=False)
    assert not [r for r in caplog.records if r.name == "xlac.remarks"]


def test_xla_run_prints_remarks_when_asked(tmp_path):
    program = tmp_path / "scatter.mlir"
    program.write_text(_SCATTER)
    args = [str(Path(sys.executable).parent / "xla-run"), str(program), "--cpu=x86-64-v3",
            "--input=300x16xf32=0", "--input=300x1xi32=0", "--input=300x16xf32=1", "--quiet"]
    asked = subprocess.run([*args, "--remarks"], capture_output=True, text=True, timeout=120)
    assert asked.returncode == 0, asked.stderr
    said = [line for line in asked.stderr.splitlines() if _SAID in line]
    assert len(said) == 1 and said[0].startswith(f"{program}:3:8: remark: "), asked.stderr
    assert asked.stdout.startswith("EXEC @main")
