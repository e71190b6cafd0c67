"""One typed JSON form for dataclasses: task results (completion markers), manifest entries, reports.

The form follows the class: an object with each field under its name, in declaration order, converted
by the field's annotated type (resolved once per class with `typing.get_type_hints`):

- `int`, `float`, `str`, `bool`, `None`, `Any`: as they are;
- `X | None`: null or the form of `X`;
- `tuple[X, ...]`, `tuple[X, Y]`, `list[X]`: a list;
- `dict[str, X]`, `dict[int, X]`: an object; JSON keys are strings, so int keys are written as
  decimal strings and read back as ints;
- a dataclass: its object, recursively;
- a class with `to_record()` and a classmethod `from_record(data)` (`thresher.core.stats.Stats`):
  what they write and read. Checked before the dataclass form.

Reading a record back checks its keys (an unknown one is an error; a missing one takes the field's
default, if it has one) but not every scalar: the schema version says the shape is the expected one.

`to_data` / `from_data` are the form alone: a value inside a document that has its own version (the
manifest's `shards`) or nothing to decode (`thresher dedup --json`). `dump` / `load` are a record that
stands alone, a task's completion marker (`thresher.run.task.run_task`): the form with `"v"`, the
class's `SCHEMA`, and `load` refuses any other version with `SchemaVersionError`, so that a marker
written by another thresher is run again rather than misread. Bump a class's `SCHEMA` when old records
would no longer decode to the same value: a field renamed, retyped, or added without a default, or the
form of a class nested in it changed. A class that is not `Serializable` but has its own `to_json` and
`from_json` (a plugin stage's task result) goes through them, under its `SCHEMA` or 1.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any, ClassVar, Self, TypeVar, cast, get_args, get_origin, get_type_hints

from thresher.core.errors import ThresherError

VERSION_KEY = "v"

T = TypeVar("T")
Convert = Callable[[Any], Any]


class SchemaError(ThresherError):
    """A record that does not decode to its class."""


class SchemaVersionError(SchemaError):
    """A record written under another schema version of its class (or under none)."""


class Serializable:
    """Base of a (frozen, slotted) dataclass with a typed JSON form and a schema version."""

    __slots__ = ()
    SCHEMA: ClassVar[int] = 1

    def to_json(self) -> dict[str, Any]:
        """The JSON form, without the version (see `dump` for a record that carries it)."""
        data: dict[str, Any] = to_data(self)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return from_data(cls, data)


def schema_of(cls: type) -> int:
    version: int = getattr(cls, "SCHEMA", 1)
    return version


def to_data(value: Any) -> Any:
    """The JSON form of a dataclass instance (or a hooked class's record)."""
    return _codec(type(value))[0](value)


def from_data(cls: type[T], data: Any) -> T:
    """The instance of `cls` that `data` (its JSON form) describes; `SchemaError` if it cannot."""
    decode = _codec(cls)[1]
    try:
        return cast(T, decode(data))
    except SchemaError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise SchemaError(f"a {cls.__name__} record does not decode: {exc}") from exc


def dump(value: Any) -> dict[str, Any]:
    """A record that stands alone: the version first, then the JSON form of `value`: its `to_json()`
    where its class has one (a `Serializable`'s is `to_data`; a phased stage's own result type may
    write its own), else `to_data(value)`."""
    to_json = getattr(value, "to_json", None)
    data = to_json() if to_json is not None else to_data(value)
    if not isinstance(data, dict) or VERSION_KEY in data:
        raise TypeError(f"{type(value).__name__} has no object form to add {VERSION_KEY!r} to")
    return {VERSION_KEY: schema_of(type(value)), **data}


def load(cls: type[T], data: Any) -> T:
    """Read back a `dump` record of `cls` (through `cls.from_json` where it has one, else `from_data`);
    `SchemaVersionError` when another version of `cls` wrote it."""
    if not isinstance(data, dict):
        raise SchemaError(f"a {cls.__name__} record must be a JSON object, got {type(data).__name__}")
    found, expected = data.get(VERSION_KEY), schema_of(cls)
    if found != expected or type(found) is not int:  # not True, not 1.0
        written = "no schema version" if found is None else f"schema version {found!r}"
        raise SchemaVersionError(f"a {cls.__name__} record has {written}; this thresher reads version {expected}")
    form = {k: v for k, v in data.items() if k != VERSION_KEY}
    from_json = getattr(cls, "from_json", None)
    return cast(T, from_json(form)) if from_json is not None else from_data(cls, form)


# -- converters, built once per type ------------------------------------------------------------------

Codec = tuple[Convert, Convert]  # a type's converters to its JSON form and back
SCALARS = (int, float, str, bool, type(None))
_CODECS: dict[Any, Codec] = {}


def _same(value: Any) -> Any:
    return value


def _or_none(convert: Convert) -> Convert:
    return _same if convert is _same else (lambda value: None if value is None else convert(value))


def _codec(tp: Any) -> Codec:
    """The converters of `tp`, built on first use and kept (the driver decodes many markers)."""
    codec = _CODECS.get(tp)
    if codec is None:
        codec = _CODECS[tp] = _build(tp)
    return codec


def _build(tp: Any) -> Codec:
    origin, args = get_origin(tp) or tp, get_args(tp)
    if isinstance(tp, type) and hasattr(tp, "to_record") and hasattr(tp, "from_record"):
        return (lambda value: value.to_record()), cast(Convert, tp.from_record)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_codec(tp)
    if origin in (types.UnionType, typing.Union):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1 or len(args) != 2:
            raise TypeError(f"no JSON form for the union {tp!r} (only `X | None`)")
        enc, dec = _codec(inner[0])
        return _or_none(enc), _or_none(dec)
    if origin is tuple and args and args[-1] is not Ellipsis:  # tuple[X, Y]: one type per place
        codecs = [_codec(a) for a in args]
        return (
            lambda value: [c[0](v) for c, v in zip(codecs, value, strict=True)],
            lambda data: tuple(c[1](v) for c, v in zip(codecs, data, strict=True)),
        )
    if origin in (list, tuple):  # list[X], tuple[X, ...]
        enc, dec = _codec(args[0] if args else Any)
        return (
            list if enc is _same else (lambda value: [enc(v) for v in value]),
            origin if dec is _same else (lambda data: origin(map(dec, data))),
        )
    if origin is dict:
        key, item = args or (str, Any)
        if key not in (str, int):
            raise TypeError(f"no JSON form for {tp!r}: object keys must be str or int")
        enc, dec = _codec(item)
        if key is str and enc is _same and dec is _same:
            return dict, dict
        key_enc, key_dec = (str, int) if key is int else (_same, _same)
        return (
            lambda value: {key_enc(k): enc(v) for k, v in value.items()},
            lambda data: {key_dec(k): dec(v) for k, v in data.items()},
        )
    if tp in SCALARS or tp is Any:
        return _same, _same
    raise TypeError(f"no JSON form for {tp!r}")


def _dataclass_codec(cls: type) -> Codec:
    hints = get_type_hints(cls)
    fields = [(f.name, *_codec(hints[f.name])) for f in dataclasses.fields(cls) if f.init]
    names = frozenset(name for name, _, _ in fields)

    def encode(value: Any) -> dict[str, Any]:
        return {name: enc(getattr(value, name)) for name, enc, _ in fields}

    def decode(data: Any) -> Any:
        if not isinstance(data, dict):
            raise SchemaError(f"a {cls.__name__} record must be a JSON object, got {type(data).__name__}")
        unknown = data.keys() - names
        if unknown:
            raise SchemaError(f"a {cls.__name__} record has unknown fields: {', '.join(sorted(unknown))}")
        return cls(**{name: dec(data[name]) for name, _, dec in fields if name in data})

    return encode, decode
