"""Machinery for frozen dataclass config trees.

Each stage declares its own frozen config dataclass beside it; `thresher.config.RunConfig` composes
them. Defaults are declared once, there. Everything else is generated from the tree:

- `to_dict` / `from_dict`: the TOML and manifest form; unknown keys and wrong types are errors;
- `config_hash`: a stable digest of the settings that affect output;
- `flat_fields`: one entry per leaf setting, from which the CLI generates its flags.

`None` is the only "off" value: an `int | None` threshold set to `None` disables its check (in TOML,
which has no null, write `"none"`).
Declare a field with `setting(default, "help text")` to give it help and, optionally, a short flag.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin, get_type_hints

from thresher.core.errors import ConfigError


def setting(default: Any, help: str = "", *, flag: str | None = None, hashed: bool = True) -> Any:
    """A config field with help text. `flag` adds a short CLI alias (e.g. `--shard-size`);
    `hashed=False` marks a setting that cannot change the output (workers, progress)."""
    meta = {"help": help, "flag": flag, "hashed": hashed}
    if isinstance(default, (list, dict, set)):
        raise TypeError("config defaults must be immutable: use a tuple")
    return field(default=default, metadata=meta)


def section(cls: type, help: str = "", *, hashed: bool = True) -> Any:
    """A nested config section, defaulting to the section's own defaults."""
    return field(default_factory=cls, metadata={"help": help, "hashed": hashed})


@dataclass(frozen=True, slots=True)
class FlatField:
    path: tuple[str, ...]  # ("dedup", "exact", "level")
    type: Any
    default: Any
    help: str
    flag: str | None
    hashed: bool

    @property
    def dotted(self) -> str:
        return ".".join(self.path)

    @property
    def long_flag(self) -> str:
        return "--" + "-".join(p.replace("_", "-") for p in self.path)


def _optional_inner(tp: Any) -> tuple[Any, bool]:
    """The type inside `X | None` and whether it was optional."""
    if get_origin(tp) in (types.UnionType, typing.Union) and type(None) in get_args(tp):
        inner = [a for a in get_args(tp) if a is not type(None)]
        return (inner[0] if len(inner) == 1 else tp), True
    return tp, False


def flag_choices(ff: FlatField) -> tuple[str, ...] | None:
    """The values a choice setting's flag accepts (`none` included when it can be switched off)."""
    inner, optional = _optional_inner(ff.type)
    if get_origin(inner) is not Literal:
        return None
    return tuple(str(a) for a in get_args(inner)) + (("none",) if optional else ())


def is_list_setting(ff: FlatField) -> bool:
    return get_origin(_optional_inner(ff.type)[0]) is tuple


def flag_metavar(ff: FlatField) -> str:
    """How a flag's value is written in help: `{a,b}` for choices, `A,B,...` for lists, N or X for numbers."""
    choices = flag_choices(ff)
    if choices is not None:
        return "{" + ",".join(choices) + "}"
    inner, _ = _optional_inner(ff.type)
    if get_origin(inner) is tuple:
        item = (get_args(inner) or (str,))[0]
        return "N,N,..." if item is int else "ITEM,ITEM,..."
    return {int: "N", float: "X"}.get(inner, "VALUE")


def default_text(value: Any) -> str:
    """A default as a user would type it: `none`, `200,404`, `on`/`off`, never a Python repr."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) if value else "none (empty list)"
    return str(value)


def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def is_config(obj_or_cls: Any) -> bool:
    return dataclasses.is_dataclass(obj_or_cls)


def flat_fields(cls: type, prefix: tuple[str, ...] = (), hashed: bool = True) -> Iterator[FlatField]:
    """Every leaf setting of a config tree, depth first, in declaration order."""
    hints = _hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        f_hashed = hashed and f.metadata.get("hashed", True)
        if isinstance(tp, type) and is_config(tp):
            yield from flat_fields(tp, prefix + (f.name,), f_hashed)
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[operator]
        yield FlatField(prefix + (f.name,), tp, default, f.metadata.get("help", ""), f.metadata.get("flag"), f_hashed)


def to_dict(cfg: Any, *, hashed_only: bool = False) -> dict[str, Any]:
    """The nested plain-data form of a config (tuples become lists, as in TOML and JSON)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        if hashed_only and not f.metadata.get("hashed", True):
            continue
        value = getattr(cfg, f.name)
        if is_config(value):
            out[f.name] = to_dict(value, hashed_only=hashed_only)
        elif isinstance(value, tuple):
            out[f.name] = list(value)
        else:
            out[f.name] = value
    return out


