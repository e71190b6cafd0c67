"""robots.txt snapshots by host and date, read lazily, parsed once, held in a bounded LRU.

Sources (`consent.robots`, `--consent-robots PATH`):

- a folder: `HOST` or `HOST.txt` files (one undated snapshot each; a `_443`/`_80` port suffix, as in
  ../shared/data/robots, is dropped), or `HOST/DATE.txt` files (one dated snapshot each; DATE an ISO
  date or date-time, `:` may be written `-`);
- a JSONL file: one snapshot a line, `{"host" or "url", "fetched_at", "status", "text"}` (`status`
  defaults to 200; `text` may be missing for a status without a body);
- a WARC file (`.warc`, `.warc.gz`): every response record whose target is a `/robots.txt`, dated by
  its WARC-Date, with its HTTP status (Common Crawl publishes these per crawl).

Only the index (host -> dates and where each body is) is held for the whole source; a body is read
when a page of its host first needs it, parsed, and kept among the `cache_files` most recently used.
Undated snapshots apply at any time, after every dated one of their host is considered (see
`RobotsSnapshots.pick`). Bad entries (a JSONL line that is not JSON, a date that does not parse) are
reported with their place in `problems` and, for a known host, on its pages.
"""

from __future__ import annotations

import json
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from thresher.consent.robots import MAX_BYTES, RobotsTxt, status_verdict
from thresher.core.errors import ConfigError

log = logging.getLogger("thresher.consent")

_PORT_SUFFIX = re.compile(r"_(?:80|443)$")
_MAX_PROBLEMS = 100  # problems kept for the whole source (the rest are counted)


@dataclass(frozen=True, slots=True)
class Snapshot:
    host: str
    date: str | None  # ISO 8601 UTC, "YYYY-MM-DDTHH:MM:SSZ"; None: undated
    status: int | None  # HTTP status of the fetch (None: unreachable)
    where: str  # the file (and line or offset) it came from, for attribution
    ref: tuple[str, int, int] | str  # the body: a path, (WARC path, offset, inner offset), or the text itself


