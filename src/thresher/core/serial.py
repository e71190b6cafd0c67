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
form of a class nested in it changed.
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
    return _encoder(type(value))(value)


def from_data(cls: type[T], data: Any) -> T:
    """The instance of `cls` that `data` (its JSON form) describes; `SchemaError` if it cannot."""
    decode = _decoder(cls)
    try:
        return cast(T, decode(data))
    except SchemaError:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise SchemaError(f"a {cls.__name__} record does not decode: {exc}") from exc


def dump(value: Any) -> dict[str, Any]:
    """A record that stands alone: the version first, then the JSON form of `value`."""
    data = to_data(value)
    if not isinstance(data, dict) or VERSION_KEY in data:
        raise TypeError(f"{type(value).__name__} has no object form to add {VERSION_KEY!r} to")
    return {VERSION_KEY: schema_of(type(value)), **data}


def load(cls: type[T], data: Any) -> T:
    """Read back a `dump` record of `cls`; `SchemaVersionError` when another version wrote it."""
    if not isinstance(data, dict):
        raise SchemaError(f"a {cls.__name__} record must be a JSON object, got {type(data).__name__}")
    found, expected = data.get(VERSION_KEY), schema_of(cls)
    if found != expected:
        written = "no schema version" if found is None else f"schema version {found!r}"
        raise SchemaVersionError(f"a {cls.__name__} record has {written}; this thresher reads version {expected}")
    return from_data(cls, {k: v for k, v in data.items() if k != VERSION_KEY})


# -- converters, built once per type ------------------------------------------------------------------


def _same(value: Any) -> Any:
    return value


def _hooked(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "to_record") and hasattr(tp, "from_record")


def _optional(tp: Any) -> Any | None:
    """The `X` of `X | None`; None for any other type."""
    if get_origin(tp) in (types.UnionType, typing.Union):
        args = get_args(tp)
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            return inner[0]
        raise TypeError(f"no JSON form for the union {tp!r} (only `X | None`)")
    return None


def _items(tp: Any) -> tuple[type, Any | None, tuple[Any, ...] | None]:
    """For a list or tuple type: the container, its one item type (`list[X]`, `tuple[X, ...]`) or its
    item types (`tuple[X, Y]`)."""
    origin, args = get_origin(tp) or tp, get_args(tp)
    if origin is list or (origin is tuple and (not args or (len(args) == 2 and args[1] is Ellipsis))):
        return origin, (args[0] if args else Any), None
    return tuple, None, args


def _is_sequence(tp: Any) -> bool:
    return (get_origin(tp) or tp) in (list, tuple)


def _is_mapping(tp: Any) -> bool:
    return (get_origin(tp) or tp) is dict


def _key_type(tp: Any) -> Any:
    key = get_args(tp)[0] if get_args(tp) else str
    if key not in (str, int):
        raise TypeError(f"no JSON form for {tp!r}: object keys must be str or int")
    return key


SCALARS = (int, float, str, bool, type(None))
_ENCODERS: dict[Any, Convert] = {}
_DECODERS: dict[Any, Convert] = {}


def _encoder(tp: Any) -> Convert:
    """The converter of values of type `tp` to their JSON form (built on first use, then kept)."""
    enc = _ENCODERS.get(tp)
    if enc is None:
        enc = _ENCODERS[tp] = _build_encoder(tp)
    return enc


def _decoder(tp: Any) -> Convert:
    dec = _DECODERS.get(tp)
    if dec is None:
        dec = _DECODERS[tp] = _build_decoder(tp)
    return dec


def _build_encoder(tp: Any) -> Convert:
    if _hooked(tp):
        return lambda value: value.to_record()
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp)
        fields = [(f.name, _encoder(hints[f.name])) for f in dataclasses.fields(tp) if f.init]
        return lambda value: {name: enc(getattr(value, name)) for name, enc in fields}
    if (inner := _optional(tp)) is not None:
        enc = _encoder(inner)
        return _same if enc is _same else (lambda value: None if value is None else enc(value))
    if _is_sequence(tp):
        _, item, several = _items(tp)
        if several is not None:
            encs = [_encoder(a) for a in several]
            return lambda value: [e(v) for e, v in zip(encs, value, strict=True)]
        enc = _encoder(item)
        return list if enc is _same else (lambda value: [enc(v) for v in value])
    if _is_mapping(tp):
        key, val_enc = _key_type(tp), _encoder(get_args(tp)[1] if get_args(tp) else Any)
        if key is str and val_enc is _same:
            return dict
        key_enc: Convert = str if key is int else _same
        return lambda value: {key_enc(k): val_enc(v) for k, v in value.items()}
    if tp in SCALARS or tp is Any:
        return _same
    raise TypeError(f"no JSON form for {tp!r}")


def _build_decoder(tp: Any) -> Convert:
    if _hooked(tp):
        return cast(Convert, tp.from_record)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if (inner := _optional(tp)) is not None:
        dec = _decoder(inner)
        return _same if dec is _same else (lambda data: None if data is None else dec(data))
    if _is_sequence(tp):
        container, item, several = _items(tp)
        if several is not None:
            decs = [_decoder(a) for a in several]
            return lambda data: tuple(d(v) for d, v in zip(decs, data, strict=True))
        dec = _decoder(item)
        return container if dec is _same else (lambda data: container(map(dec, data)))
    if _is_mapping(tp):
        key, val_dec = _key_type(tp), _decoder(get_args(tp)[1] if get_args(tp) else Any)
        if key is str and val_dec is _same:
            return dict
        key_dec: Convert = int if key is int else _same
        return lambda data: {key_dec(k): val_dec(v) for k, v in data.items()}
    if tp in SCALARS or tp is Any:
        return _same
    raise TypeError(f"no JSON form for {tp!r}")


def _dataclass_decoder(cls: type) -> Convert:
    hints = get_type_hints(cls)
    fields = [(f.name, _decoder(hints[f.name])) for f in dataclasses.fields(cls) if f.init]
    names = frozenset(name for name, _ in fields)

    def decode(data: Any) -> Any:
        if not isinstance(data, dict):
            raise SchemaError(f"a {cls.__name__} record must be a JSON object, got {type(data).__name__}")
        unknown = data.keys() - names
        if unknown:
            raise SchemaError(f"a {cls.__name__} record has unknown fields: {', '.join(sorted(unknown))}")
        return cls(**{name: dec(data[name]) for name, dec in fields if name in data})

    return decode
