"""thresher: turn a web crawl into an ML-ready text corpus.

The library API: `build` (the whole pipeline into a dataset folder), `Pipeline` (streaming,
documents out as they pass), `read_shards` / `verify_dataset` (read and check a dataset through its
manifest), and the data model (`Document`, `Drop`, `Stats`, `RunConfig`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from thresher.version import __version__

logging.getLogger(__name__).addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from thresher.config import RunConfig
    from thresher.core.document import Document, Drop
    from thresher.core.stats import Stats
    from thresher.pipeline import Pipeline
    from thresher.run.build import BuildResult, build
    from thresher.write.manifest import read_shards, verify_dataset

_EXPORTS = {
    "RunConfig": "thresher.config",
    "Document": "thresher.core.document",
    "Drop": "thresher.core.document",
    "Stats": "thresher.core.stats",
    "Pipeline": "thresher.pipeline",
    "build": "thresher.run.build",
    "BuildResult": "thresher.run.build",
    "read_shards": "thresher.write.manifest",
    "verify_dataset": "thresher.write.manifest",
}

__all__ = [
    "BuildResult",
    "Document",
    "Drop",
    "Pipeline",
    "RunConfig",
    "Stats",
    "__version__",
    "build",
    "read_shards",
    "verify_dataset",
]


def __getattr__(name: str) -> Any:
    # lazy, so that `import thresher` stays cheap for the CLI and for worker processes
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'thresher' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
