"""Calling a program compiled from ``jax.jit(f).lower(...)`` the way ``f`` is
called: with the same pytree of arguments (lists, dicts, tuples of arrays),
getting back the same pytree of results.

    exe = xlac.compile(jax.jit(f).lower(params, x))
    out = exe(params, x)          # params a dict of arrays: no flattening by hand

``Lowered.in_tree`` / ``out_tree`` say how; arguments JAX dropped as unused
(``keep_unused=False``, its default) are dropped here too. JAX is imported
only when such an executable is called.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlac.errors import InputError


@dataclass(frozen=True)
class PyTrees:
    """How a JAX function's arguments and results map onto the flat program."""

    in_tree: object                       # jax PyTreeDef of (args, kwargs)
    out_tree: object                      # jax PyTreeDef of the results
    kept: tuple[int, ...] | None = None   # flat argument indices the program takes

    def flatten(self, args: tuple, kwargs: dict, expected: int) -> list:
        """The program's arguments from ``f``'s; flat arrays are accepted as they are."""
        return self.flatten_named(args, kwargs, expected)[0]

    def leaves(self, args: tuple, kwargs: dict) -> list | None:
        """The program's arguments when ``f``'s are the lowered pytree, else None
        (``flatten_named`` then takes flat arrays or says what is wrong)."""
        from jax import tree_util
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            return None
        if self.kept is not None:
            return [leaves[index] for index in self.kept]
        return leaves

    def flatten_named(self, args: tuple, kwargs: dict,
                      expected: int) -> tuple[list, list[str] | None]:
        """``flatten``, and each argument's path in ``f``'s pytree (``args[0]['w']``)."""
        from jax import tree_util
        pairs, tree = tree_util.tree_flatten_with_path((tuple(args), dict(kwargs)))
        if tree != self.in_tree:
            if not kwargs and len(args) == expected and _all_leaves(args):
                return list(args), None      # already flat: the program's own arguments
            raise InputError(f"called with arguments of structure {_shown(tree)}; the "
                             f"function was lowered for {_shown(self.in_tree)}: pass the same "
                             f"pytree (or the {expected} flat arrays the program takes)")
        if self.kept is not None:
            pairs = [pair for index, pair in enumerate(pairs) if index in self.kept]
        return [leaf for _, leaf in pairs], [_path_name(path) for path, _ in pairs]

    def unflatten(self, outputs: list):
        from jax import tree_util
        return tree_util.tree_unflatten(self.out_tree, outputs)


def pytrees_of(source) -> PyTrees | None:
    """The argument and result trees of a JAX ``Lowered``, else None."""
    in_tree, out_tree = getattr(source, "in_tree", None), getattr(source, "out_tree", None)
    if in_tree is None or out_tree is None or isinstance(source, (str, bytes)):
        return None
    kept = _kept_arguments(source)
    return PyTrees(in_tree, out_tree, kept)


def _kept_arguments(source) -> tuple[int, ...] | None:
    """Which flat arguments JAX kept (it drops unused ones unless keep_unused)."""
    lowering = getattr(source, "_lowering", None)
    compile_args = getattr(lowering, "compile_args", None) or {}
    kept = compile_args.get("kept_var_idx") if isinstance(compile_args, dict) else None
    return tuple(sorted(kept)) if kept is not None else None


def _all_leaves(args) -> bool:
    return all(hasattr(a, "shape") or isinstance(a, (int, float, complex, bool)) for a in args)


def _shown(tree) -> str:
    return str(tree).removeprefix("PyTreeDef(").removesuffix(")")


def _path_name(path) -> str:
    """``args[0]['w']`` / ``kwargs['x']``: where a leaf sits in ``(args, kwargs)``."""
    from jax import tree_util
    head = "args" if getattr(path[0], "idx", 0) == 0 else "kwargs"
    return head + tree_util.keystr(tuple(path[1:]))
