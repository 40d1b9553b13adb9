"""The compilation cache's keys: what compiled code depends on, hashed.

Three kinds, all from the target's table and the options:

- the *input key*: the input's bytes as given (a hit loads with no parse at
  all, for targets whose code loads without MLIR: ``Target.input_keyed``);
- the *program key*: the parsed program's bytecode without locations, so two
  texts of one program (a comment, a moved line) share an entry;
- *content keys* of the pieces a big program's machine code is made of
  (``ContentCache``), so a change in one layer recompiles only its pieces.

Each also holds the configuration: the target and its pipeline, the disabled
passes, the build identity, the CPU's features and the runtime knobs.
"""

from __future__ import annotations

import json

from xlac.cache import CompilationCache, digest
from xlac.cache.identity import build_identity
from xlac.cpu_model import cpu_model

TYPE_CHECKING = False             # typing.TYPE_CHECKING, without importing typing on a hit
if TYPE_CHECKING:
    from collections.abc import Callable

    from xlac.options import Options


def configuration(target, entry: str, options: Options, pipeline: list[str]) -> dict:
    """Everything besides the program that the compiled code for ``target`` (an
    ``xlac.targets.target.Target``) depends on."""
    return {"target": target.name, "entry": entry, "pipeline": pipeline,
            "disabled": sorted(options.disable_passes),
            "build": build_identity(options.cache_dir),
            "cpu_features": list(cpu_model(options.cpu).features),
            "malloc_tuning": options.malloc_tuning, "cuda_graphs": options.cuda_graphs}


def input_key(data: bytes, target, entry: str, options: Options) -> str:
    """The key of the input's bytes as given, before any parse."""
    pipeline = target.checked_pipeline(entry, options)
    return digest(b"input bytes", data, configuration(target, entry, options, pipeline))


def program_key(module, target, entry: str, options: Options) -> str:
    """The key of the parsed program (``module``), its locations left out."""
    pipeline = target.pipeline(entry, options)
    return digest(bare_bytecode(module), configuration(target, entry, options, pipeline))


def bare_bytecode(module) -> bytes:
    """The module's bytecode without locations: a comment or a moved line
    does not change the code, so it still hits (as JAX's cache does)."""
    import io

    from xlac.mlir import passmanager
    bare = module.operation.clone()
    with module.context:
        passmanager.PassManager.parse("builtin.module(strip-debuginfo)").run(bare)
    buffer = io.BytesIO()
    bare.write_bytecode(buffer)
    bare.erase()
    return buffer.getvalue()


class ContentCache:
    """The store seen through keys made from content (a piece's text) and the
    build and CPU the code is for; what a big program's pieces are kept under."""

    def __init__(self, store: CompilationCache, options: Options):
        self._store = store
        self._salt = json.dumps([build_identity(options.cache_dir),
                                 sorted(cpu_model(options.cpu).features)], sort_keys=True)

    def key(self, content: str) -> str:
        return digest(b"content", self._salt, content.encode())

    def get(self, content: str, what: str) -> bytes | None:
        return self._store.get(self.key(content), what, quiet=True)

    def put(self, content: str, produce: Callable[[], bytes], what: str) -> None:
        self._store.put([self.key(content)], produce, what)
