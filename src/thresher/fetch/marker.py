"""The marker file of a crawl folder: what `thresher fetch` writes so that readers know the folder.

`thresher fetch` writes `.thresher-crawl` (JSON) into its output folder before anything else. A
folder that carries it is read as its WARC archive alone: `thresher build crawl/` takes
`crawl/warc/*.warc.gz` and never the fetch log, the stats or the on-disk plan, whatever those are
named. The marker names the archive folder, so the layout can change without readers guessing from
file names. Standard library only: the readers import it without the `fetch` extra.
"""

from __future__ import annotations

import json
from typing import Any

MARKER = ".thresher-crawl"
FORMAT = "thresher-crawl"
VERSION = 1


def marker_record(archive: str) -> dict[str, Any]:
    """The marker's content: the format, its version, and the archive folder (relative)."""
    return {"format": FORMAT, "version": VERSION, "archive": archive}


def archive_of(text: str) -> str | None:
    """The archive folder a marker names, or None when `text` is not a crawl marker (another
    program's file of the same name is then not taken for one)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    archive = data.get("archive")
    if not isinstance(archive, str) or not archive or archive.startswith(("/", "..")) or "\\" in archive:
        return None
    return archive
