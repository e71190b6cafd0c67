"""Census of the WARC/ARC/WET samples in ../shared/data/warc: what thresher's readers (pure and
FastWARC-backed) make of each file, next to an independent count by warcio and by FastWARC directly.

warcio and FastWARC are peers, not dependencies: install them in a side environment (or by hand in
the project one) to run this. The numbers it writes are pinned in tests/unit/read/test_warc_samples.py.

    python benchmarks/warc_census.py            # writes benchmarks/results/warc_census.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from thresher.core.document import Document, Malformed
from thresher.read.base import Event, Partition, Skip
from thresher.read.config import InputConfig
from thresher.read.warc import read_warc_pure
from thresher.read.warc_config import WarcConfig

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "warc"
HTML = WarcConfig().html_types


def sample_files() -> list[Path]:
    skip = ("LICENSE", "README.md")
    return sorted(p for p in DATA.rglob("*") if p.is_file() and p.name not in skip and p.suffix != ".jsonl")


def thresher_counts(path: Path, fast: bool) -> dict[str, int]:
    counts: Counter[str] = Counter()
    part = Partition(0, "warc", (str(path),))
    if fast:
        from thresher.read.warc_fast import read_warc_fast

        items = read_warc_fast(part, InputConfig(), WarcConfig())
    else:
        items = read_warc_pure(part, InputConfig(), WarcConfig())
    for item in items:
        if isinstance(item, Document):
            counts["documents"] += 1
        elif isinstance(item, Skip):
            counts[f"skip/{item.drop.reason}"] += 1
        elif isinstance(item, Malformed):
            counts[f"malformed/{item.reason}"] += 1
        elif isinstance(item, Event):
            counts[f"event/{item.name}"] += 1
    return dict(sorted(counts.items()))


def warcio_census(path: Path) -> dict[str, object]:
    from warcio.archiveiterator import ArchiveIterator

    counts: Counter[str] = Counter()
    try:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh, arc2warc=True):
                counts["records"] += 1
                counts[f"type/{rec.rec_type}"] += 1
                if rec.rec_type in ("response", "resource") and rec.http_headers is not None:
                    status = rec.http_headers.get_statuscode()
                    mime = (rec.http_headers.get_header("Content-Type") or "").split(";")[0].strip().lower()
                    rec.content_stream().read()
                    if status == "200" and mime in HTML:
                        counts["html_200"] += 1
                elif rec.rec_type == "conversion":
                    counts["conversion"] += 1
    except Exception as exc:  # noqa: BLE001 - a peer failing is a finding, recorded
        return {**counts, "error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    return dict(sorted(counts.items()))


def fastwarc_census(path: Path) -> dict[str, object]:
    from fastwarc.warc import ArchiveIterator

    counts: Counter[str] = Counter()
    try:
        for rec in ArchiveIterator(str(path), parse_http=True, fsspec_args=False):
            counts["records"] += 1
            rtype = str(rec.record_type).rsplit(".", 1)[-1]
            counts[f"type/{rtype}"] += 1
            if rtype in ("response", "resource") and rec.is_http:
                status = rec.http_headers.status_code
                mime = (rec.http_content_type or "").split(";")[0].strip().lower()
                rec.reader.read()
                if status == 200 and mime in HTML:
                    counts["html_200"] += 1
    except Exception as exc:  # noqa: BLE001
        return {**counts, "error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    return dict(sorted(counts.items()))


def main() -> int:
    if not DATA.is_dir():
        print(f"no sample data at {DATA}", file=sys.stderr)
        return 1
    out: dict[str, object] = {}
    for path in sample_files():
        name = str(path.relative_to(DATA))
        row: dict[str, object] = {"thresher_pure": thresher_counts(path, fast=False)}
        try:
            row["thresher_fast"] = thresher_counts(path, fast=True)
        except ImportError:
            pass
        for peer, fn in (("warcio", warcio_census), ("fastwarc", fastwarc_census)):
            try:
                row[peer] = fn(path)
            except ImportError:
                row[peer] = "not installed"
        out[name] = row
        print(name, json.dumps(row), file=sys.stderr)
    dest = ROOT / "benchmarks" / "results" / "warc_census.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
