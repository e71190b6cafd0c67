"""The archive reader the registry names for `warc` input: FastWARC framing (`warc_fast`, the fast
extra) where it can read the file, else the pure reader (`warc`). A module of its own so that
neither reader imports the other's chooser (`warc_fast` builds on `warc`)."""

from __future__ import annotations

from collections.abc import Iterator

from thresher.read.base import Event, Partition, ReadItem
from thresher.read.config import InputConfig
from thresher.read.warc import read_warc_pure, warc_settings


def read_warc(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    """Every item of an archive partition: Documents for HTML responses (and WET conversions), Skips
    for revisits and responses that are no page, Malformed for what cannot be read, located."""
    wcfg = warc_settings(config)
    from thresher.read.paths import is_url

    if wcfg.engine != "pure" and not is_url(partition.path):  # FastWARC framing needs a local file
        try:
            from thresher.read.warc_fast import fast_available, read_warc_fast
        except ImportError:
            usable = False
        else:
            usable = fast_available()
        if usable:
            yield from read_warc_fast(partition, config, wcfg)
            return
        if wcfg.engine == "fast":
            yield Event("fast_unavailable", partition.path, "FastWARC is not installed: reading with the pure reader")
    yield from read_warc_pure(partition, config, wcfg)
