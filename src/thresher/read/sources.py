"""From the user's input arguments to a deterministic list of partitions, and from a partition to
the items read from it.

Inputs may be files, `-` (stdin), directories (every file below, sorted) or glob patterns. Each
file's format is the configured one or is sniffed from its first decompressed bytes. The plan
depends only on the inputs and the config, never on the engine or worker count: it fixes ordinals
and therefore "first" and the output order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from thresher.core.document import Malformed
from thresher.core.errors import InputError
from thresher.read.base import Partition, ReadItem
from thresher.read.config import InputConfig
from thresher.read.paths import glob_files, input_size, is_dir, is_file, list_files, open_input
from thresher.read.sniff import compression_of, peek_decompressed, sniff_format

_GLOB_CHARS = set("*?[")


def expand_inputs(inputs: Iterable[str]) -> list[str]:
    """Files named by the inputs, in a stable order; a missing path is kept (its read reports it)."""
    paths: list[str] = []
    for item in inputs:
        if item == "-":
            paths.append(item)
        elif is_dir(item):
            paths.extend(list_files(item))
        elif _GLOB_CHARS & set(item) and not is_file(item):
            matches = glob_files(item)
            if not matches:
                raise InputError(f"{item}: the pattern matches no file")
            paths.extend(matches)
        else:
            paths.append(item)
    if not paths:
        raise InputError("no input files")
    return paths


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


def plan_partitions(inputs: Iterable[str], config: InputConfig) -> list[Partition]:
    """The scan partitions of an input: one per file, byte ranges of large uncompressed JSONL files,
    batches of HTML files."""
    partitions: list[Partition] = []
    html_batch: list[str] = []

    def add(kind: str, paths: tuple[str, ...], start: int = 0, end: int | None = None) -> None:
        partitions.append(Partition(len(partitions), kind, paths, start, end))  # type: ignore[arg-type]

    def flush_html() -> None:
        if html_batch:
            add("html", tuple(html_batch))
            html_batch.clear()

    for path in expand_inputs(inputs):
        kind = format_of(path, config)
        if kind == "html":
            html_batch.append(path)
            if len(html_batch) >= config.html_files_per_partition:
                flush_html()
            continue
        flush_html()
        if kind == "jsonl" and path != "-" and is_file(path):
            size = input_size(path) or 0
            with open_input(path) as f:
                compressed = compression_of(f.read(4)) is not None
            if not compressed and size > config.partition_bytes:
                for start in range(0, size, config.partition_bytes):
                    add("jsonl", (path,), start, min(start + config.partition_bytes, size))
                continue
        add(kind, (path,))
    flush_html()
    return partitions


def read_partition(partition: Partition, config: InputConfig) -> Iterator[ReadItem]:
    """Every item of one partition, in order."""
    kind = partition.kind
    if kind == "jsonl":
        from thresher.read.jsonl import read_jsonl

        yield from read_jsonl(partition, config)
    elif kind == "html":
        from thresher.read.files import read_html_files

        yield from read_html_files(partition, config)
    elif kind == "warc":
        try:
            from thresher.read.warc import read_warc
        except ImportError:
            yield Malformed("unsupported_format", partition.path, "WARC/ARC input is not available in this build")
            return
        yield from read_warc(partition, config)
    elif kind == "parquet":
        try:
            from thresher.read.parquet import read_parquet
        except ImportError:
            yield Malformed("unsupported_format", partition.path, "Parquet input needs: pip install 'thresher[parquet]'")
            return
        yield from read_parquet(partition, config)
    else:
        yield Malformed("unknown_format", partition.path, "not JSONL, HTML, WARC/ARC/WET or Parquet")


def iter_items(inputs: Iterable[str], config: InputConfig) -> Iterator[ReadItem]:
    """Every item of every partition of the inputs, in plan order (the library's single-process read)."""
    for partition in plan_partitions(inputs, config):
        yield from read_partition(partition, config)
