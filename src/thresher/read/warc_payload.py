"""From one archive record to a reader item: HTTP parsing, transfer and content decoding, media-type
and charset decisions. Shared by the pure reader and the FastWARC reader, so both give the same
documents for the same record."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from thresher.core.document import Document, Drop, Malformed, record_id
from thresher.read.base import Event, ReadItem, Skip, make_ordinal
from thresher.read.decode import decode_html, normalize_charset, sniff_utf16
from thresher.read.warc_config import WarcConfig

# Media types that say nothing about the payload: sniffed when `sniff_untyped` is on.
_GENERIC_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "unknown/unknown", "application/unknown", "no-type", "unk"}
)
_BINARY_MAGIC = (
    (b"\x89PNG", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF8", "gif"),
    (b"%PDF", "pdf"),
    (b"PK\x03\x04", "zip"),
    (b"\x1f\x8b", "gzip"),
    (b"RIFF", "riff"),
    (b"wOFF", "woff"),
    (b"wOF2", "woff2"),
    (b"OggS", "ogg"),
    (b"ID3", "mp3"),
    (b"\x00\x00\x01\x00", "ico"),
    (b"CWS", "swf"),
    (b"FWS", "swf"),
)
_PAGE_TYPES = frozenset({"response", "resource", "revisit", "conversion"})
_OTHER_TYPES = frozenset({"warcinfo", "request", "metadata", "continuation"})
_HTML_MARKS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title")


@dataclass(slots=True)
class RawRecord:
    """One framed archive record. `headers` holds the WARC header fields with lower-case names (for
    ARC, the fields of its header line under WARC names); `block` is None when the record was larger
    than the size cap and skipped unread."""

    format: str  # "warc" | "arc"
    type: str  # WARC-Type, lower case; ARC records are "response" (the file header is "warcinfo")
    headers: dict[str, str]
    block: bytes | None
    length: int
    offset: int  # file offset of the record, or of the gzip member holding it
    inner_offset: int = 0  # offset of the record inside the decompressed member (file-level gzip)
    index: int = 0  # position of the record in the file, counting every record
    events: list[str] = field(default_factory=list)

    def where(self, path: str) -> str:
        return f"{path}@{self.offset}" + (f"+{self.inner_offset}" if self.inner_offset else "")

    @property
    def target_uri(self) -> str | None:
        uri = self.headers.get("warc-target-uri", "").strip()
        if uri.startswith("<") and uri.endswith(">"):
            uri = uri[1:-1].strip()  # WARC 1.1 drafts and wget write <uri>
        return uri or None


def is_number(text: str) -> bool:
    """Whether `text` is a non-negative decimal number in ASCII digits (`str.isdigit` also accepts
    superscripts and other scripts' digits, which `int` refuses)."""
    return text.isascii() and text.isdigit()


def split_media_type(value: str | None) -> tuple[str, str | None]:
    """('text/html', 'utf-8') from 'text/html; charset="UTF-8"'; the media type in lower case."""
    if not value:
        return "", None
    parts = value.split(";")
    mime = parts[0].strip().lower()
    charset = None
    for param in parts[1:]:
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset":
            charset = val.strip().strip("\"'") or None
    return mime, charset


# Headers a response may repeat whose values all count, joined with ", " (RFC 9110 5.3): a site sends
# one `X-Robots-Tag` per crawler (`X-Robots-Tag: GPTBot: noai`, then another for the next). Of other
# headers the first is kept.
_REPEATED = frozenset({"x-robots-tag"})
# The response headers a page's consent signals are read from (`thresher.consent.signals`), handed to
# the stages in `Document.derived["http_headers"]` (never written out) when the response has any.
CONSENT_HEADERS = ("x-robots-tag", "tdm-reservation", "tdm-policy")


def parse_http(block: bytes, max_header_bytes: int) -> tuple[int, dict[str, str], bytes] | str:
    """(status, headers with lower-case names, body) of an HTTP response, or what is wrong with it.
    Tolerates LF-only line ends and missing spaces after colons (both occur in real crawls)."""
    ends = [(i, 4) for i in (block.find(b"\r\n\r\n", 0, max_header_bytes + 4),) if i >= 0]
    ends += [(i, 2) for i in (block.find(b"\n\n", 0, max_header_bytes + 2),) if i >= 0]
    if ends:
        end, sep = min(ends)
        head, body = block[:end], block[end + sep:]
    elif len(block) <= max_header_bytes:
        head, body = block, b""
    else:
        return f"no end of HTTP headers within {max_header_bytes} bytes"
    lines = head.decode("latin-1").replace("\r\n", "\n").split("\n")
    status_line = lines[0].split(None, 2)
    if len(status_line) < 2 or not status_line[0].upper().startswith("HTTP/"):
        return f"not an HTTP status line: {lines[0][:80]!r}"
    if not is_number(status_line[1]):
        return f"HTTP status is not a number: {status_line[1][:20]!r}"
    headers: dict[str, str] = {}
    last = None
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and last is not None:
            headers[last] += " " + line.strip()
            continue
        name, sep_, value = line.partition(":")
        if not sep_:
            continue
        key = name.strip().lower()
        if key not in headers:
            headers[key] = value.strip()
            last = key
        elif key in _REPEATED:
            headers[key] += ", " + value.strip()
            last = key
        else:
            last = None
    return int(status_line[1]), headers, body


def dechunk(body: bytes) -> tuple[bytes, str | None]:
    """Undo chunked transfer coding. Returns (data, problem): `not_chunked` when the body does not
    start with a chunk size (the data is returned as it is), `truncated_chunk` or `bad_chunk` when it
    breaks off later (the chunks decoded so far are returned)."""
    out: list[bytes] = []
    pos = 0
    while True:
        nl = body.find(b"\n", pos, pos + 1024)
        size_text = body[pos:nl if nl >= 0 else pos + 1024].split(b";")[0].strip()
        try:
            size = int(size_text, 16) if size_text and len(size_text) <= 16 else -1
        except ValueError:
            size = -1
        if nl < 0 or size < 0:
            if pos == 0:
                return body, "not_chunked"
            return b"".join(out), ("truncated_chunk" if pos >= len(body) or nl < 0 else "bad_chunk")
        if size == 0:
            return b"".join(out), None
        chunk = body[nl + 1:nl + 1 + size]
        out.append(chunk)
        if len(chunk) < size:
            return b"".join(out), "truncated_chunk"
        pos = nl + 1 + size
        if body.startswith(b"\r\n", pos):
            pos += 2
        elif body.startswith(b"\n", pos):
            pos += 1
        if pos >= len(body):
            return b"".join(out), None  # no final zero-size chunk: tolerated


def _inflate(body: bytes, wbits: int, cap: int) -> tuple[bytes, bool]:
    d = zlib.decompressobj(wbits)
    out = d.decompress(body, cap + 1)
    return out, d.eof


def decode_content(body: bytes, encoding: str, cap: int) -> tuple[bytes, str | None, Drop | None]:
    """Undo a Content-Encoding. Returns (data, event name or None, drop or None)."""
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
    data = body
    event = None
    for coding in reversed(codings):
        if coding in ("identity", "none", "utf-8", "binary", "7bit", "8bit"):
            continue
        try:
            if coding in ("gzip", "x-gzip"):
                out, done = _inflate(data, 47, cap)  # 47: gzip or zlib header, found automatically
            elif coding == "deflate":
                try:
                    out, done = _inflate(data, 15, cap)
                except zlib.error:
                    out, done = _inflate(data, -15, cap)
            elif coding == "br":
                try:
                    import brotli
                except ImportError:
                    return body, None, Drop("read", "unsupported_encoding", value=coding)
                out, done = brotli.decompress(data), True
            elif coding == "zstd":
                try:
                    import zstandard
                except ImportError:
                    return body, None, Drop("read", "unsupported_encoding", value=coding)
                out = zstandard.ZstdDecompressor().decompressobj().decompress(data)
                done = True
            else:
                return body, None, Drop("read", "unsupported_encoding", value=coding)
        except Exception:  # noqa: BLE001 - any codec failure means the payload was stored decoded
            # Crawlers (ClueWeb09's Nutch among them) often store the decoded payload but keep the
            # header: read the bytes as they are.
            return data, "content_encoding_ignored", None
        if len(out) > cap:
            return body, None, Drop("read", "too_large", value=f">{cap} decoded", limit=cap)
        if not done:
            event = "content_truncated"
        data = out
    return data, event, None


def binary_kind(body: bytes) -> str | None:
    """The kind of a binary payload (image, archive, ...) by magic bytes, `binary` for NUL bytes in
    the first KiB, or None for text."""
    for magic, kind in _BINARY_MAGIC:
        if body.startswith(magic):
            return kind
    head = body[:1024]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or sniff_utf16(head):
        return None  # UTF-16 text has NUL bytes (a BOM-less page is known by their pattern)
    return "binary" if b"\x00" in head else None


def looks_like_html(body: bytes) -> bool:
    head = body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith(b"<") and any(mark in head for mark in _HTML_MARKS)


def arc_date(value: str) -> str:
    """An ARC 14-digit timestamp as ISO 8601 UTC; other text is returned unchanged."""
    if is_number(value) and len(value) >= 12:
        v = (value + "00")[:14]
        return f"{v[0:4]}-{v[4:6]}-{v[6:8]}T{v[8:10]}:{v[10:12]}:{v[12:14]}Z"
    return value


def to_items(
    rec: RawRecord, path: str, partition_index: int, max_record_bytes: int, wcfg: WarcConfig
) -> Iterator[ReadItem]:
    """The items one record gives: nothing for records that are not pages (warcinfo, request,
    metadata), else a Document, a Skip with its reason, or a Malformed."""
    rtype = rec.type
    if rtype not in _PAGE_TYPES:
        if rtype not in _OTHER_TYPES:
            yield Event("unknown_record_type", rec.where(path), rtype or "(no WARC-Type)")
        return
    where = rec.where(path)
    url = rec.target_uri
    if rtype == "revisit":
        refers = rec.headers.get("warc-refers-to-target-uri") or rec.headers.get("warc-payload-digest")
        yield Skip(Drop("read", "revisit", detail={"refers_to": refers} if refers else None), where, url)
        return
    if url is None:
        yield Malformed("missing_target_uri", where, f"{rtype} record without WARC-Target-URI")
        return
    if rec.block is None:
        yield Skip(Drop("read", "too_large", value=rec.length, limit=max_record_bytes), where, url)
        return
    block = rec.block
    for name in rec.events:
        yield Event(name, where)
    source = {
        "file": path,
        "offset": rec.offset,
        "record_id": rec.headers.get("warc-record-id"),
        "format": rec.format,
    }
    if rec.inner_offset:
        source["inner_offset"] = rec.inner_offset
    fetched_at = rec.headers.get("warc-date") or None
    ordinal = make_ordinal(partition_index, rec.index)
    declared_type = rec.headers.get("content-type", "")
    if rtype == "conversion":
        _, declared = split_media_type(declared_type)
        label = normalize_charset(declared) or "utf-8"  # an unknown label (or one with a NUL): UTF-8
        text = block.decode(label, "replace")
        source["charset"] = label
        yield Document(id=record_id(source), text=text, url=url, source=source, fetched_at=fetched_at, ordinal=ordinal)
        return

    declared_lower = declared_type.lower()
    is_http = block.startswith(b"HTTP/") or (rtype == "response" and declared_lower.startswith("application/http"))
    if is_http:
        parsed = parse_http(block, wcfg.max_header_bytes)
        if isinstance(parsed, str):
            yield Malformed("bad_http_header", where, parsed)
            return
        status, http_headers, body = parsed
        if status not in wcfg.http_statuses:
            yield Skip(Drop("read", "http_status", value=status), where, url)
            return
        mime, charset = split_media_type(http_headers.get("content-type"))
        if "chunked" in http_headers.get("transfer-encoding", "").lower():
            body, problem = dechunk(body)
            if problem:
                yield Event(problem, where)
        encoding = http_headers.get("content-encoding", "")
        if encoding:
            body, event, drop = decode_content(body, encoding, max_record_bytes)
            if drop is not None:
                yield Skip(drop, where, url)
                return
            if event:
                yield Event(event, where, encoding)
    else:
        mime, charset = split_media_type(declared_type)
        body = block

    if mime not in wcfg.html_types:
        if not (wcfg.sniff_untyped and mime in _GENERIC_TYPES and looks_like_html(body)):
            yield Skip(Drop("read", "not_html", value=mime or None), where, url)
            return
        yield Event("html_sniffed", where, mime)
    kind = binary_kind(body)
    if kind is not None:
        yield Skip(Drop("read", "binary_payload", value=kind), where, url)
        return
    html, used, fell_back = decode_html(body, charset)
    source["charset"] = used
    if fell_back:
        yield Event("charset_fallback", where, used)
    doc = Document(
        id=record_id(source),
        html=html,
        url=url,
        source=source,
        fetched_at=fetched_at,
        metadata={"content_type": mime or None, "http_status": status} if is_http else {"content_type": mime or None},
        ordinal=ordinal,
    )
    if is_http:
        kept = {name: http_headers[name] for name in CONSENT_HEADERS if name in http_headers}
        if kept:
            doc.derived["http_headers"] = kept
    yield doc
