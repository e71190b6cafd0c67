"""The document index a build writes beside its shards, so `thresher explain` finds any document by
id or URL without scanning the dataset.

Layout (`DATASET/index/`): `index.json` (version, bucket count, documents), `ids-XXXX.jsonl.gz` —
one entry per input document that became a document (kept or dropped), bucketed by a hash of its
id and sorted by id within the bucket — and `urls-XXXX.jsonl.gz`, bucketed by a hash of the URL,
(the hash: CRC-32 of the UTF-8 key from version 2; 64 bits of BLAKE2b in version 1, still read),
mapping each URL to the ids it produced. An entry says where the document went: `kept` with its
shard and row, or `dropped` with its `Drop`; and where it came from (`source`). A lookup
decompresses one bucket (the bucket count grows with the corpus, so a bucket holds a few thousand
entries: ~10-20 ms).

Writing is bounded: entries are appended to per-bucket part files as they come (from any number
of tasks), and each bucket is sorted on its own when the index is finished.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from thresher.core.errors import DatasetError
from thresher.report.sample import stable_hash

INDEX_DIR = "index"
# the files of `index/`: its header and the buckets (`verify` checks each against the header)
INDEX_FILE = re.compile(r"^(?:index\.json|(?:ids|urls)-[0-9a-f]{4}\.jsonl\.gz)$")
# 2: buckets by CRC-32 (a fifth of BLAKE2b's cost per key through hashlib; the build hashes every
# id and URL once in the merge); 1: by `stable_hash` (BLAKE2b), still read
VERSION = 2
READABLE_VERSIONS = (1, 2)
TARGET_BUCKET_ENTRIES = 4096
# zlib level 3, not gzip's default 9: on index lines 9 costs 7x the CPU of 3 for 13% fewer bytes
# (6: 2.2x for 11%), and the driver compresses the whole index serially at the end of a build
INDEX_GZIP_LEVEL = 3


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def header_defect(header: Any) -> str | None:
    """What makes a parsed `index.json` unusable (None: it can be read)."""
    if not isinstance(header, dict):
        return f"not an index header: a JSON {type(header).__name__}, not an object"
    if header.get("version") not in READABLE_VERSIONS:
        return (f"index version {header.get('version')!r} is not one of {', '.join(map(str, READABLE_VERSIONS))} "
                "(rebuild the dataset)")
    buckets, documents = header.get("buckets"), header.get("documents")
    if not isinstance(buckets, int) or isinstance(buckets, bool) or not 1 <= buckets <= 65_536:
        return f"buckets is {buckets!r}, not a bucket count"
    if not isinstance(documents, int) or isinstance(documents, bool) or documents < 0:
        return f"documents is {documents!r}, not a count"
    files = header.get("files")
    if files is not None and not (
        isinstance(files, dict)
        and all(isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in files.values())
    ):
        return "files is not a table of file sizes and digests"
    return None


def bucket_count(documents: int) -> int:
    """A power of two giving about TARGET_BUCKET_ENTRIES entries a bucket (at least 1, at most 65,536)."""
    b = 1
    while b < 65_536 and documents / b > TARGET_BUCKET_ENTRIES:
        b *= 2
    return b


def json_string(text: str) -> str | None:
    """A JSON string (or `null`) decoded; one with no escape is its inside, no parser needed."""
    if text == "null":
        return None
    if "\\" not in text:
        return text[1:-1]
    value: str = json.loads(text)
    return value


# What would end a part line or its key: the tab after the key, and every line boundary of
# `str.splitlines` and of text-mode reading (\r), not only "\n"
_LINE_BREAKING = str.maketrans(dict.fromkeys("\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def _tab_free(key: str) -> str:
    """The key as a sort prefix: a tab or line break inside an id or URL would break the part line."""
    return key.translate(_LINE_BREAKING)


def _part_lines(data: bytes) -> list[bytes]:
    """The lines of a part file: split on "\n" only (an entry's JSON may hold U+2028 or U+0085;
    keys have none, `_tab_free`)."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


# UTF-8 of the line breaks a JSON string may hold unescaped (json.dumps escapes every control character)
_RAW_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _raw_key(value_json: bytes) -> tuple[bytes, bytes]:
    """(UTF-8 of the value, UTF-8 of its sort key) of a JSON string that holds an escape or a
    non-ASCII character; decoded only for an escape or a line break."""
    inner = value_json[1:-1]
    if 92 not in inner and not any(b in inner for b in _RAW_BREAKS):  # 92: a backslash
        return inner, inner
    value = json_string(value_json.decode("utf-8")) or ""
    return value.encode("utf-8", "surrogatepass"), _tab_free(value).encode("utf-8", "surrogatepass")


