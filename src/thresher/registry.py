"""Named extension points: readers, extractors, rule sets, classifier kinds, encoders, near-dedup
methods, output formats, engines, dedup keep policies.

A `Registry` maps a name (what the config and the CLI say: `--input-format warc`, `--format
parquet`, `--engine pool`) to an object. Built-in entries are `module:attribute` strings,
imported only when used, so a registry costs nothing until a build asks for one of its names.
Third-party packages add entries through Python entry points in the registry's group
(`thresher.readers`, `thresher.extractors`, `thresher.stages`, `thresher.classifiers`,
`thresher.encoders`, `thresher.dedup_methods`, `thresher.formats`, `thresher.engines`): installing
the package is enough, no thresher file changes (`examples/plugins/` has one package per kind).
Adding a built-in is one new module plus one line in the registry's table.
See docs/architecture.md, "Extending thresher".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from thresher.core.errors import ConfigError

T = TypeVar("T")


def load_object(ref: str) -> object:
    """The object a `module:attribute` reference names."""
    module, _, attr = ref.partition(":")
    obj: object = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Names to objects: built-ins (lazy references), registrations, then entry points of `group`.
    A name registered twice keeps the first (a plugin cannot replace a built-in silently)."""

    def __init__(
        self, kind: str, group: str, builtins: dict[str, str], check: Callable[[object], T] | None = None
    ) -> None:
        self.kind = kind
        self.group = group
        self.refs: dict[str, str | object] = dict(builtins)
        self.loaded: dict[str, T] = {}
        self.check = check
        self._plugins_loaded = False

    def register(self, name: str, obj: T | str) -> None:
        self.refs.setdefault(name, obj)

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points  # ~20 ms to import: only when a name is not built in

        for ep in sorted(entry_points(group=self.group), key=lambda e: e.name):
            self.refs.setdefault(ep.name, ep.value)

    def names(self) -> list[str]:
        """Every known name: built-ins in their declared order, then registrations and plugins."""
        self._load_plugins()
        return list(self.refs)

    def names_so_far(self) -> list[str]:
        """`names` without looking for plugins (the built-ins and registrations, and plugins only if
        something already loaded them): the same order, so a first match found here is `names`'s."""
        return list(self.refs)

    def __contains__(self, name: object) -> bool:
        if name in self.refs:
            return True
        self._load_plugins()
        return name in self.refs

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        hit = self.loaded.get(name)
        if hit is not None:
            return hit
        if name not in self:
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {', '.join(self.names())})")
        ref = self.refs[name]
        obj = load_object(ref) if isinstance(ref, str) else ref
        value: T = self.check(obj) if self.check is not None else obj  # type: ignore[assignment]
        self.loaded[name] = value
        return value
