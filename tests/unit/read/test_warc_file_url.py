"""Issue 14 item 2: a `file://` archive input reads the same documents with the FastWARC reader as
with the pure one (it used to open the raw URL string and yield nothing)."""

from __future__ import annotations

import pytest
from tests.conftest import shared_path

from thresher.core.config import from_dict
from thresher.core.document import Document
from thresher.read.archive import read_warc
from thresher.read.base import Partition
from thresher.read.config import InputConfig

pytest.importorskip("fastwarc.warc")


def documents(path: str, engine: str) -> list[tuple[str | None, str]]:
    config = from_dict(InputConfig, {"warc": {"engine": engine}}, "input")
    items = read_warc(Partition(0, "warc", (path,)), config)
    return [(d.url, d.html or "") for d in items if isinstance(d, Document)]


def test_file_url_archive_reads_the_same_documents_on_the_fast_and_pure_readers():
    local = shared_path("warc", "dolma", "sample-0000.warc.gz")
    url = local.absolute().as_uri()
    fast = documents(url, "fast")
    pure = documents(url, "pure")
    assert len(pure) == 22
    assert fast == pure
    assert documents(str(local), "fast") == pure
