"""Parse CPU time of the compiled tree builder (`_ctree.parse`) against the Python reference
(`tree._parse_python`), and a leak check of the compiled one.

Pages: the 202 real-build pages that `extraction_build_instructions.py` writes to `--pages` (a
pickle of (bytes, declared charset) pairs, decoded with `decode_html`), and the AEB pages of
../shared/data/extraction (decoded as the digests benchmark does). Each pass parses every page and
releases its tree; passes of the two builders alternate, and the medians are reported.

    python benchmarks/ctree_parse.py [--pages PKL] [--passes 7] [--out results.json]
    python benchmarks/ctree_parse.py --leaks    # 20 rounds: RSS and traced memory must stay flat
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))


def build_pages(path: Path) -> list[str]:
    from thresher.read.decode import decode_html

    return [decode_html(data, declared)[0] for data, declared in pickle.loads(path.read_bytes())]


def aeb_pages() -> list[str]:
    from extraction_speed_digests import page_paths
    from extraction_worker import read_page

    return [read_page(path) for key, path in page_paths() if key.startswith("aeb:")]


def one_pass(parse: Callable, pages: list[str]) -> float:
    from thresher.extract.tree import release

    t0 = time.process_time()
    for html in pages:
        release(parse(html))
    return time.process_time() - t0


def speed(pages: list[str], passes: int) -> dict:
    from thresher.extract import _ctree, tree

    times: dict[str, list[float]] = {"python": [], "c": []}
    for _ in range(passes):
        times["python"].append(one_pass(tree._parse_python, pages))
        times["c"].append(one_pass(_ctree.parse, pages))
    py, c = statistics.median(times["python"]), statistics.median(times["c"])
    return {"pages": len(pages), "chars": sum(map(len, pages)), "python_cpu_s": round(py, 4), "c_cpu_s": round(c, 4),
            "ratio": round(py / c, 2), "passes": passes}


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def leaks(pages: list[str], rounds: int = 20) -> int:
    """Parse every page `rounds` times (half the trees released, half left to the collector; some
    parses stopped by the deadline; some with class-called nodes): memory must not grow."""
    from thresher.extract import _ctree
    from thresher.extract.base import ExtractionTimeout
    from thresher.extract.tree import release

    def one_round(i: int) -> None:
        for html in pages:
            doc = _ctree.parse(html)
            if i % 2:
                release(doc)
            del doc
        for html in pages[:20]:
            try:
                _ctree.parse(html, 0.0)
            except ExtractionTimeout:
                pass
        _ctree._force_class_call(True)
        for html in pages[:10]:
            _ctree.parse(html)
        _ctree._force_class_call(False)
        gc.collect()

    for i in range(3):  # caches and allocator arenas warm
        one_round(i)
    tracemalloc.start()
    base_traced, base_rss = tracemalloc.get_traced_memory()[0], rss_mib()
    grew = []
    for i in range(rounds):
        one_round(i)
        traced, rss = tracemalloc.get_traced_memory()[0] - base_traced, rss_mib() - base_rss
        grew.append(traced)
        print(f"round {i:2}: RSS {rss:+.2f} MiB, traced {traced:+,} B", flush=True)
    # a leak of one object a page would add >= 200 * 16 B a round
    return 0 if grew[-1] - grew[0] < 64 * 1024 else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, default=Path(tempfile.gettempdir()) / "thresher-build-pages.pkl")
    ap.add_argument("--passes", type=int, default=7)
    ap.add_argument("--leaks", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    pages = build_pages(args.pages)
    if args.leaks:
        return leaks(pages)
    result = {"build_pages": speed(pages, args.passes), "aeb_pages": speed(aeb_pages(), args.passes)}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
