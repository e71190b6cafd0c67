"""JSON input held to what JSON output can carry: strict UTF-8 and finite numbers.

Python's `json` accepts two things that are not JSON and that a shard must never contain: the
literals `NaN`, `Infinity` and `-Infinity` (RFC 8259 has no such numbers; Node and most loaders
reject them), and `\\ud800`-style escapes of lone surrogates (a code point UTF-8 cannot encode, so
the shard line would be invalid UTF-8). `loads_strict` converts or refuses the first and replaces
the second with U+FFFD, and says which it did so that the reader can count it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
NON_FINITE = "non_finite_number"
LONE_SURROGATE = "lone_surrogate"


class NonFiniteNumber(ValueError):
    """A NaN or Infinity literal, with `non_finite="refuse"`."""


def loads_strict(text: str, non_finite: Literal["null", "refuse"] = "null") -> tuple[Any, set[str]]:
    """`json.loads(text)` with non-finite numbers as None (or `NonFiniteNumber`) and lone surrogates
    replaced; the second value names what was changed (`NON_FINITE`, `LONE_SURROGATE`)."""
    notes: set[str] = set()

    def constant(name: str) -> None:
        if non_finite == "refuse":
            raise NonFiniteNumber(f"{name} is not a JSON number")
        notes.add(NON_FINITE)
        return None

    value = json.loads(text, parse_constant=constant)
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        value, replaced = _replace_surrogates(value)
        if replaced:
            notes.add(LONE_SURROGATE)
    return value, notes


def _replace_surrogates(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        cleaned = _SURROGATE.sub("\ufffd", value)
        return cleaned, cleaned is not value and cleaned != value
    if isinstance(value, list):
        changed = False
        out = []
        for item in value:
            item, c = _replace_surrogates(item)
            out.append(item)
            changed |= c
        return out, changed
    if isinstance(value, dict):
        changed = False
        result = {}
        for key, item in value.items():
            key, ck = _replace_surrogates(key)
            item, ci = _replace_surrogates(item)
            result[key] = item
            changed |= ck or ci
        return result, changed
    return value, False
