"""heliport's model, loaded when this module is imported (the `wide` extra).

heliport (HPLT's language identifier, 242 languages) keeps its n-gram tables inside its wheel and
reads them all when an `Identifier` is built: ~1 CPU s and ~880 MiB. The pool engine's fork server
imports this module before it forks any worker when a build's detector is `wide`
(`thresher.pipeline.fork_server_preloads`), so the tables are read once per build and the workers
share their pages (nothing writes to them) instead of each holding its own copy. Outside the pool,
the first wide detector of a process loads it through `identifier()`; results do not change.
"""

from __future__ import annotations

from typing import Any

_loaded: list[Any] = []  # the one Identifier of the process, kept for its life


def available() -> bool:
    try:
        import heliport  # noqa: F401
    except ImportError:
        return False
    return True


def identifier() -> Any:
    """The process's heliport `Identifier` (built on first use); ImportError without the extra."""
    if not _loaded:
        import heliport

        _loaded.append(heliport.Identifier())
    return _loaded[0]


if available():
    identifier()
