"""``@record``: what ``@dataclass(frozen=True)`` makes, for the modules a cache hit imports.

Why: ``import dataclasses`` imports ``inspect`` (``ast``, ``dis``, ``tokenize``):
about 5 ms, a quarter of a cache hit in a fresh process, for a handful of
records (``Options``, ``CpuModel``, ``Signature``...). ``@record`` reads the
class's annotations and defaults and adds the same ``__init__`` (same
signature), ``__repr__``, ``__eq__``, ``__hash__``, immutability
(``dataclasses.FrozenInstanceError``), ``__post_init__`` and ``__match_args__``.

``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` still work:
``__dataclass_fields__`` is made by ``dataclasses`` itself, the first time it
is asked for. Only the subset xlac uses is supported: annotated fields with
plain defaults or ``factory(...)``, ``ClassVar`` annotations left out as
dataclasses leave them; no ``InitVar``. ``@record(mutable=True)`` is what
``@dataclass`` makes (fields assignable, unhashable). A record may inherit from records and
from dataclasses without fields (the passes' ``ModulePass``): its fields are
theirs, then its own.
"""

from __future__ import annotations

_MISSING = object()


class _Factory:
    """The default a ``factory`` field shows in ``__init__``'s signature, as in dataclasses."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


class factory:  # noqa: N801 - used like dataclasses.field(default_factory=...)
    """A field's default made per instance: ``cache_dir: Path = factory(default_dir)``."""

    def __init__(self, make):
        self.make = make


def record(cls=None, *, mutable: bool = False, uncompared: tuple[str, ...] = ()):
    """``cls`` as a frozen record of its annotated fields (in order);
    ``@record(mutable=True)``: as ``@dataclass`` (fields assignable, no hash);
    ``uncompared``: fields left out of equality and the hash, as
    ``field(compare=False)``."""
    if cls is None:
        return lambda cls: record(cls, mutable=mutable, uncompared=uncompared)
    inherited, defaults = _inherited(cls)
    own = tuple(name for name, kind in cls.__dict__.get("__annotations__", {}).items()
                if not _is_class_var(kind))
    names = inherited + tuple(name for name in own if name not in inherited)
    for name in own:
        if name in cls.__dict__:
            defaults[name] = cls.__dict__[name]
            if isinstance(defaults[name], factory):
                delattr(cls, name)           # as dataclasses do: plain defaults stay class attributes
        else:
            defaults.pop(name, None)
    cls.__init__ = _init(cls, names, defaults)
    cls.__repr__ = _repr(names)
    compared = tuple(name for name in names if name not in uncompared)
    cls.__eq__ = _eq(compared)
    if mutable:
        cls.__hash__ = None                  # as dataclasses: eq, not frozen
    else:
        cls.__hash__ = lambda self: hash(_values(self, compared))
        cls.__setattr__, cls.__delattr__ = _frozen(cls, names)
    cls.__record_mutable__ = mutable
    cls.__record_uncompared__ = uncompared
    cls.__match_args__ = names
    cls.__record_fields__ = names
    cls.__record_defaults__ = defaults
    cls.__dataclass_fields__ = _DataclassFields(cls)
    return cls


def _inherited(cls) -> tuple[tuple[str, ...], dict]:
    """The fields (and their defaults) of ``cls``'s record bases, the first base's first;
    TypeError for a base that is a dataclass with fields (not supported)."""
    names: tuple[str, ...] = ()
    defaults: dict = {}
    for base in reversed(cls.__mro__[1:]):
        if "__record_fields__" in base.__dict__:
            names += tuple(name for name in base.__record_fields__ if name not in names)
            defaults.update(base.__record_defaults__)
        elif base.__dict__.get("__dataclass_fields__") and any(
                not _is_class_var(f.type) for f in base.__dict__["__dataclass_fields__"].values()):
            raise TypeError(f"record {cls.__name__}: base {base.__name__} is a dataclass with fields")
    return names, defaults


def _is_class_var(annotation) -> bool:
    """A ``ClassVar[...]`` annotation, written out (``from __future__ import annotations``) or not."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def annotation(cls, name: str):
    """The annotation of field ``name`` of the record ``cls`` (its own or a base's)."""
    for owner in cls.__mro__:
        found = owner.__dict__.get("__annotations__", {})
        if name in found:
            return found[name]
    raise KeyError(name)


def fields(cls) -> tuple[str, ...]:
    """A record's field names, in order; () for a class that is no record."""
    return getattr(cls, "__record_fields__", ())


def defaults(cls) -> dict:
    """Field -> its plain default (fields with a ``factory`` map to the factory)."""
    return cls.__record_defaults__


def replace(instance, **changes):
    """``dataclasses.replace`` for a record, without importing dataclasses."""
    values = {name: getattr(instance, name) for name in type(instance).__record_fields__}
    return type(instance)(**(values | changes))


def _init(cls, names, defaults):
    """The ``__init__`` dataclasses would write, made the same way (one ``exec``)."""
    namespace = {"_FACTORY": _FACTORY, "_set": object.__setattr__}
    params, body = [], []
    for name in names:
        default = defaults.get(name, _MISSING)
        if isinstance(default, factory):
            namespace[f"_make_{name}"] = default.make
            params.append(f"{name}=_FACTORY")
            body.append(f"    if {name} is _FACTORY: {name} = _make_{name}()")
        elif default is not _MISSING:
            namespace[f"_default_{name}"] = default
            params.append(f"{name}=_default_{name}")
        else:
            params.append(name)
        body.append(f"    _set(self, {name!r}, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    exec(f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"]),  # noqa: S102
         namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {**{name: annotation(cls, name) for name in names}, "return": None}
    return init


def _repr(names):
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"
    return __repr__


def _values(instance, names) -> tuple:
    return tuple(getattr(instance, name) for name in names)


def _eq(names):
    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _values(self, names) == _values(other, names)     # as dataclasses: tuples
    return __eq__


def _frozen(cls, names):
    """``__setattr__`` and ``__delattr__`` of a frozen dataclass: fields cannot change."""
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __setattr__, __delattr__


class _DataclassFields:
    """``cls.__dataclass_fields__``, made by ``dataclasses`` on first use (by
    ``dataclasses.fields``, ``replace``...), then kept as a plain attribute."""

    def __init__(self, cls):
        self._cls = cls

    def __get__(self, instance, owner):
        import dataclasses
        cls = self._cls
        made = dataclasses.make_dataclass(cls.__name__, [
            (name, annotation(cls, name), _field(dataclasses, defaults(cls).get(name, _MISSING),
                                                 name not in cls.__record_uncompared__))
            for name in cls.__record_fields__], frozen=not cls.__record_mutable__)
        type.__setattr__(cls, "__dataclass_fields__", made.__dataclass_fields__)
        type.__setattr__(cls, "__dataclass_params__", made.__dataclass_params__)
        return made.__dataclass_fields__


def _field(dataclasses, default, compare: bool):
    if isinstance(default, factory):
        return dataclasses.field(default_factory=default.make, compare=compare)
    if default is _MISSING:
        return dataclasses.field(compare=compare)
    return dataclasses.field(default=default, compare=compare)
