"""Benchmark decontamination: an n-gram index of benchmark items, and the stages that drop or cut
documents sharing n-grams with them. See docs/decontamination.md."""

# The package face is lazy (PEP 562): the config of this package is imported by every command,
# and importing it must not import the implementation behind these names.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from thresher.decontam.config import DecontamConfig
    from thresher.decontam.index import NgramIndex, build_index
    from thresher.decontam.index_store import load_index
    from thresher.decontam.stage import DecontamCut, DecontamFilter

_EXPORTS = {
    "DecontamConfig": "thresher.decontam.config",
    "NgramIndex": "thresher.decontam.index",
    "build_index": "thresher.decontam.index",
    "load_index": "thresher.decontam.index_store",
    "DecontamCut": "thresher.decontam.stage",
    "DecontamFilter": "thresher.decontam.stage",
}

__all__ = ["DecontamConfig", "DecontamCut", "DecontamFilter", "NgramIndex", "build_index", "load_index"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
