"""The registry of main-content extractors by name (`extract.extractor`, `--extractor`).

Each entry is a factory `(config: ExtractConfig) -> Extractor` (`thresher.extract.base`): it builds
the extractor with the config's output options (text format, tables, comments). A built-in is one
module with its extractor and factory plus one line in the table below; a third-party package
registers a factory through an entry point in the `thresher.extractors` group and is then chosen by
name like a built-in. Nothing is imported until a build asks for the name (trafilatura and
resiliparse, whose extras may be missing, are imported only when chosen).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from thresher.registry import Registry

if TYPE_CHECKING:  # the config checks its extractor's name here: no import back
    from thresher.extract.base import Extractor
    from thresher.extract.config import ExtractConfig

ExtractorFactory = Callable[["ExtractConfig"], "Extractor"]

BUILTIN = "builtin"
BUILTIN_FACTORY = "thresher.extract.builtin:from_config"

EXTRACTORS: Registry[ExtractorFactory] = Registry(
    "extractor",
    "thresher.extractors",
    {
        BUILTIN: BUILTIN_FACTORY,
        "trafilatura": "thresher.extract.trafilatura:from_config",
        "resiliparse": "thresher.extract.resiliparse:from_config",
    },
)


def get_extractor(config: ExtractConfig) -> Extractor:
    """The extractor `config.extractor` names, set up with the config's output options.

    Raises `ConfigError` for an unknown name (listing the known ones) and, with the install hint,
    when a third-party extractor's extra is missing.
    """
    return EXTRACTORS.get(config.extractor)(config)


def extractor_info(config: ExtractConfig) -> dict[str, str]:
    """What the manifest records about extraction: the extractor's name and its version (the
    built-in extractor's version is thresher's; an adapter's or a plugin's is its package's)."""
    if config.extractor == BUILTIN and EXTRACTORS.refs.get(BUILTIN) == BUILTIN_FACTORY:
        # known without importing the extraction modules (~40 ms), which a run that extracts
        # nothing (`thresher replay`) would import for these two strings alone
        from thresher.version import __version__

        return {"name": BUILTIN, "version": __version__}
    extractor = get_extractor(config)
    return {"name": extractor.name, "version": extractor.version()}