def _bucket(key: str, buckets: int) -> int:
    """The bucket of a key in an index of this `VERSION` (fixed forever: the files are laid out by it)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % buckets


def _bucket_v1(key: str, buckets: int) -> int:
    return stable_hash(key) % buckets


_BUCKETS = {1: _bucket_v1, 2: _bucket}


class IndexWriter:
    """Collects index entries into part files under `parts_dir`, then writes the index.

    Part lines are buffered in memory per bucket, up to `FLUSH_BYTES` in all, and appended to
    their part files in one write each: a million-document index has 512 part files, more than a
    process should hold open, and a line-by-line append would reopen files all the time."""

    FLUSH_BYTES = 4 << 20

    def __init__(self, parts_dir: str | Path, expected_documents: int) -> None:
        self.parts = Path(parts_dir)
        self.parts.mkdir(parents=True, exist_ok=True)
        self.buckets = bucket_count(expected_documents)
        self._ids: list[list[bytes]] = [[] for _ in range(self.buckets)]
        self._urls: list[list[bytes]] = [[] for _ in range(self.buckets)]
        self._buffered = 0
        self._spilled = False  # whether part files hold lines (else every line is still in memory)
        self.documents = 0

    def add(self, entry: dict[str, Any]) -> None:
        self.add_line(entry.get("id"), entry.get("url"),
                      json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":")))

    def add_line(self, doc_id: str | None, url: str | None, line: str) -> None:
        """Add an entry given as its JSON (sorted keys, compact separators) with its id and URL."""
        self.add_json(json.dumps(doc_id, ensure_ascii=False), json.dumps(url, ensure_ascii=False), line)

    def add_json(self, id_json: str, url_json: str, line: str) -> None:
        """`add_line` with the id and URL as JSON (`json.dumps(ensure_ascii=False)`'s encoding)."""
        self.add_raw(id_json.encode("utf-8", "surrogatepass"), url_json.encode("utf-8", "surrogatepass"),
                     line.encode("utf-8", "surrogatepass"))

    def add_raw(self, id_json: bytes, url_json: bytes, line: bytes) -> None:
        """`add_json` in UTF-8, as the tasks' index parts hold it: the build's merge passes the
        lines through as bytes, decoding nothing (but an id or URL with an escape or a line break
        in it), from the parts to the written buckets, whether a bucket stays in memory or spills.
        Sorting UTF-8 bytes gives the order of sorting the decoded text (UTF-8 keeps code point
        order), so the index is the same either way."""
        self.documents += 1
        buckets = self.buckets
        has_id = id_json != b"null"
        # part lines are "<sort key>\t<JSON>": a bucket sorts on the key without decoding its lines
        if has_id:
            # an ASCII JSON string with no backslash is the id's UTF-8 (tested inline, memchr and
            # a word-wise scan: once a line on the build's serial merge)
            value = key = id_json[1:-1]
            if 92 in value or not value.isascii():
                value, key = _raw_key(id_json)
            text = b"\t".join((key, line))
            self._ids[zlib.crc32(value) % buckets if buckets > 1 else 0].append(text)
            self._buffered += len(text)
        if url_json != b"null" and url_json != b'""':
            # a record dropped by the reader (a WARC revisit) has no id: its URL entry holds it whole;
            # written by hand in the key order json.dumps(sort_keys=True) gives (entry, id, url)
            pair = (b"".join((b'{"id":', id_json, b',"url":', url_json, b"}")) if has_id
                    else b"".join((b'{"entry":', line, b',"id":null,"url":', url_json, b"}")))
            value = key = url_json[1:-1]
            if 92 in value or not value.isascii():
                value, key = _raw_key(url_json)
            text = b"\t".join((key, pair))
            self._urls[zlib.crc32(value) % buckets if buckets > 1 else 0].append(text)
            self._buffered += len(text)
        if self._buffered > self.FLUSH_BYTES:
            self.close_parts()
            self._spilled = True

    def close_parts(self) -> None:
        """Append every buffered line to its part file."""
        for kind, buffers in (("ids", self._ids), ("urls", self._urls)):
            for b, lines in enumerate(buffers):
                if lines:
                    with open(self.parts / f"{kind}-{b:04x}.part", "ab") as f:
                        f.write(b"\n".join(lines) + b"\n")
                    lines.clear()
        self._buffered = 0

    def finish(self, dataset: str | Path) -> Path:
        """Sort each bucket and write `dataset/index/`; returns its path. Deterministic: the bytes
        depend only on the entries, not on the order they were added in."""
        in_memory = not self._spilled  # an index that never outgrew memory skips its part files
        if not in_memory:
            self.close_parts()
        out = Path(dataset) / INDEX_DIR
        out.mkdir(parents=True, exist_ok=True)
        files: dict[str, dict[str, Any]] = {}
        for kind, buffers in (("ids", self._ids), ("urls", self._urls)):
            for b in range(self.buckets):
                part = self.parts / f"{kind}-{b:04x}.part"
                if in_memory:
                    keyed, buffers[b] = buffers[b], []
                else:
                    keyed = _part_lines(part.read_bytes()) if part.exists() else []
                keyed.sort()  # by key, then by the JSON itself: the order of adding never matters
                lines = [ln[ln.find(b"\t") + 1:] for ln in keyed]
                data = b"\n".join(lines) + b"\n" if lines else b""
                target = out / f"{kind}-{b:04x}.jsonl.gz"
                tmp = target.with_suffix(f".tmp-{os.getpid()}")
                with (
                    open(tmp, "wb") as raw,
                    gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0, compresslevel=INDEX_GZIP_LEVEL) as gz,
                ):
                    gz.write(data)
                os.replace(tmp, target)
                files[target.name] = {"bytes": target.stat().st_size, "sha256": _file_sha256(target)}
                if part.exists():
                    part.unlink()
        # each bucket's size and digest: `explain` refuses a damaged bucket instead of answering
        # "no such document", and `verify` checks the index file by file
        header = {"version": VERSION, "buckets": self.buckets, "documents": self.documents, "files": files}
        (out / "index.json").write_text(json.dumps(header, sort_keys=True) + "\n", encoding="utf-8")
        return out


