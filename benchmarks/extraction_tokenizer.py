"""Tree-building speed of this checkout's parser against an earlier revision's, interleaved.

Parses every AEB and trafilatura-eval page (../shared/data/extraction) with `thresher.extract.tree.parse`
of this checkout and of `--baseline` (a git revision; its `extract/tree.py` is loaded from git), in
alternating passes (A B A B ...), and reports the CPU seconds (time.process_time) of each pass, the
median of each side and their ratio. Also times generated adversarial pages (issue 13's backtracking
cases) with this checkout's parser, and resiliparse's compiled lexbor parser (alone, and with
its tree walked from Python) when it is installed. Writes benchmarks/results/extraction_tokenizer.json.

    python benchmarks/extraction_tokenizer.py --baseline da5c498 --repeats 5   # the parser before the WHATWG tokenizer
"""

from __future__ import annotations

import argparse
import gc
import glob
import gzip
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from thresher.extract import tree as current_tree

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "extraction"
RESULTS = ROOT / "benchmarks" / "results" / "extraction_tokenizer.json"


def load_baseline(rev: str):
    """The `tree` module of revision `rev`, imported under another name (its imports resolve to
    this checkout's `thresher.extract.base`, which the parser uses only for its timeout error)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:src/thresher/extract/tree.py"],
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_tree.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_tree", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pages() -> list[str]:
    out = []
    for pattern in ("aeb/html/*.html.gz", "trafilatura-eval/pages/*.gz"):
        for path in sorted(glob.glob(str(DATA / pattern))):
            with gzip.open(path, "rb") as f:
                out.append(f.read().decode("utf-8", errors="replace"))
    return out


def one_pass(parse, release=None, *, htmls: list[str]) -> float:
    """CPU seconds to parse every page, as BuiltinExtractor.extract runs it: the cyclic garbage
    collector paused and each tree's parent links cut afterwards (`release`), so the trees are
    freed at once and no pass pays for the garbage of another."""
    gc.disable()
    try:
        t0 = time.process_time()
        for html in htmls:
            doc = parse(html)
            if release is not None:
                release(doc)
        return time.process_time() - t0
    finally:
        gc.enable()
        gc.collect()


def lexbor_passes(htmls: list[str], repeats: int) -> dict[str, float] | None:
    """CPU seconds of resiliparse's lexbor parser alone, and with every node visited from Python
    (what building thresher's tree from it would cost at least); None without resiliparse."""
    try:
        from resiliparse.parse.html import HTMLTree
    except ImportError:
        return None

    def walk(html: str) -> None:
        stack = [HTMLTree.parse(html).document]
        while stack:
            child = stack.pop().first_child
            while child is not None:
                stack.append(child)
                child = child.next

    parse_only, with_walk = [], []
    for _ in range(repeats):
        parse_only.append(one_pass(HTMLTree.parse, htmls=htmls))
        with_walk.append(one_pass(walk, htmls=htmls))
    return {
        "lexbor_parse_cpu_s": statistics.median(parse_only),
        "lexbor_parse_and_walk_cpu_s": statistics.median(with_walk),
    }


def adversarial(parse, repeats: int = 20_000) -> dict[str, float]:
    """CPU seconds to parse each generated page of issue 13's backtracking classes."""
    cases = {
        "<b without >": "<b" * repeats,
        "if(a<b&&c<d)": "<p>" + "if(a<b&&c<d)" * repeats,
        '<a " repeated': '<a "' * repeats,
        "stray < and quotes": ('x < y "' * repeats) + "<p>end",
        "unclosed comments": "<!--" * repeats,
        "unclosed quoted value": '<div title="' + "a>" * repeats,
        "script escapes": "<script><!--<script>" + "-<" * repeats,
    }
    out = {}
    for name, html in cases.items():
        t0 = time.process_time()
        parse(html)
        out[name] = round(time.process_time() - t0, 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="main")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    base = load_baseline(args.baseline)
    htmls = pages()
    if not htmls:
        print(f"no pages under {DATA}", file=sys.stderr)
        return 1
    times: dict[str, list[float]] = {"current": [], "baseline": []}
    sides = {"baseline": (base.parse, getattr(base, "release", None)),
             "current": (current_tree.parse, current_tree.release)}
    for rep in range(args.repeats):
        # alternate which side goes first (ABBA), so that neither always runs second
        for side in ("baseline", "current") if rep % 2 == 0 else ("current", "baseline"):
            times[side].append(one_pass(*sides[side], htmls=htmls))
        print(f"baseline {times['baseline'][-1]:.3f}s  current {times['current'][-1]:.3f}s", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    result = {
        "pages": len(htmls),
        "baseline_revision": args.baseline,
        "cpu_s": times,
        "median_cpu_s": med,
        "current_over_baseline": round(med["current"] / med["baseline"], 4),
        "adversarial_cpu_s": adversarial(current_tree.parse),
        "lexbor": lexbor_passes(htmls, args.repeats),
    }
    print(json.dumps(result, indent=1))
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
