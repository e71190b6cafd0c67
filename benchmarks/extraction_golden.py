"""Golden reference for the built-in extractor: a sha256 per (page, mode) of its output.

Records (default) or checks (`--check`) `sha256(json.dumps([text, title, metadata, tables]))` for every
page of the extraction evaluation sets and the headline WARC pages, in three modes (text, markdown,
tables=split), and reports the extraction CPU seconds (time.process_time) per set and mode. Used to
make sure a speedup of `thresher.extract` changes no output byte.

    python benchmarks/extraction_golden.py            # write benchmarks/.data/extraction_golden.json
    python benchmarks/extraction_golden.py --check    # recompute, list every page whose output differs
    python benchmarks/extraction_golden.py --check --sets headline,aeb --modes text --repeat 3
"""

from __future__ import annotations

import argparse
import glob
import gzip
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

from thresher.extract.config import ExtractConfig
from thresher.extract.registry import get_extractor

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SHARED = ROOT.parent / "shared" / "data" / "extraction"
GOLDEN = BENCH / ".data" / "extraction_golden.json"
HEADLINE = BENCH / ".data" / "headline"
MODES = {
    "text": ExtractConfig(),
    "markdown": ExtractConfig(text_format="markdown"),
    "split": ExtractConfig(tables="split"),
}


def _gz_pages(pattern: str) -> list[tuple[str, str]]:
    pages = []
    for path in sorted(glob.glob(str(SHARED / pattern))):
        with gzip.open(path, "rb") as f:
            html = f.read().decode("utf-8", errors="replace")
        pages.append((str(Path(path).relative_to(SHARED)), html))
    return pages


def _headline_pages() -> list[tuple[str, str]]:
    """The HTML pages of the headline WARC files (each distinct payload once: the set repeats pages)."""
    dirs = sorted(d for d in HEADLINE.glob("p*") if d.is_dir() and d.name[1:].isdigit())
    if not dirs:
        return []
    # the 1,500-page set of docs/headline.md when it was generated, else the largest one
    src = HEADLINE / "p1500" if (HEADLINE / "p1500").is_dir() else max(dirs, key=lambda d: int(d.name[1:]))
    from thresher.read.config import InputConfig
    from thresher.read.sources import iter_items

    seen: set[str] = set()
    pages = []
    for item in iter_items([str(p) for p in sorted(src.glob("*.warc.gz"))], InputConfig()):
        html = getattr(item, "html", None)
        if not html:
            continue
        key = hashlib.sha256(html.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        if key in seen:
            continue
        seen.add(key)
        pages.append((f"headline/{src.name}/{key}", html))
    return pages


SETS = {
    "headline": _headline_pages,
    "aeb": lambda: _gz_pages("aeb/html/*.html.gz"),
    "trafilatura-eval": lambda: _gz_pages("trafilatura-eval/pages/*.gz"),
    "readability": lambda: _gz_pages("readability/*/source.html.gz"),
}


def _digest(extraction) -> str:
    payload = json.dumps([extraction.text, extraction.title, extraction.metadata, extraction.tables],
                         sort_keys=False, ensure_ascii=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def run_set(pages: list[tuple[str, str]], mode: str) -> tuple[dict[str, str], float]:
    extractor = get_extractor(MODES[mode])
    out: dict[str, str] = {}
    cpu = 0.0
    for name, html in pages:
        t0 = time.process_time()
        try:
            result = extractor.extract(html, None)
            digest = _digest(result)
        except Exception as exc:  # an exception is an output too
            digest = "error:" + type(exc).__name__ + ":" + str(exc)[:200]
        cpu += time.process_time() - t0
        out[name] = digest
    return out, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare against the stored golden file")
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated subset of: " + ",".join(SETS))
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of: " + ",".join(MODES))
    ap.add_argument("--repeat", type=int, default=1, help="time each (set, mode) this many times; median reported")
    ap.add_argument("--golden", default=str(GOLDEN))
    args = ap.parse_args()
    sets = [s for s in args.sets.split(",") if s]
    modes = [m for m in args.modes.split(",") if m]
    golden_path = Path(args.golden)
    golden: dict[str, dict[str, str]] = json.loads(golden_path.read_text()) if golden_path.exists() else {}
    if args.check and not golden:
        print(f"no golden file at {golden_path}; run without --check first", file=sys.stderr)
        return 2
    differing: list[str] = []
    for set_name in sets:
        pages = SETS[set_name]()
        if not pages:
            print(f"{set_name}: no pages found, skipped")
            continue
        for mode in modes:
            cpus = []
            digests: dict[str, str] = {}
            for _ in range(max(1, args.repeat)):
                digests, cpu = run_set(pages, mode)
                cpus.append(cpu)
            cpu = statistics.median(cpus)
            key = f"{set_name}:{mode}"
            if args.check:
                ref = golden.get(key, {})
                diff = [name for name, d in digests.items() if ref.get(name) != d]
                missing = [name for name in ref if name not in digests]
                differing.extend(f"{key} {name}" for name in diff + missing)
                status = f"{len(diff) + len(missing)} differ"
            else:
                golden[key] = digests
                status = "recorded"
            print(f"{key:28s} pages={len(pages):5d} cpu={cpu:8.3f}s ({1000 * cpu / len(pages):6.2f} ms/page)"
                  f" runs={' '.join(f'{c:.3f}' for c in cpus)}  {status}", flush=True)
    if args.check:
        for line in differing:
            print("DIFF", line)
        print(f"{len(differing)} differing (page, mode) pairs")
        return 1 if differing else 0
    golden_path.parent.mkdir(parents=True, exist_ok=True)
    golden_path.write_text(json.dumps(golden, indent=0, sort_keys=True))
    print(f"wrote {golden_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