class DocumentIndex:
    """Reads `DATASET/index/`; every defect found is a `DatasetError` naming the file."""

    def __init__(self, dataset: str | Path) -> None:
        self.root = Path(dataset) / INDEX_DIR
        header_path = self.root / "index.json"
        if not header_path.is_file():
            raise FileNotFoundError(str(header_path))
        try:
            header = json.loads(header_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise DatasetError(f"{header_path}: not a readable index header: {exc}") from exc
        defect = header_defect(header)
        if defect is not None:
            raise DatasetError(f"{header_path}: {defect}")
        self.version = int(header["version"])
        self._bucket = _BUCKETS[self.version]
        self.buckets = int(header["buckets"])
        self.documents = int(header["documents"])
        # written from version 2 on by this thresher; an older index has no digests to check against
        self.files: dict[str, dict[str, Any]] | None = header.get("files")

    def bucket_problem(self, name: str) -> str | None:
        """Why a bucket file cannot be trusted (None: it matches the header, or the header has no
        digests and it decompresses)."""
        path = self.root / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return "missing (the index header counts it)"
        except OSError as exc:
            return f"unreadable: {exc}"
        expected = None if self.files is None else self.files.get(name)
        if self.files is not None and expected is None:
            return "not listed in index.json"
        if expected is not None:
            if len(data) != expected.get("bytes"):
                return f"size {len(data)} bytes, index.json says {expected.get('bytes')} (truncated or altered)"
            if hashlib.sha256(data).hexdigest() != expected.get("sha256"):
                return "sha256 differs from index.json (altered)"
            return None
        try:
            for line in gzip.decompress(data).splitlines():
                json.loads(line)
        except (OSError, EOFError, ValueError) as exc:
            return f"damaged: {exc}"
        return None

    def bucket_names(self) -> list[str]:
        return [f"{kind}-{b:04x}.jsonl.gz" for kind in ("ids", "urls") for b in range(self.buckets)]

    def _scan(self, kind: str, key: str) -> Iterator[dict[str, Any]]:
        name = f"{kind}-{self._bucket(key, self.buckets):04x}.jsonl.gz"
        problem = self.bucket_problem(name)
        if problem is not None:
            raise DatasetError(f"{self.root / name}: {problem}; the index cannot answer (run thresher verify)")
        # lines are written with these separators, so the key's field appears verbatim: only lines
        # holding it are decoded (a bucket has thousands; decoding all of them was 0.1 s a lookup)
        field = "id" if kind == "ids" else "url"
        needle = f'"{field}":{json.dumps(key, ensure_ascii=False)}'
        with gzip.open(self.root / name, "rt", encoding="utf-8") as f:
            for line in f:
                if needle in line:
                    yield json.loads(line)

    def by_id(self, doc_id: str) -> dict[str, Any] | None:
        for entry in self._scan("ids", doc_id):
            if entry["id"] == doc_id:
                return entry
        return None

    def ids_for_url(self, url: str) -> list[str]:
        return [e["id"] for e in self._scan("urls", url) if e["url"] == url and e["id"] is not None]

    def entries_for_url(self, url: str) -> list[dict[str, Any]]:
        """Index entries of the documents with this URL (id-less reader drops included)."""
        out = []
        for e in self._scan("urls", url):
            if e["url"] != url:
                continue
            if e["id"] is None:
                out.append(e["entry"])
            else:
                entry = self.by_id(e["id"])
                if entry is not None:
                    out.append(entry)
        return out
