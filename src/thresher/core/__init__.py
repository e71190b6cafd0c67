"""The data model every stage shares. Standard library only, no I/O (a test enforces it)."""

from thresher.core.document import Document, Drop, Malformed, make_doc_id, record_id
from thresher.core.errors import (
    ConfigError,
    DatasetError,
    InputError,
    ThresherError,
    WorkDirError,
)
from thresher.core.stats import Stats

__all__ = [
    "ConfigError",
    "DatasetError",
    "Document",
    "Drop",
    "InputError",
    "Malformed",
    "Stats",
    "ThresherError",
    "WorkDirError",
    "make_doc_id",
    "record_id",
]
