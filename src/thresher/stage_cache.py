"""Built corpus stages, per process, and the warm-up that hands them to worker processes.

Corpus stage objects are stateless and their construction can be costly (LSH parameters are
derived numerically: ~0.2 s), so each process builds them once per dedup config
(`thresher.pipeline.build_corpus_stages`). A pool's workers are started with the driver's
(`worker_warmup`): the engine only carries an opaque (function, bytes) pair, so it knows nothing of
stages.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

# keyed by the settings the stages are made from (configs that differ only elsewhere share them)
_built: dict[Any, list[Any]] = {}


def cached(key: Any, make: Callable[[], list[Any]]) -> list[Any]:
    stages = _built.get(key)
    if stages is None:
        stages = _built[key] = make()
    return stages


def is_cached(key: Any) -> bool:
    return key in _built


def seed(blob: bytes) -> None:
    """Adopt the stages another process built (`worker_warmup`); never fails a worker's start."""
    try:
        for key, stages in pickle.loads(blob).items():
            _built.setdefault(key, stages)
    except Exception:  # noqa: BLE001 - only a warm-up: the stages are built on demand instead
        log.debug("could not seed the corpus stages", exc_info=True)


def worker_warmup() -> tuple[Callable[[bytes], None], bytes] | None:
    """(seed, the stages this process has built, pickled) for a new worker; None when there are
    none or they cannot be pickled (each worker then builds its own)."""
    if not _built:
        return None
    try:
        return seed, pickle.dumps(dict(_built), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a stage that does not pickle is built by each worker
        return None
