"""The extractor protocol: every extractor (built-in, trafilatura, resiliparse) looks like this."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

# The clock extraction deadlines are measured on: this thread's CPU time, so that a busy machine
# (other processes taking the cores) does not time out a page an idle one extracts.
cpu_clock = time.thread_time


class ExtractionTimeout(Exception):
    """Raised by an extractor that passed its deadline (checked cooperatively in its loops)."""


@dataclass(slots=True)
class Extraction:
    """What an extractor found on a page.

    `text` is the main content (plain text or Markdown, per config). `metadata` holds what the page
    declares when present: author, date, lang, description, canonical_url, sitename. `tables` holds
    tables removed from `text` when the table mode is `split` (each a Markdown pipe table).
    """

    text: str
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tables: list[str] = field(default_factory=list)


class Extractor(Protocol):
    name: str

    def version(self) -> str: ...

    def extract(self, html: str, url: str | None = None, deadline: float | None = None) -> Extraction:
        """Extract main content. `deadline` is a `cpu_clock()` value; past it, raise
        `ExtractionTimeout`. Must not recurse on document depth (pages nest 100,000 levels)."""
        ...
