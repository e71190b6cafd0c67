"""Small builders shared by the quality tests."""

from __future__ import annotations

import dataclasses
from typing import Any

from thresher.core import Document


def doc(text: str, url: str | None = None, **annotations: Any) -> Document:
    return Document(id="d", text=text, url=url, annotations={k.replace("_", ".", 1): v for k, v in annotations.items()})


def only(cls: type, **enabled: Any) -> Any:
    """A config of `cls` with every optional threshold off except those given."""
    off = {}
    for f in dataclasses.fields(cls):
        if f.name in enabled:
            continue
        if isinstance(f.default, (int, float)) and not isinstance(f.default, bool) and "None" in str(f.type):
            off[f.name] = None
    return cls(**off, **enabled)
