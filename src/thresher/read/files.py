"""A directory or glob of HTML files: each file is one page (`.html`, `.htm`, `.html.gz`), whose `url` is
the file's own: an absolute, percent-encoded `file://` URL for a local file, the URL as given for a remote
one. The document id stays derived from the path as given (`source.file`), not from the URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from thresher.core.document import Document, Malformed, record_id
from thresher.core.errors import InputError
from thresher.paths import is_url, local_path
from thresher.read.base import Event, Partition, ReadItem, make_ordinal
from thresher.read.config import InputConfig
from thresher.read.decode import decode_html
from thresher.read.sniff import open_binary


def file_url(path: str) -> str:
    """A page file's URL: `s3://...` and the like as given; a local path (or `file://` URL) as the absolute
    `file://` URL of the file it resolves to, percent-encoded."""
    if is_url(path):
        return path
    return Path(local_path(path)).resolve().as_uri()


def read_html_files(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    for index, path in enumerate(partition.paths):
        try:
            with open_binary(path) as stream:
                data = stream.read(config.max_record_bytes + 1)
        except EOFError as exc:  # a gzip or zstd stream cut short: named as the JSONL reader names it
            yield Malformed("truncated_input", path, str(exc) or type(exc).__name__)
            continue
        except (InputError, OSError) as exc:
            yield Malformed("unreadable_file", path, str(exc) or type(exc).__name__)
            continue
        except Exception as exc:  # noqa: BLE001 - a codec's own error (zstandard.ZstdError): this file only
            yield Malformed("corrupt_input", path, f"{type(exc).__name__}: {exc}")
            continue
        if len(data) > config.max_record_bytes:
            yield Malformed("too_large", path, f"more than {config.max_record_bytes} bytes")
            continue
        if not data.strip():
            yield Event("empty_file", path)
            continue
        html, charset, fell_back = decode_html(data)
        doc = Document(
            id=record_id({"file": path}),
            url=file_url(path),
            html=html,
            source={"file": path, "charset": charset},
            ordinal=make_ordinal(partition.index, index),
        )
        yield doc
        if fell_back:
            yield Event("charset_fallback", path, charset)