def iso_utc(value: object) -> str | None:
    """`value` (an ISO 8601 date or date-time, `Z` or an offset, or a WARC/ARC 14-digit stamp) as
    "YYYY-MM-DDTHH:MM:SSZ" in UTC, or None when it is no date."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if len(text) == 14 and text.isdigit():
        text = f"{text[0:4]}-{text[4:6]}-{text[6:8]}T{text[8:10]}:{text[10:12]}:{text[12:14]}"
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}(-\d{2})?", text):  # a file name's `-` for `:`
        day, _, clock = text.partition("T")
        text = day + "T" + clock.replace("-", ":")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def host_of(url: str | None) -> str | None:
    if not url:
        return None
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None


class RobotsSnapshots:
    """The snapshots of one source, and the parsed robots.txt for a page (`for_page`)."""

    def __init__(self, source: str, cache_files: int = 1024) -> None:
        self.source = source
        self.cache_files = cache_files
        self.by_host: dict[str, list[Snapshot]] = {}
        self.problems: list[str] = []
        self.problem_count = 0
        self.host_problems: dict[str, list[str]] = {}
        self._cache: OrderedDict[tuple[str, str | None, str], RobotsTxt | None] = OrderedDict()
        path = Path(source)
        if not path.exists():
            raise ConfigError(f"consent.robots: {source} does not exist")
        if path.is_dir():
            self._load_folder(path)
        elif path.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz")):
            self._load_warc(path)
        else:
            self._load_jsonl(path)
        for snapshots in self.by_host.values():
            snapshots.sort(key=lambda s: (s.date is not None, s.date or "", s.where))

    # -- loading ------------------------------------------------------------------------------------

    def _problem(self, text: str, host: str | None = None) -> None:
        self.problem_count += 1
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(text)
            log.warning("consent.robots: %s", text)
        if host is not None:
            self.host_problems.setdefault(host, []).append(text)

    def _add(self, snapshot: Snapshot) -> None:
        self.by_host.setdefault(snapshot.host, []).append(snapshot)

    def _load_folder(self, root: Path) -> None:
        for entry in sorted(root.iterdir()):
            if entry.is_dir():
                host = entry.name.lower()
                for file in sorted(entry.iterdir()):
                    if not file.is_file():
                        continue
                    stem = file.name[:-4] if file.name.endswith(".txt") else file.name
                    date = iso_utc(stem)
                    if date is None:
                        self._problem(f"{file}: file name {stem!r} is not a date (read as undated)", host)
                    self._add(Snapshot(host, date, 200, str(file), str(file)))
            elif entry.is_file() and not entry.name.startswith("."):
                name = entry.name[:-4] if entry.name.endswith(".txt") else entry.name
                host = _PORT_SUFFIX.sub("", name.lower())
                self._add(Snapshot(host, None, 200, str(entry), str(entry)))

    def _load_jsonl(self, path: Path) -> None:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                where = f"{path}:{number}"
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except ValueError as exc:
                    self._problem(f"{where}: not JSON ({exc})")
                    continue
                if not isinstance(record, dict):
                    self._problem(f"{where}: not a JSON object")
                    continue
                host = record.get("host")
                host = host.lower() if isinstance(host, str) and host else host_of(record.get("url"))
                if not host:
                    self._problem(f"{where}: no host or url")
                    continue
                date = iso_utc(record.get("fetched_at"))
                if date is None:
                    self._problem(f"{where}: fetched_at {record.get('fetched_at')!r} is no date (read as undated)",
                                  host)
                status = record.get("status", 200)
                status = status if isinstance(status, int) and not isinstance(status, bool) else None
                text = record.get("text")
                self._add(Snapshot(host, date, status, where, text if isinstance(text, str) else ""))

    def _load_warc(self, path: Path) -> None:
        from thresher.read.warc import iter_records
        from thresher.read.warc_config import WarcConfig
        from thresher.read.warc_payload import RawRecord, parse_http

        for rec in iter_records(str(path), 64 << 20, WarcConfig()):
            if not isinstance(rec, RawRecord) or rec.type != "response" or rec.block is None:
                continue
            url = rec.target_uri
            if not url or urlsplit(url).path != "/robots.txt":
                continue
            host = host_of(url)
            if host is None:
                continue
            where = rec.where(str(path))
            parsed = parse_http(rec.block, 65536)
            status = parsed[0] if not isinstance(parsed, str) else None
            date = iso_utc(rec.headers.get("warc-date"))
            if date is None:
                self._problem(f"{where}: no WARC-Date (read as undated)", host)
            self._add(Snapshot(host, date, status, where, (str(path), rec.offset, rec.inner_offset)))

    # -- answering ----------------------------------------------------------------------------------

    def pick(self, host: str, fetched_at: str | None, as_of: str) -> Snapshot | None:
        """The snapshot that applies to a page of `host` fetched at `fetched_at`: with `as_of`
        "latest" (or an undated page) the newest; with "fetch" the newest dated at or before the
        fetch, else an undated one, else none (no robots.txt known at that time)."""
        snapshots = self.by_host.get(host)
        if not snapshots:
            return None
        when = iso_utc(fetched_at) if as_of == "fetch" else None
        if when is None:
            return snapshots[-1]
        best = None
        for snapshot in snapshots:  # undated first, then by date
            if snapshot.date is None or snapshot.date <= when:
                best = snapshot
            else:
                break
        return best

    def parsed(self, snapshot: Snapshot) -> RobotsTxt | None:
        """The parsed robots.txt of a snapshot with a 2xx status (None for any other status: the
        status decides, `status_verdict`), from the LRU or read and parsed now."""
        if status_verdict(snapshot.status) != "parse":
            return None
        key = (snapshot.host, snapshot.date, snapshot.where)
        cache = self._cache
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        robots = RobotsTxt.parse(self._body(snapshot))
        cache[key] = robots
        if len(cache) > self.cache_files:
            cache.popitem(last=False)
        return robots

    def _body(self, snapshot: Snapshot) -> bytes:
        ref = snapshot.ref
        try:
            if isinstance(ref, tuple):
                return _warc_body(*ref)
            if snapshot.where == ref:  # a file of a folder
                with open(ref, "rb") as f:
                    return f.read(MAX_BYTES + 1)
            return ref.encode("utf-8", "surrogatepass")
        except OSError as exc:
            self._problem(f"{snapshot.where}: unreadable ({exc}); read as empty", snapshot.host)
            return b""


def _warc_body(path: str, offset: int, inner_offset: int) -> bytes:
    from thresher.read.warc import iter_records
    from thresher.read.warc_config import WarcConfig
    from thresher.read.warc_payload import RawRecord, dechunk, decode_content, parse_http

    for rec in iter_records(path, 64 << 20, WarcConfig(), start=offset):
        if isinstance(rec, RawRecord) and rec.inner_offset >= inner_offset:
            parsed = parse_http(rec.block or b"", 65536)
            if isinstance(parsed, str):
                return b""
            _, headers, body = parsed
            if "chunked" in headers.get("transfer-encoding", "").lower():
                body, _ = dechunk(body)
            if headers.get("content-encoding"):
                body, _, drop = decode_content(body, headers["content-encoding"], 8 * MAX_BYTES)
                if drop is not None:
                    return b""
            return body
    return b""
