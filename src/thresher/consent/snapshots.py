"""robots.txt snapshots by host and date, read lazily, parsed once, held in a bounded LRU.

Sources (`consent.robots`, `--consent-robots PATH`):

- a folder: `HOST` or `HOST.txt` files (one undated snapshot each; a `_443`/`_80` port suffix, as in
  ../shared/data/robots, is dropped), or `HOST/DATE.txt` files (one dated snapshot each; DATE an ISO
  date or date-time, `:` may be written `-`);
- a JSONL file: one snapshot a line, `{"host" or "url", "fetched_at", "status", "text"}` (`status`
  defaults to 200; `text` may be missing for a status without a body);
- a WARC file (`.warc`, `.warc.gz`): every response record whose target is a `/robots.txt`, dated by
  its WARC-Date, with its HTTP status (Common Crawl publishes these per crawl).

JSONL lines and WARC responses for `/.well-known/tdmrep.json` (TDMRep's file on the origin server)
are TDMRep snapshots, kept apart and answered by `tdmrep_rules` under the same rules of time.

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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from thresher.consent.robots import MAX_BYTES, RobotsTxt, match_pattern, normalise_path, status_verdict
from thresher.core.errors import ConfigError

log = logging.getLogger("thresher.consent")

_PORT_SUFFIX = re.compile(r"_(?:80|443)$")
TDMREP_PATH = "/.well-known/tdmrep.json"
_MAX_PROBLEMS = 100  # problems kept for the whole source (the rest are counted)


@dataclass(frozen=True, slots=True)
class Snapshot:
    host: str
    date: str | None  # ISO 8601 UTC, "YYYY-MM-DDTHH:MM:SSZ"; None: undated
    status: int | None  # HTTP status of the fetch (None: unreachable)
    where: str  # the file (and line or offset) it came from, for attribution
    ref: tuple[str, int, int] | str  # the body: a path, (WARC path, offset, inner offset), or the text itself
    kind: str = "robots"  # or "tdmrep" (/.well-known/tdmrep.json)


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
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None
    # formatted by hand: strftime writes year 999 as "999" on some platforms, and the dates compare as text
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
            f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z")


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
        self.tdmrep_by_host: dict[str, list[Snapshot]] = {}
        self.problems: list[str] = []
        self.problem_count = 0
        self.host_problems: dict[str, list[str]] = {}
        self._cache: OrderedDict[tuple[str, str | None, str], Any] = OrderedDict()
        path = Path(source)
        if not path.exists():
            raise ConfigError(f"consent.robots: {source} does not exist")
        if path.is_dir():
            self._load_folder(path)
        elif path.name.endswith((".warc", ".warc.gz", ".arc", ".arc.gz")):
            self._load_warc(path)
        else:
            self._load_jsonl(path)
        for snapshots in (*self.by_host.values(), *self.tdmrep_by_host.values()):
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
        index = self.tdmrep_by_host if snapshot.kind == "tdmrep" else self.by_host
        index.setdefault(snapshot.host, []).append(snapshot)

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
                tdmrep = record.get("kind") == "tdmrep" or _path(record.get("url")) == TDMREP_PATH
                kind = "tdmrep" if tdmrep else "robots"
                self._add(Snapshot(host, date, status, where, text if isinstance(text, str) else "", kind))

    def _load_warc(self, source: Path) -> None:
        from thresher.read.warc import iter_records
        from thresher.read.warc_config import WarcConfig
        from thresher.read.warc_payload import RawRecord, parse_http

        for rec in iter_records(str(source), 64 << 20, WarcConfig()):
            if not isinstance(rec, RawRecord) or rec.type != "response" or rec.block is None:
                continue
            url = rec.target_uri
            path = _path(url)
            if path not in ("/robots.txt", TDMREP_PATH):
                continue
            assert url is not None
            host = host_of(url)
            if host is None:
                continue
            where = rec.where(str(source))
            parsed = parse_http(rec.block, 65536)
            status = parsed[0] if not isinstance(parsed, str) else None
            date = iso_utc(rec.headers.get("warc-date"))
            if date is None:
                self._problem(f"{where}: no WARC-Date (read as undated)", host)
            self._add(Snapshot(host, date, status, where, (str(source), rec.offset, rec.inner_offset),
                               "robots" if path == "/robots.txt" else "tdmrep"))

    # -- answering ----------------------------------------------------------------------------------

    def pick(self, host: str, fetched_at: str | None, as_of: str, kind: str = "robots") -> Snapshot | None:
        """The snapshot that applies to a page of `host` fetched at `fetched_at`: with `as_of`
        "latest" (or an undated page) the newest; with "fetch" the newest dated at or before the
        fetch, else an undated one, else none (no robots.txt known at that time)."""
        snapshots = (self.tdmrep_by_host if kind == "tdmrep" else self.by_host).get(host)
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

    def parsed(self, snapshot: Snapshot) -> tuple[RobotsTxt | None, list[str]]:
        """The parsed robots.txt of a snapshot with a 2xx status (None for any other status: the
        status decides, `status_verdict`), from the LRU or read and parsed now, and the problems met
        reading it (the same on every call: they are cached with it, so every page of the host shows
        them whichever page read the file first)."""
        if status_verdict(snapshot.status) != "parse":
            return None, []
        return self._cached(snapshot, lambda body, problems: RobotsTxt.parse(body))

    def tdmrep_rules(self, snapshot: Snapshot) -> tuple[list[TdmRule], list[str]]:
        """The rules of a `tdmrep.json` snapshot with a 2xx status, in file order (none for any other
        status, or a file that is not a JSON array of rules), and the problems met reading it."""
        if status_verdict(snapshot.status) != "parse":
            return [], []
        return self._cached(snapshot, lambda body, problems: _tdmrep(snapshot, body, problems))

    def _cached(self, snapshot: Snapshot, parse: Callable[[bytes, list[str]], Any]) -> tuple[Any, list[str]]:
        key = (snapshot.host, snapshot.date, snapshot.where)
        cache = self._cache
        if key in cache:
            cache.move_to_end(key)
            return cache[key]  # type: ignore[no-any-return]
        problems: list[str] = []
        value = parse(_body(snapshot, problems), problems)
        cache[key] = (value, problems)
        if len(cache) > self.cache_files:
            cache.popitem(last=False)
        return value, problems


def _body(snapshot: Snapshot, problems: list[str]) -> bytes:
    ref = snapshot.ref
    try:
        if isinstance(ref, tuple):
            return _warc_body(*ref)
        if snapshot.where == ref:  # a file of a folder
            with open(ref, "rb") as f:
                return f.read(MAX_BYTES + 1)
        return ref.encode("utf-8", "surrogatepass")
    except OSError as exc:
        problems.append(f"{snapshot.where}: unreadable ({exc.strerror or exc}); read as empty")
        return b""


def _tdmrep(snapshot: Snapshot, body: bytes, problems: list[str]) -> list[TdmRule]:
    try:
        data = json.loads(body.decode("utf-8", "replace"))
    except ValueError as exc:
        problems.append(f"{snapshot.where}: tdmrep.json is not JSON ({exc})")
        return []
    if not isinstance(data, list):
        problems.append(f"{snapshot.where}: tdmrep.json is not a JSON array of rules")
        return []
    rules = []
    for number, item in enumerate(data):
        location = item.get("location") if isinstance(item, dict) else None
        reservation = item.get("tdm-reservation") if isinstance(item, dict) else None
        if not isinstance(location, str) or isinstance(reservation, bool) or reservation not in (0, 1):
            problems.append(f"{snapshot.where}: tdmrep.json rule {number} has no location or a tdm-reservation "
                            "other than 0 or 1 (ignored)")
            continue
        policy = item.get("tdm-policy")
        rules.append(TdmRule(normalise_path(location), int(reservation), policy if isinstance(policy, str) else None))
    return rules


@dataclass(frozen=True, slots=True)
class TdmRule:
    """One rule of a `tdmrep.json`: a location pattern (robots.txt syntax, normalised), the reservation
    and the policy URL."""

    location: str
    reservation: int
    policy: str | None

    def matches(self, path: str) -> bool:
        return match_pattern(self.location, path)


def _path(url: object) -> str | None:
    if not isinstance(url, str) or not url:
        return None
    try:
        return urlsplit(url).path
    except ValueError:
        return None


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
