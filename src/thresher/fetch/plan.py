"""The fetch plan: the URL list streamed, normalised, deduplicated and sorted by host on disk.

Memory stays flat in the number of URLs: lines are normalised as they stream in, sorted in bounded
runs written to disk, and merged (`heapq.merge`) into `.plan.tsv` (`host<TAB>url` lines, each host's
URLs contiguous) and `.hosts.tsv` (`host<TAB>offset<TAB>count`, the hosts with the most URLs first).
Duplicates meet in the merge and are dropped there. On a rerun, the URLs that `fetch-log.jsonl` already
settled are sorted the same way and merged out (an anti-join), so resuming costs a sort, not a set of
every URL in memory.
"""

from __future__ import annotations

import csv
import gzip
import heapq
import io
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from thresher.core.errors import InputError
from thresher.fetch.config import FetchConfig
from thresher.fetch.urls import Rejected, host_key, normalize_url

RUN_LINES = 100_000  # lines sorted in memory at once (about 20 MB of URLs)
# Work files have names starting with a dot: a reader given the crawl folder skips them.
PLAN_NAME = ".plan.tsv"
HOSTS_NAME = ".hosts.tsv"
_MAX_LINE_BYTES = 1 << 16


@dataclass(slots=True)
class PlanSummary:
    """What planning counted: every input line is valid, rejected (by reason) or a duplicate."""

    lines: int = 0
    valid: int = 0
    duplicates: int = 0
    already_done: int = 0
    planned: int = 0
    hosts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)  # one rejected line per reason

    def as_dict(self) -> dict[str, object]:
        return {
            "lines": self.lines, "valid": self.valid, "duplicates": self.duplicates,
            "already_done": self.already_done, "planned": self.planned, "hosts": self.hosts,
            "rejected": dict(sorted(self.rejected.items())), "rejected_examples": dict(sorted(self.examples.items())),
        }


def _open_binary(path: str) -> IO[bytes]:
    if path == "-":
        import sys

        return sys.stdin.buffer
    f: IO[bytes] = open(path, "rb")
    if path.endswith(".gz"):
        return gzip.open(f)  # type: ignore[return-value]
    return f


def _text_lines(path: str) -> Iterator[str]:
    """Lines of a text list, decoded leniently; a line over 64 KiB is yielded cut (and so too long)."""
    with _open_binary(path) as f:
        while True:
            line = f.readline(_MAX_LINE_BYTES)
            if not line:
                return
            if len(line) == _MAX_LINE_BYTES and not line.endswith(b"\n"):
                while True:  # skip the rest of an oversized line without holding it
                    rest = f.readline(_MAX_LINE_BYTES)
                    if not rest or rest.endswith(b"\n"):
                        break
            yield line.decode("utf-8", "replace")


def _column_values(path: str, column: str) -> Iterator[str | None]:
    """The `column` of each row of a JSONL, CSV or Parquet list (None where a row lacks it)."""
    name = path.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise InputError("reading a Parquet URL list needs pyarrow (the parquet extra)") from exc
        pf = pq.ParquetFile(path)
        if column not in pf.schema_arrow.names:
            raise InputError(f"{path}: no column {column!r} (columns: {', '.join(pf.schema_arrow.names)})")
        for batch in pf.iter_batches(columns=[column], batch_size=8192):
            for value in batch.column(0).to_pylist():
                yield value if isinstance(value, str) else None
        return
    if name.endswith(".csv") or name.endswith(".tsv"):
        with _open_binary(path) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
            reader = csv.DictReader(text, delimiter="\t" if name.endswith(".tsv") else ",")
            if reader.fieldnames is None or column not in reader.fieldnames:
                raise InputError(f"{path}: no column {column!r} in the header")
            for row in reader:
                value = row.get(column)
                yield value if isinstance(value, str) else None
        return
    for line in _text_lines(path):
        if not line.strip():
            yield ""
            continue
        try:
            record = json.loads(line)
        except ValueError:
            yield None
            continue
        value = record.get(column) if isinstance(record, dict) else None
        yield value if isinstance(value, str) else None


def iter_input_urls(paths: Iterable[str], column: str | None = None) -> Iterator[str | None]:
    """Every candidate URL of the inputs, in order; None for a row without a usable URL field."""
    for path in paths:
        if path != "-" and not os.path.isfile(path):
            raise InputError(f"no such URL list: {path}")
        if column is None:
            yield from _text_lines(path)
        else:
            yield from _column_values(path, column)


def _write_run(lines: list[str], directory: Path, index: int) -> Path:
    lines.sort()
    path = directory / f".run-{index:05d}.tsv"
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(lines)
    return path


def _sorted_runs(keys: Iterable[str], directory: Path, prefix: str) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    runs: list[Path] = []
    batch: list[str] = []
    for key in keys:
        batch.append(key)
        if len(batch) >= RUN_LINES:
            runs.append(_write_run(batch, directory, len(runs)).rename(directory / f".{prefix}-{len(runs):05d}.tsv"))
            batch = []
    if batch:
        runs.append(_write_run(batch, directory, len(runs)).rename(directory / f".{prefix}-{len(runs):05d}.tsv"))
    return runs


