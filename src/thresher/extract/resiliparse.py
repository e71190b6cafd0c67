"""Adapter for Resiliparse (the `resiliparse` extra), behind the extractor protocol.

Resiliparse cannot be interrupted, so the deadline is checked when it returns. It reports no
page metadata beyond the title; `<html lang>` and the rest come from the built-in metadata reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from thresher.core.errors import ConfigError
from thresher.extract.base import Extraction, ExtractionTimeout, cpu_clock
from thresher.extract.metadata import extract_metadata
from thresher.extract.tree import parse

if TYPE_CHECKING:
    from thresher.extract.config import ExtractConfig


def _import() -> tuple[Any, Any, str]:
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree
    except ImportError as exc:
        raise ConfigError(
            "extractor 'resiliparse' needs the resiliparse extra: pip install 'thresher[resiliparse]'"
        ) from exc
    from importlib.metadata import PackageNotFoundError, version

    try:
        ver = version("resiliparse")
    except PackageNotFoundError:
        ver = "unknown"
    return HTMLTree, extract_plain_text, ver


class ResiliparseExtractor:
    name = "resiliparse"

    def __init__(self, text_format: str = "text", tables: str = "keep") -> None:
        self._tree, self._extract, self._version = _import()
        self.text_format = text_format
        self.tables = tables

    def version(self) -> str:
        return self._version

    def extract(self, html: str, url: str | None = None, deadline: float | None = None) -> Extraction:
        tree = self._tree.parse(html)
        text = self._extract(tree, main_content=True, list_bullets=True, preserve_formatting=True)
        if deadline is not None and cpu_clock() > deadline:
            raise ExtractionTimeout("resiliparse passed the deadline")
        metadata = extract_metadata(parse(html[:200_000], deadline))
        return Extraction(text=text or "", title=(tree.title or "").strip() or None, metadata=metadata)


def from_config(config: ExtractConfig) -> ResiliparseExtractor:
    """The registry's factory (`thresher.extract.registry`): the adapter with the config's options
    (resiliparse keeps no comment threads apart, so `comments` does not apply)."""
    return ResiliparseExtractor(text_format=config.text_format, tables=config.tables)
