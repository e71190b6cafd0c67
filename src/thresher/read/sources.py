"""From the user's input arguments to a deterministic list of partitions, and from a partition to
the items read from it.

Inputs may be files, `-` (stdin), directories (every file below, sorted, but for the files that are not
data, `thresher.read.skip`; of a crawl folder that `thresher fetch` made, its WARC files only) or glob
patterns. Each
file's format is the configured one or is sniffed from its first decompressed bytes. The plan
depends only on the inputs and the config, never on the engine or worker count: it fixes ordinals
and therefore "first" and the output order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from thresher.core.document import Malformed
from thresher.core.errors import InputError
from thresher.read.base import Event, Partition, ReadItem
from thresher.read.config import InputConfig
from thresher.read.paths import glob_files, input_size, is_dir, is_file, is_url, list_files, local_path, open_input
from thresher.read.readers import reader_spec
from thresher.read.skip import HEAD_BYTES, SKIPPED_KIND, is_json_document, skip_by_name
from thresher.read.sniff import compression_of, peek_decompressed, sniff_format

_GLOB_CHARS = set("*?[")


def expand_inputs(inputs: Iterable[str]) -> list[str]:
    """Files named by the inputs, in a stable order; a missing path is kept (its read reports it)."""
    return [path for path, _ in _expand(inputs)]


def _expand(inputs: Iterable[str]) -> list[tuple[str, bool]]:
    """`expand_inputs`, each file with whether a folder gave it (only those may be skipped as not data,
    `thresher.read.skip`)."""
    paths: list[tuple[str, bool]] = []
    for item in inputs:
        if item == "-":
            paths.append((item, False))
        elif is_dir(item):
            paths.extend((path, True) for path in folder_files(item))
        elif _GLOB_CHARS & set(item) and not is_file(item):
            matches = glob_files(item)
            if not matches:
                raise InputError(f"{item}: the pattern matches no file")
            paths.extend((path, False) for path in matches)
        else:
            paths.append((item, False))
    if not paths:
        raise InputError("no input files")
    return paths


def folder_files(folder: str) -> list[str]:
    """Every file below `folder`, sorted, except that a crawl folder made by `thresher fetch` (it
    carries the fetcher's marker, `thresher.fetch.marker`) gives its WARC archive alone: not its
    fetch log, stats or plan. Crawl folders below `folder` are found too (local folders)."""
    from thresher.fetch.marker import MARKER

    files = list_files(folder)
    archives = _crawl_archives(folder, MARKER)
    if not archives:
        return files
    kept = []
    for path in files:
        inside = [(root, archive) for root, archive in archives if _below(path, root)]
        if not inside or any(_below(path, archive) for _, archive in inside):
            kept.append(path)
    top = archives[0] if archives[0][0] == _norm(folder) else None
    if top is not None and not any(_below(path, top[1]) for path in kept):
        raise InputError(f"{folder}: a thresher crawl with no WARC file yet (nothing fetched: see its fetch-log.jsonl)")
    return kept


def _norm(path: str) -> str:
    return path.rstrip("/") if is_url(path) else os.path.abspath(local_path(path))


def _below(path: str, folder: str) -> bool:
    return _norm(path).startswith(folder.rstrip("/") + "/")


def _crawl_archives(folder: str, marker: str) -> list[tuple[str, str]]:
    """(crawl root, its archive folder) of each marked crawl at or below `folder`, the folder itself
    first; below a URL prefix only the prefix itself is looked at."""
    from thresher.fetch.marker import archive_of

    root = _norm(folder)
    if is_url(folder):
        candidates = [f"{root}/{marker}"]
    else:
        found = sorted(str(p) for p in Path(root).rglob(marker) if p.is_file())
        candidates = sorted(found, key=lambda p: (os.path.dirname(p) != root, p))
    out = []
    for candidate in candidates:
        if not is_file(candidate):
            continue
        with open_input(candidate) as f:
            archive = archive_of(f.read(64 * 1024).decode("utf-8", "replace"))
        if archive is not None:
            base = candidate[: -len(marker) - 1]
            out.append((base, f"{base}/{archive}"))
    return out


def format_of(path: str, config: InputConfig) -> str:
    if config.format != "auto":
        return config.format
    if path == "-" or not is_file(path):
        return sniff_format(path, b"") or "jsonl"
    try:
        head = peek_decompressed(path)
    except (OSError, InputError):
        return sniff_format(path, b"") or "jsonl"
    return sniff_format(path, head) or "unknown"


def folder_file_kind(path: str, config: InputConfig) -> str:
    """The partition kind of a file a folder gave: `skipped/<reason>` for one that is not data
    (`thresher.read.skip`), else its format (`format_of`)."""
    reason = skip_by_name(path)
    if reason is not None:
        return f"{SKIPPED_KIND}/{reason}"
    kind = format_of(path, config)
    if kind == "jsonl" and is_file(path):
        try:
            head = peek_decompressed(path, HEAD_BYTES)
        except (OSError, InputError):
            return kind  # its read reports it
        if is_json_document(path, head):
            return f"{SKIPPED_KIND}/json_document"
    return kind


# Few, large inputs are split further so that a pool has enough tasks to balance (the scan of one
# whole 60 MB file would run on one core): splittable input (uncompressed JSONL) is cut into at least
# MIN_PARTITIONS byte ranges, none smaller than MIN_PARTITION_BYTES (a task's fixed cost, ~30 ms,
# stays a few % of its work), none larger than `partition_bytes`. HTML files are batched the same
# way. The plan depends on the inputs' sizes only, never on the number of workers: ordinals, and
# therefore "first" and the output order, stay fixed; and output bytes never depend on partitioning.
MIN_PARTITIONS = 16
MIN_PARTITION_BYTES = 2 * 1024 * 1024
MIN_HTML_FILES_PER_PARTITION = 64


def range_bytes(total: int, partition_bytes: int) -> int:
    """The byte-range size for `total` bytes of splittable input: at most `partition_bytes`, small
    enough for MIN_PARTITIONS ranges unless that would go below MIN_PARTITION_BYTES."""
    balanced = max(MIN_PARTITION_BYTES, -(-total // MIN_PARTITIONS))
    return max(1, min(partition_bytes, balanced))


def html_batch_files(n_files: int, files_per_partition: int) -> int:
    balanced = max(MIN_HTML_FILES_PER_PARTITION, -(-n_files // MIN_PARTITIONS))
    return max(1, min(files_per_partition, balanced))


def plan_partitions(inputs: Iterable[str], config: InputConfig) -> list[Partition]:
    """The scan partitions of an input: one per file, byte ranges of uncompressed JSONL files
    (`range_bytes`), batches of HTML files (`html_batch_files`)."""
    # what each file is, first: the range size depends on the splittable bytes of all inputs
    files: list[tuple[str, str, int | None]] = []  # path, kind, size when splittable
    for path, from_folder in _expand(inputs):
        kind = folder_file_kind(path, config) if from_folder else format_of(path, config)
        spec = reader_spec(kind)
        size = None
        if spec is not None and spec.splittable and path != "-" and is_file(path):
            with open_input(path) as f:
                compressed = compression_of(f.read(4)) is not None
            if not compressed:
                size = input_size(path) or 0
        files.append((path, kind, size))
    step = range_bytes(sum(s for _, _, s in files if s is not None), config.partition_bytes)
    batched = {kind for kind in {k for _, k, _ in files} if (spec := reader_spec(kind)) is not None and spec.batched}
    per_batch = html_batch_files(sum(1 for _, k, _ in files if k in batched), config.html_files_per_partition)

    partitions: list[Partition] = []
    html_batch: list[str] = []

    def add(kind: str, paths: tuple[str, ...], start: int = 0, end: int | None = None) -> None:
        partitions.append(Partition(len(partitions), kind, paths, start, end))

    # files of a batched kind go into batches of their kind, in input order
    html_kind = ""

    def flush_html() -> None:
        if html_batch:
            add(html_kind, tuple(html_batch))
            html_batch.clear()

    for path, kind, size in files:
        if kind in batched:
            if kind != html_kind:
                flush_html()
                html_kind = kind
            html_batch.append(path)
            if len(html_batch) >= per_batch:
                flush_html()
            continue
        flush_html()
        if size is not None and size > step:
            for start in range(0, size, step):
                add(kind, (path,), start, min(start + step, size))
            continue
        add(kind, (path,))
    flush_html()
    return partitions


def read_partition(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    """Every item of one partition, in order, by the reader its kind names."""
    skipped, _, reason = partition.kind.partition("/")
    if skipped == SKIPPED_KIND and reason:  # a file of a folder that is not data: counted once, not read
        yield Event(f"skipped_{reason}", partition.path)
        return
    spec = reader_spec(partition.kind)
    if spec is None:
        yield Malformed("unknown_format", partition.path, "not JSONL, HTML, WARC/ARC/WET or Parquet")
        return
    try:
        read = spec.reader()
    except ImportError:
        yield Malformed(
            "unsupported_format", partition.path, spec.unavailable or f"the {spec.kind} reader is not available"
        )
        return
    yield from read(partition, config)


def iter_items(inputs: Iterable[str], config: InputConfig) -> Iterator[ReadItem]:
    """Every item of every partition of the inputs, in plan order (the library's single-process read)."""
    for partition in plan_partitions(inputs, config):
        yield from read_partition(partition, config)
