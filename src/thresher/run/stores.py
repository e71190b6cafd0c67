"""Which work store a work dir gets: an object store for an fsspec URL, else a folder.

Kept apart from `thresher.run.store` (the interface and the local store) so that the interface never
imports the object store, which imports it: the choice is the only place that knows both.
"""

from __future__ import annotations

from pathlib import Path

from thresher.paths import is_url, local_path
from thresher.run.store import LocalWorkStore, WorkStore


def open_work_store(location: str | Path) -> WorkStore:
    """The store for a work dir: an fsspec URL's object store (fsspec imported only then), else a folder."""
    text = str(location)
    if is_url(text):
        from thresher.run.store_object import ObjectWorkStore

        return ObjectWorkStore(text)
    return LocalWorkStore(local_path(text))
