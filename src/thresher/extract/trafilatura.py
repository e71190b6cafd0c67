"""Adapter for trafilatura (the `trafilatura` extra), behind the extractor protocol.

trafilatura cannot be interrupted, so the deadline is checked when it returns: a page that took
too long still becomes a `timeout` drop, as with the built-in extractor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from thresher.core.errors import ConfigError
from thresher.extract.base import Extraction, ExtractionTimeout, cpu_clock

if TYPE_CHECKING:
    from thresher.extract.config import ExtractConfig

_META_KEYS = {"author": "author", "date": "date", "description": "description", "url": "canonical_url",
              "sitename": "sitename"}


def _import() -> Any:
    try:
        import trafilatura
    except ImportError as exc:
        raise ConfigError(
            "extractor 'trafilatura' needs the trafilatura extra: pip install 'thresher[trafilatura]'"
        ) from exc
    return trafilatura


class TrafilaturaExtractor:
    name = "trafilatura"

    def __init__(self, text_format: str = "text", tables: str = "keep", comments: str = "drop") -> None:
        self._lib = _import()
        self.text_format = text_format
        self.tables = tables
        self.comments = comments

    def version(self) -> str:
        return str(self._lib.__version__)

    def extract(self, html: str, url: str | None = None, deadline: float | None = None) -> Extraction:
        lib = self._lib
        text = lib.extract(
            html,
            url=url,
            output_format="markdown" if self.text_format == "markdown" else "txt",
            include_tables=self.tables != "drop",
            include_comments=self.comments == "keep",
            with_metadata=False,
        )
        if deadline is not None and cpu_clock() > deadline:
            raise ExtractionTimeout("trafilatura passed the deadline")
        meta = lib.extract_metadata(html, default_url=url)
        data = meta.as_dict() if meta is not None else {}
        metadata = {ours: data[theirs] for theirs, ours in _META_KEYS.items() if data.get(theirs)}
        if data.get("language"):
            metadata["lang"] = data["language"]
        return Extraction(text=text or "", title=data.get("title") or None, metadata=metadata)


def from_config(config: ExtractConfig) -> TrafilaturaExtractor:
    """The registry's factory (`thresher.extract.registry`): the adapter with the config's options."""
    return TrafilaturaExtractor(text_format=config.text_format, tables=config.tables, comments=config.comments)
