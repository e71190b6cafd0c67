"""WARC 1.1 output and the fetch log, written so that a kill at any moment leaves a readable archive
and a log that says exactly what is in it.

Each fetched URL becomes a `request`, a `response` and a `metadata` record (the log entry as JSON),
each its own gzip member, appended with one write; only then is its line appended to
`fetch-log.jsonl`, naming the file and the byte range. Failed and skipped URLs get a log line only.
Files roll past `warc_file_bytes`, each starting with a `warcinfo` record. On a rerun, a torn last
log line is cut off, every WARC file is truncated to the end of its last logged unit (a unit written
but not logged is fetched again), and a file with no logged unit is removed: no duplicated and no
truncated records. When the disk fills, the partial unit is truncated away and `OutputFull` raised;
the file is closed at once, dropping what its buffer still held, so that no later flush (on close,
or once space is freed) writes the rest of the cut unit behind the truncation.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import gzip
import hashlib
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import Any, BinaryIO

from thresher.core.errors import ThresherError
from thresher.fetch.config import FetchConfig
from thresher.fetch.exchange import Exchange, warc_date

WARC_DIR = "warc"
LOG_NAME = "fetch-log.jsonl"
_FILE_RE = re.compile(r"thresher-(\d{5})\.warc\.gz$")


class OutputFull(ThresherError):
    """The output disk is full: the archive holds every unit logged before the error."""


def _digest(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def warc_record(fields: list[tuple[str, str]], block: bytes) -> bytes:
    """One uncompressed WARC/1.1 record: version line, fields, Content-Length, block, two CRLFs."""
    head = ["WARC/1.1"] + [f"{k}: {v}" for k, v in fields] + [f"Content-Length: {len(block)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"


def _member(record: bytes) -> bytes:
    return gzip.compress(record, compresslevel=6, mtime=0)


def is_disk_full(exc: OSError) -> bool:
    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


class WarcLog:
    """The archive directory and its fetch log (append only, resumable)."""

    def __init__(self, output: Path, config: FetchConfig, software: str, opener: Any = open) -> None:
        self.output = output
        self.config = config
        self.software = software
        self._open = opener  # injectable so that a test can give a file that fills up
        self.dir = output / WARC_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = output / LOG_NAME
        self.recovered = self._recover()
        self._log: BinaryIO = self._open(self.log_path, "ab")
        self._file: BinaryIO | None = None
        self._file_name = ""
        self._file_size = 0
        self._warcinfo_id = ""
        self._next_index = self._first_free_index()
        self._last_sync = time.monotonic()
        self.files_written: list[str] = []
        self.records = 0
        self.bytes_written = 0

    # resume -------------------------------------------------------------------------------------
    def _recover(self) -> dict[str, int]:
        """Make the log and the archive agree after an unclean stop; what was cut, by kind."""
        cut = {"log_bytes": 0, "warc_bytes": 0, "warc_files_removed": 0}
        ends: dict[str, int] = {}
        if self.log_path.exists():
            valid = 0
            with open(self.log_path, "rb") as f:
                for line in f:
                    if not line.endswith(b"\n"):
                        break
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        break
                    valid += len(line)
                    if entry.get("warc"):
                        ends[entry["warc"]] = max(ends.get(entry["warc"], 0), int(entry["end"]))
            size = self.log_path.stat().st_size
            if size > valid:
                cut["log_bytes"] = size - valid
                os.truncate(self.log_path, valid)
        for path in sorted(self.dir.glob("thresher-*.warc.gz")):
            end = ends.get(path.name)
            if end is None:
                path.unlink()
                cut["warc_files_removed"] += 1
            elif path.stat().st_size > end:
                cut["warc_bytes"] += path.stat().st_size - end
                os.truncate(path, end)
        for tmp in self.dir.glob(".*"):
            tmp.unlink()
        return cut

    def _first_free_index(self) -> int:
        indexes = [int(m.group(1)) for p in self.dir.iterdir() if (m := _FILE_RE.search(p.name))]
        return max(indexes) + 1 if indexes else 0

    # writing ------------------------------------------------------------------------------------
    def _start_file(self) -> None:
        self._close_file()
        name = f"thresher-{self._next_index:05d}.warc.gz"
        self._next_index += 1
        path = self.dir / name
        self._file = self._open(path, "ab")
        self._file_name = name
        self._file_size = 0
        self._warcinfo_id = _record_id()
        info = (
            f"software: {self.software}\r\nformat: WARC File Format 1.1\r\n"
            f"conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
            f"http-header-user-agent: {self.config.user_agent}\r\nrobots: "
            f"{'obey' if self.config.respect_robots else 'ignore'}\r\n"
        ).encode()
        record = _member(warc_record([
            ("WARC-Type", "warcinfo"), ("WARC-Date", warc_date()), ("WARC-Filename", name),
            ("WARC-Record-ID", self._warcinfo_id), ("Content-Type", "application/warc-fields"),
        ], info))
        self._append(record)
        self.files_written.append(name)

    def _append(self, data: bytes) -> int:
        """Append to the current file; on a full disk cut back to where this write began."""
        assert self._file is not None
        start = self._file_size
        try:
            self._file.write(data)
            self._file.flush()
        except OSError as exc:
            self._rollback(start)
            if is_disk_full(exc):
                raise OutputFull(
                    f"disk full writing {self.dir / self._file_name}: the archive is complete up to the last logged "
                    f"URL; free space and rerun the same command to resume"
                ) from exc
            raise
        self._file_size += len(data)
        self.bytes_written += len(data)
        return start

    def _rollback(self, size: int) -> None:
        """Close the current file without what its buffer still holds and cut it to `size`."""
        assert self._file is not None
        _discard(self._file)
        self._file = None
        # the recovery on resume would also do this
        with contextlib.suppress(OSError):
            os.truncate(self.dir / self._file_name, size)

    def _unit(self, exchange: Exchange, entry: dict[str, Any]) -> bytes:
        request_id, response_id = _record_id(), _record_id()
        common = [
            ("WARC-Date", exchange.date),
            ("WARC-Target-URI", exchange.url),
            ("WARC-Warcinfo-ID", self._warcinfo_id),
        ]
        ip = [("WARC-IP-Address", exchange.ip)] if exchange.ip else []
        request = warc_record(
            [("WARC-Type", "request"), ("WARC-Record-ID", request_id), *common, *ip,
             ("WARC-Concurrent-To", response_id), ("Content-Type", "application/http;msgtype=request"),
             ("WARC-Block-Digest", _digest(exchange.request_head))],
            exchange.request_head,
        )
        block = exchange.response_head + exchange.body
        truncated = [("WARC-Truncated", "length")] if exchange.truncated else []
        response = warc_record(
            [("WARC-Type", "response"), ("WARC-Record-ID", response_id), *common, *ip, *truncated,
             ("Content-Type", "application/http;msgtype=response"), ("WARC-Block-Digest", _digest(block)),
             ("WARC-Payload-Digest", _digest(exchange.body))],
            block,
        )
        # warc-fields, not JSON: readers take JSON metadata records for a WAT file's
        meta = "".join(
            f"fetch-{k.replace('_', '-')}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}\r\n"
            for k, v in entry.items()
        ).encode("utf-8")
        metadata = warc_record(
            [("WARC-Type", "metadata"), ("WARC-Record-ID", _record_id()), *common, ("WARC-Refers-To", response_id),
             ("Content-Type", "application/warc-fields")],
            meta,
        )
        self.records += 3
        return _member(request) + _member(response) + _member(metadata)

    def write(self, entry: dict[str, Any], exchange: Exchange | None) -> dict[str, Any]:
        """Settle one URL: its records (when fetched), then its log line. Returns the logged entry."""
        if exchange is not None:
            if self._file is None or self._file_size >= self.config.warc_file_bytes:
                self._start_file()
            unit = self._unit(exchange, entry)
            start = self._append(unit)
            entry = {**entry, "warc": self._file_name, "offset": start, "end": start + len(unit)}
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        if self._log.closed:
            raise OutputFull(f"disk full writing {self.log_path}; free space and rerun to resume")
        log_start = self._log.tell()
        try:
            self._log.write(line)
            self._log.flush()
        except OSError as exc:
            _discard(self._log)
            with contextlib.suppress(OSError):
                os.truncate(self.log_path, log_start)
            if is_disk_full(exc):
                raise OutputFull(f"disk full writing {self.log_path}; free space and rerun to resume") from exc
            raise
        if time.monotonic() - self._last_sync >= self.config.fsync_every_s:
            self.sync()
        return entry

    def sync(self) -> None:
        for f in (self._file, self._log):
            if f is not None:
                os.fsync(f.fileno())
        self._last_sync = time.monotonic()

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    def close(self) -> None:
        """Flush, sync and close; a disk that fills now is `OutputFull` (the log still names only
        complete units: a rerun resumes)."""
        try:
            try:
                self._close_file()
            finally:
                if not self._log.closed:
                    try:
                        self._log.flush()
                        os.fsync(self._log.fileno())
                    finally:
                        _discard(self._log)
        except OSError as exc:
            if is_disk_full(exc):
                raise OutputFull(
                    f"disk full closing {self.output}: free space and rerun the same command to resume"
                ) from exc
            raise


def _discard(f: BinaryIO) -> None:
    """Close a file whose buffered bytes may not fit: the descriptor is closed even when the last
    flush fails (CPython's buffered close), and that failure is dropped with the bytes."""
    with contextlib.suppress(OSError, ValueError):
        f.close()
