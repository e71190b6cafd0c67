"""Choosing the extractor a config names. Third-party extractors are imported only when chosen."""

from __future__ import annotations

from thresher.core.errors import ConfigError
from thresher.extract.base import Extractor
from thresher.extract.config import ExtractConfig

EXTRACTORS = ("builtin", "trafilatura", "resiliparse")


def get_extractor(config: ExtractConfig) -> Extractor:
    """The extractor `config.extractor` names, set up with the config's output options.

    Raises `ConfigError` (with the install hint) when a third-party extractor's extra is missing.
    """
    name = config.extractor
    if name == "builtin":
        from thresher.extract.builtin import BuiltinExtractor

        return BuiltinExtractor(text_format=config.text_format, tables=config.tables, comments=config.comments)
    if name == "trafilatura":
        from thresher.extract.trafilatura import TrafilaturaExtractor

        return TrafilaturaExtractor(text_format=config.text_format, tables=config.tables, comments=config.comments)
    if name == "resiliparse":
        from thresher.extract.resiliparse import ResiliparseExtractor

        return ResiliparseExtractor(text_format=config.text_format, tables=config.tables)
    raise ConfigError(f"unknown extractor {name!r} (known: {', '.join(EXTRACTORS)})")


def extractor_info(config: ExtractConfig) -> dict[str, str]:
    """What the manifest records about extraction: the extractor's name and its version (the
    built-in extractor's version is thresher's; an adapter's is the third-party package's)."""
    extractor = get_extractor(config)
    return {"name": extractor.name, "version": extractor.version()}
