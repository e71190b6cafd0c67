"""`tsv`: shards as tab-separated text, one document per line, for `cut`, `grep`, `awk`, `sort`
and spreadsheets.

    id <TAB> url <TAB> title <TAB> text <TAB> extra

The first line is that header. `extra` holds every other field of the record (annotations,
metadata, source, fetch time) as one compact JSON object, so nothing is lost: reading a shard back
gives the same records as the JSONL formats. In the four text columns a backslash, tab, newline and
carriage return are written `\\\\`, `\\t`, `\\n` and `\\r` (the convention of PostgreSQL's and MySQL's
text export), so every document stays on its line; an absent URL or title is an empty cell.

Shards are uncompressed (`shard-00000.tsv`) and byte-identical for the same kept documents, like
every thresher format: the bytes depend on the records alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from thresher.write.atomic import atomic_open
from thresher.write.pieces import iter_piece_records

COLUMNS = ("id", "url", "title", "text")
HEADER = "\t".join((*COLUMNS, "extra")) + "\n"
_ESCAPE = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_UNESCAPE = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def escape(value: Any) -> str:
    return "" if value is None else str(value).translate(_ESCAPE)


def unescape(cell: str) -> str:
    if "\\" not in cell:
        return cell
    out, chars = [], iter(cell)
    for c in chars:
        out.append(_UNESCAPE.get(next(chars, ""), "") if c == "\\" else c)
    return "".join(out)


def tsv_line(record: dict[str, Any]) -> str:
    extra = {key: value for key, value in record.items() if key not in COLUMNS}
    cells = [escape(record.get(column)) for column in COLUMNS]
    cells.append(json.dumps(extra, ensure_ascii=False, separators=(",", ":"), sort_keys=True) if extra else "")
    return "\t".join(cells) + "\n"


class TsvFormat:
    name = "tsv"
    suffix = ".tsv"

    def __init__(self, compression_level: int = 6) -> None:
        pass  # uncompressed: the level does not apply

    def shard_name(self, index: int, total: int) -> str:
        return f"shard-{index:05d}{self.suffix}"

    def assemble(self, pieces: Sequence[Path], dest: Path) -> int:
        with atomic_open(dest, "wb") as out:
            return self.write_shard(pieces, out)

    def write_shard(self, pieces: Sequence[Path], out: IO[bytes]) -> int:
        out.write(HEADER.encode("utf-8"))
        n = 0
        for record in iter_piece_records(pieces):
            out.write(tsv_line(record).encode("utf-8", "surrogatepass"))
            n += 1
        return n

    def read(self, raw: IO[bytes]) -> Iterator[dict[str, Any]]:
        lines = iter(raw)
        next(lines, None)  # the header
        for line in lines:
            cells = line.decode("utf-8", "surrogatepass").rstrip("\n").split("\t")
            record: dict[str, Any] = {column: unescape(cell) for column, cell in zip(COLUMNS, cells, strict=False)}
            for column in ("url", "title"):
                if record.get(column) == "":
                    record[column] = None
            if len(cells) > len(COLUMNS) and cells[len(COLUMNS)]:
                record.update(json.loads(cells[len(COLUMNS)]))
            yield record

    def card(self, text: str) -> str:
        return text + (
            "\n## Shard format\n\nTab-separated text (`.tsv`, UTF-8, written by the thresher-tsv-format plugin): a "
            "header line, then one document per line with the columns `id`, `url`, `title`, `text` and `extra` (the "
            "record's other fields as a JSON object). Backslash, tab, newline and carriage return in the first four "
            "columns are written `\\\\`, `\\t`, `\\n` and `\\r`.\n"
        )
