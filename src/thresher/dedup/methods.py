"""The registry of near-duplicate methods by name (`dedup.near.method`, `--method`).

Each entry is a class (or factory) called with the `NearDedupConfig` that returns a `CorpusStage`
(`thresher.core.stages`): scan keys and a payload per document, candidate pairs per key, and a
verified similarity. A new method is one module with its stage plus one line here; a third-party
package registers one through an entry point in the `thresher.dedup_methods` group.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thresher.registry import Registry

NEAR_METHODS: Registry[Callable[[Any], Any]] = Registry(
    "near-dedup method",
    "thresher.dedup_methods",
    {
        "minhash": "thresher.dedup.near:MinHashDedup",
        "simhash": "thresher.dedup.near:SimHashDedup",
    },
)
