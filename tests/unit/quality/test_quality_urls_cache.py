"""Issue 14 item 5: a URL block list is read once per process, not once per scan task; a changed
file is read again."""

import os
from collections import OrderedDict

from thresher.core.document import Document
from thresher.quality import url_lists, urls
from thresher.quality.urls import UrlFilter, UrlFilterConfig


def test_block_list_is_loaded_once_per_process_and_again_when_the_file_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(url_lists, "_loaded", OrderedDict())
    calls = []
    real = urls.load_url_lists

    def counting(paths):
        calls.append(tuple(paths))
        return real(paths)

    monkeypatch.setattr(urls, "load_url_lists", counting)
    blocklist = tmp_path / "domains.txt"
    blocklist.write_text("spam.example\n")
    config = UrlFilterConfig(blocklists=(str(blocklist),))
    filters = [UrlFilter(config) for _ in range(5)]  # five scan tasks in one worker
    assert calls == [(str(blocklist),)]
    doc = Document(id="1", url="https://www.spam.example/x", text="t")
    assert all(f.check(doc) is not None for f in filters)

    blocklist.write_text("other.example\nmore.example\n")
    os.utime(blocklist, ns=(1, 1))  # a different size and mtime: read again
    fresh = UrlFilter(config)
    assert len(calls) == 2
    assert fresh.check(doc) is None
    assert fresh.check(Document(id="2", url="https://other.example/", text="t")) is not None