def _merged(runs: list[Path]) -> Iterator[str]:
    files = [open(p, encoding="utf-8", newline="\n") for p in runs]
    try:
        yield from heapq.merge(*files)
    finally:
        for f in files:
            f.close()


def settled_urls(log_path: Path) -> Iterator[str]:
    """The planned URLs a fetch log already settled (fetched, failed for good, or skipped)."""
    if not log_path.exists():
        return
    with open(log_path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # a torn last line: that URL was not settled
            try:
                url = json.loads(line).get("url")
            except ValueError:
                continue
            if isinstance(url, str):
                yield url


def build_plan(
    inputs: Iterable[str], work: Path, config: FetchConfig, *, column: str | None = None, log_path: Path | None = None
) -> PlanSummary:
    """Write `work/.plan.tsv` and `work/.hosts.tsv` for the inputs, leaving out what the log settled."""
    work.mkdir(parents=True, exist_ok=True)
    tmp = work / ".sort"
    if tmp.exists():
        for old in tmp.iterdir():
            old.unlink()
    summary = PlanSummary()

    def keys() -> Iterator[str]:
        for raw in iter_input_urls(inputs, column):
            summary.lines += 1
            if raw is None:
                summary.rejected["no_url_field"] += 1
                continue
            url = normalize_url(
                raw, tracking_params=config.tracking_params, skip_extensions=config.skip_extensions,
                max_chars=config.max_url_chars,
            )
            if isinstance(url, Rejected):
                summary.rejected[url.reason] += 1
                summary.examples.setdefault(url.reason, raw.strip()[:200])
                continue
            summary.valid += 1
            yield f"{host_key(url)}\t{url}\n"

    runs = _sorted_runs(keys(), tmp, "plan")
    done_runs = (
        _sorted_runs((f"{host_key(u)}\t{u}\n" for u in settled_urls(log_path) if "://" in u), tmp, "done")
        if log_path
        else []
    )
    done = _merged(done_runs)
    next_done = next(done, None)
    plan_tmp, hosts_tmp = work / ".plan.tsv.tmp", work / ".hosts.tsv.tmp"
    with open(plan_tmp, "wb") as plan, open(hosts_tmp, "w", encoding="utf-8") as hosts:
        previous = None
        host, host_start, host_count = None, 0, 0
        for line in _merged(runs):
            if line == previous:
                summary.duplicates += 1
                continue
            previous = line
            while next_done is not None and next_done < line:
                next_done = next(done, None)
            if next_done == line:
                summary.already_done += 1
                continue
            key = line.split("\t", 1)[0]
            if key != host:
                if host is not None:
                    hosts.write(f"{host}\t{host_start}\t{host_count}\n")
                    summary.hosts += 1
                host, host_start, host_count = key, plan.tell(), 0
            plan.write(line.encode("utf-8"))
            host_count += 1
            summary.planned += 1
        if host is not None:
            hosts.write(f"{host}\t{host_start}\t{host_count}\n")
            summary.hosts += 1
    for path in runs + done_runs:
        path.unlink()
    # hosts with the most URLs first: under per-host delays they take longest, so they must not be
    # the tail of the run (the alphabetical order of names says nothing about size)
    width = 12

    def by_size() -> Iterator[str]:
        with open(hosts_tmp, encoding="utf-8") as f:
            for line in f:
                count = int(line.rsplit("\t", 1)[1])
                yield f"{10**width - count:0{width}d}\t{line}"

    size_runs = _sorted_runs(by_size(), tmp, "hosts")
    ordered_tmp = work / ".hosts.tsv.ordered"
    with open(ordered_tmp, "w", encoding="utf-8") as out:
        for line in _merged(size_runs):
            out.write(line.split("\t", 1)[1])
    for path in size_runs:
        path.unlink()
    os.replace(plan_tmp, work / PLAN_NAME)
    os.replace(ordered_tmp, work / HOSTS_NAME)
    hosts_tmp.unlink()
    return summary


@dataclass(slots=True)
class HostEntry:
    host: str
    offset: int
    count: int


def iter_hosts(work: Path) -> Iterator[HostEntry]:
    with open(work / HOSTS_NAME, encoding="utf-8") as f:
        for line in f:
            host, offset, count = line.rstrip("\n").split("\t")
            yield HostEntry(host, int(offset), int(count))


class PlanReader:
    """Reads each host's URLs from `.plan.tsv` in small batches through one shared handle, so any
    number of active hosts costs one file descriptor and a few URLs each."""

    def __init__(self, work: Path) -> None:
        self._f = open(work / PLAN_NAME, "rb")

    def read(self, entry: HostEntry, batch: int) -> list[str]:
        """Up to `batch` next URLs of a host; advances the entry."""
        if entry.count <= 0:
            return []
        self._f.seek(entry.offset)
        urls = []
        for _ in range(min(batch, entry.count)):
            line = self._f.readline()
            urls.append(line.decode("utf-8").rstrip("\n").split("\t", 1)[1])
        entry.offset = self._f.tell()
        entry.count -= len(urls)
        return urls

    def close(self) -> None:
        self._f.close()