def config_hash(cfg: Any) -> str:
    """A digest of every setting that can change the output (engine and progress settings excluded)."""
    blob = json.dumps(to_dict(cfg, hashed_only=True), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _type_name(tp: Any) -> str:
    if get_origin(tp) is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def coerce(tp: Any, value: Any, where: str) -> Any:
    """Check `value` against the annotation `tp` and return it in canonical form.

    Accepts what TOML and JSON produce (lists for tuples, ints for floats). Raises `ConfigError`
    naming the setting, the expected type and the value.
    """
    origin = get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = get_args(tp)
        # TOML has no null: "none" (or "off") switches an optional setting off in a config file
        if type(None) in args and (
            value is None or (isinstance(value, str) and value.strip().lower() in ("none", "off"))
        ):
            return None
        options = [a for a in args if a is not type(None)]
        for arg in options:
            try:
                return coerce(arg, value, where)
            except ConfigError as exc:
                if len(options) == 1:  # the usual Optional[X]: say what X wanted
                    raise ConfigError(f"{exc} (or none)") from None
        names = " or ".join(_type_name(a) for a in options)
        raise ConfigError(f"{where}: expected {names} or none, got {value!r}")
    if origin is Literal:
        if value in get_args(tp):
            return value
        choices = ", ".join(repr(a) for a in get_args(tp))
        raise ConfigError(f"{where}: expected one of {choices}, got {value!r}")
    if origin is tuple:
        args = get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        item_tp = args[0] if args else Any
        return tuple(coerce(item_tp, v, f"{where}[{i}]") for i, v in enumerate(value))
    if tp is Any:
        return value
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected true or false, got {value!r}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise ConfigError(f"{where}: expected an integer, got {value!r}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where}: expected a string, got {value!r}")
    if tp is type(None):
        if value is None:
            return None
        raise ConfigError(f"{where}: expected none, got {value!r}")
    raise ConfigError(f"{where}: unsupported setting type {tp!r}")


def from_dict(cls: type, data: dict[str, Any], where: str = "") -> Any:
    """Build a config from nested plain data, validating every key and value.

    Missing keys take their declared defaults; unknown keys are errors that name the known ones.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{where or 'config'}: expected a table, got {data!r}")
    hints = _hints(cls)
    names = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(names))
    if unknown:
        known = ", ".join(sorted(names))
        raise ConfigError(f"unknown setting {'.'.join(filter(None, [where, unknown[0]]))!r} (known here: {known})")
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        tp = hints[name]
        path = f"{where}.{name}" if where else name
        if isinstance(tp, type) and is_config(tp):
            kwargs[name] = from_dict(tp, value, path)
        else:
            kwargs[name] = coerce(tp, value, path)
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:  # __post_init__ validation of contradictions
        raise ConfigError(f"{where or 'config'}: {exc}") from exc


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge two nested dicts (override wins); used for defaults < file < flags."""
    out = dict(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


def nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {path[-1]: value}
    for p in reversed(path[:-1]):
        out = {p: out}
    return out


def parse_flag_value(ff: FlatField, text: str) -> Any:
    """Turn a command-line string into a value of the field's type (`none` means None)."""
    tp = ff.type
    args = get_args(tp)
    optional = get_origin(tp) in (types.UnionType, typing.Union) and type(None) in args
    if optional and text.strip().lower() in ("none", "off"):
        return None
    inner = [a for a in args if a is not type(None)] if optional else [tp]
    last_error: ConfigError | None = None
    for candidate in inner:
        try:
            return coerce(candidate, _parse_scalar(candidate, text), ff.long_flag)
        except (ConfigError, ValueError) as exc:
            last_error = exc if isinstance(exc, ConfigError) else ConfigError(f"{ff.long_flag}: {exc}")
    if optional and last_error is not None and "or none" not in str(last_error):
        last_error = ConfigError(f"{last_error} (or none)")
    raise last_error or ConfigError(f"{ff.long_flag}: cannot parse {text!r}")


def _parse_scalar(tp: Any, text: str) -> Any:
    if tp is int:
        try:
            return int(text.replace("_", ""))
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None
    if tp is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None
    if tp is bool:
        low = text.lower()
        if low in ("true", "yes", "1", "on"):
            return True
        if low in ("false", "no", "0", "off"):
            return False
        raise ValueError(f"expected true/false, got {text!r}")
    if get_origin(tp) is tuple:
        # comma-separated; numbers may also be separated by spaces ("200 404", quoted as one argument)
        item_tp = (get_args(tp) or (str,))[0]
        parts = re.split(r"[,\s]+" if item_tp in (int, float) else r",", text)
        return [_parse_scalar(item_tp, t.strip()) for t in parts if t.strip()]
    if get_origin(tp) is Literal:
        for a in get_args(tp):
            if str(a) == text:
                return a
        return text
    return text
