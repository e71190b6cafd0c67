"""Extraction on the harder kinds of page, beside the peers: pages with comment threads, forum
threads and link-heavy portal pages, picked out of the three shared extraction sets by their markup.

The gold of every set keeps the article and leaves comments and navigation out, so on these pages an
extractor is scored on what it leaves out as much as on what it finds. A page's kinds (it may have
several, or none: `plain`) are decided from its HTML alone, the same for every extractor:

- `comments`: at least 3 elements whose class or id names a comment thread (`comments`,
  `comment-list`, `commentlist`, `disqus_thread`, `respond`, `replies`, ...);
- `forum`: a forum URL (`forum`, `thread`, `topic`, `board`, `viewtopic`, `showthread`) or at least
  2 post bodies of forum software (`postbody`, `post_message`, `bbWrapper`, `messageContent`, ...);
- `portal`: at least 100 links holding at least 35% of the page's visible text.

Scores are each set's own (`extraction_eval.py`): snippet F1 on trafilatura-eval, shingle F1 on AEB
and Readability's pages. Extractors run as in `extraction_eval.py` (one subprocess each, peers in
`benchmarks/.venvs/peers`).

    python benchmarks/extraction_page_kinds.py            # writes benchmarks/results/extraction_page_kinds.json
    python benchmarks/extraction_page_kinds.py --extractors thresher,trafilatura_nocomments --no-write
    python benchmarks/extraction_page_kinds.py --extractors thresher --merge   # thresher's row only

Looking at single pages (nothing written): `--pages SET/KIND` lists the kind's pages with each
extractor's page F1, worst gap to the best peer first; `--diff SET/PAGE_ID` shows, for one page, the
gold lines thresher misses and the lines it keeps that the gold does not have, and the same for the
peers. Peer outputs are cached under `benchmarks/.data/page_kinds_cache` (`--refresh` reruns them);
thresher always runs from this checkout.

    python benchmarks/extraction_page_kinds.py --pages readability/portal --extractors thresher,trafilatura_precision
    python benchmarks/extraction_page_kinds.py --diff readability/yahoo-2 --extractors thresher,trafilatura_precision
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import platform
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import extraction_eval as ev  # noqa: E402

RESULTS = ev.ROOT / "benchmarks" / "results" / "extraction_page_kinds.json"
EXTRACTORS = ("thresher", "trafilatura", "trafilatura_nocomments", "trafilatura_precision", "resiliparse")
KINDS = ("all", "comments", "forum", "portal", "plain")

_COMMENT_ATTR = re.compile(
    rb"""(?:id|class)\s*=\s*["'][^"']*\b(?:comments?(?:list|-list|_list|area|-area|s-area|thread|-thread|body"""
    rb"""|-body|_body|-content|content)?|commentlist|comment-list|comments-area|disqus_thread|respond|replies"""
    rb"""|reply-list)\b""",
    re.I,
)
_FORUM_URL = re.compile(rb"forum|thread|topic|board|viewtopic|showthread", re.I)
_FORUM_POST = re.compile(
    rb"""class\s*=\s*["'][^"']*\b(?:postbody|post-body|message-body|post_message|bbWrapper|messageContent)\b""", re.I
)
_ANCHOR = re.compile(rb"<a\b[^>]*>(.*?)</a>", re.I | re.S)
_TAG = re.compile(rb"<[^>]+>")
_SCRIPT = re.compile(rb"<(script|style)\b.*?</\1>", re.I | re.S)


def page_kinds(raw: bytes, url: str) -> list[str]:
    """The kinds of a page (sorted; empty for a plain article page)."""
    body = _SCRIPT.sub(b" ", raw)
    kinds = []
    if len(_COMMENT_ATTR.findall(body)) >= 3:
        kinds.append("comments")
    if _FORUM_URL.search(url.encode()) or len(_FORUM_POST.findall(body)) >= 2:
        kinds.append("forum")
    anchors = _ANCHOR.findall(body)
    link_chars = sum(len(_TAG.sub(b"", a).strip()) for a in anchors)
    visible = len(b" ".join(_TAG.sub(b" ", body).split()))
    if len(anchors) >= 100 and visible and link_chars / visible >= 0.35:
        kinds.append("portal")
    return kinds


def _raw(path: str) -> bytes:
    data = Path(path).read_bytes()
    return gzip.decompress(data) if path.endswith(".gz") else data


def score(set_name: str, outputs: dict[str, dict[str, Any]], gold: Any, ids: list[str]) -> float:
    if set_name == "trafilatura":
        return float(ev.score_trafilatura({i: outputs[i] for i in ids}, {i: gold[i] for i in ids}, {})["f1"])
    if set_name == "aeb":
        return round(ev.prf([ev.shingle_counts(gold[i], outputs[i]["text"]) for i in ids])[2], 4)
    return round(ev.prf([ev.shingle_counts(gold[i]["text"], outputs[i]["text"]) for i in ids])[2], 4)


CACHE = ev.ROOT / "benchmarks" / ".data" / "page_kinds_cache"
# Block-level tags of Readability's expected HTML: its gold text has a line break at each.
_BLOCK_TAGS = frozenset("p div li h1 h2 h3 h4 h5 h6 br tr td th pre blockquote section article ul ol table "
                        "figure figcaption dt dd header footer".split())
# A line is found in a text when at least this share of its 4-token shingles (its tokens, when it
# has fewer than four) are there.
_FOUND_SHARE = 0.5


class _GoldLines(ev.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def gold_lines(set_name: str, page_id: str, gold: Any) -> list[str]:
    """The gold of one page as lines: Readability's expected HTML cut at block tags, AEB's article
    body at its line breaks, trafilatura-eval's `with` snippets."""
    if set_name == "trafilatura":
        return list(gold[page_id]["with"])
    if set_name == "aeb":
        text = gold[page_id]
    else:
        exp = ev.DATA / "readability" / page_id / "expected.html.gz"
        parser = _GoldLines()
        parser.feed(gzip.decompress(exp.read_bytes()).decode("utf-8", "replace"))
        text = "".join(parser.parts)
    return [" ".join(line.split()) for line in text.split("\n") if line.strip()]


def _grams(text: str, sizes: tuple[int, ...] = (4,)) -> set[tuple[str, ...]]:
    """The text's token n-grams of the given sizes (a text shorter than n gives its whole token run)."""
    tokens = ev._TOKEN.findall(text)
    return {tuple(tokens[i:i + n]) for n in sizes for i in range(max(1, len(tokens) - n + 1))} if tokens else set()


def _found(line: str, grams: set[tuple[str, ...]]) -> bool:
    """`grams` holds the other text's n-grams of sizes 1 to 4, so a line of 1-3 tokens is found as a run."""
    mine = _grams(line)
    return not mine or len(mine & grams) >= _FOUND_SHARE * len(mine)


def line_diff(set_name: str, page_id: str, gold: Any, text: str) -> tuple[list[str], list[str]]:
    """(gold lines missing from `text`, lines of `text` the gold does not have). On trafilatura-eval
    the second list is the `without` snippets found in the text."""
    if set_name == "trafilatura":
        folded = ev._fold(text)
        missed = [s for s in gold[page_id]["with"] if ev._fold(s) not in folded]
        return missed, [s for s in gold[page_id]["without"] if ev._fold(s) in folded]
    lines = gold_lines(set_name, page_id, gold)
    kept = _grams(text, (1, 2, 3, 4))
    want = _grams("\n".join(lines), (1, 2, 3, 4))
    return ([g for g in lines if not _found(g, kept)],
            [t for t in (" ".join(x.split()) for x in text.split("\n")) if t and not _found(t, want)])


def cached_outputs(name: str, set_name: str, pages: list[dict[str, str]], refresh: bool) -> dict[str, Any]:
    """One extractor's outputs on one set; a peer's are cached (thresher's come from this checkout)."""
    path = CACHE / f"{name}-{set_name}.json"
    if not name.startswith("thresher") and path.exists() and not refresh:
        return json.loads(path.read_text())  # type: ignore[no-any-return]
    outputs = ev.run_extractor(name, pages)[0]
    if not name.startswith("thresher"):
        CACHE.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(outputs))
    return outputs


def _short(line: str, width: int = 150) -> str:
    return line if len(line) <= width else line[:width - 3] + "..."


def inspect(spec: str, mode: str, names: list[str], sets: dict[str, Any], kinds: dict[str, Any],
            refresh: bool) -> int:
    """`--pages SET/KIND` or `--diff SET/PAGE_ID` (see the module docstring)."""
    set_name, _, rest = spec.partition("/")
    if set_name not in sets:
        raise SystemExit(f"unknown set {set_name!r}: one of {', '.join(sets)}")
    pages, gold = sets[set_name]
    if mode == "pages":
        ids = [i for i, ks in kinds[set_name].items()
               if rest in ("", "all") or rest in ks or (rest == "plain" and not ks)]
    else:
        ids = [rest]
        if rest not in gold:
            raise SystemExit(f"no page {rest!r} in {set_name}")
    chosen = [p for p in pages if p["id"] in ids]
    outputs = {n: cached_outputs(n, set_name, chosen if n.startswith("thresher") else pages, refresh)
               for n in names}
    per_page = {n: ev.page_scores(set_name, {i: outputs[n][i] for i in ids}, {i: gold[i] for i in ids})
                for n in names}
    if mode == "pages":
        def gap(i: str) -> float:
            return max((per_page[n][i] for n in names[1:]), default=0.0) - per_page[names[0]][i]

        print(f"{'page':<60} " + " ".join(f"{n[:22]:>22}" for n in names))
        for i in sorted(ids, key=gap, reverse=True):
            print(f"{i[:60]:<60} " + " ".join(f"{per_page[n][i]:>22.3f}" for n in names))
        for n in names:
            print(f"{n}: {set_name}/{rest or 'all'} {score(set_name, outputs[n], gold, ids):.4f} over {len(ids)} pages")
        return 0
    page = rest
    print(f"{set_name}/{page}: kinds {kinds[set_name][page] or ['plain']}")
    for n in names:
        missed, extra = line_diff(set_name, page, gold, outputs[n][page]["text"])
        print(f"\n== {n}: page F1 {per_page[n][page]:.3f}, {len(outputs[n][page]['text'])} characters")
        print(f"-- gold lines missed ({len(missed)}):")
        for line in missed:
            print("   - " + _short(line))
        print(f"-- lines kept that the gold lacks ({len(extra)}):")
        for line in extra:
            print("   + " + _short(line))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extractors", default=",".join(EXTRACTORS))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--pages", metavar="SET/KIND", help="per-page F1 of the kind's pages (nothing written)")
    ap.add_argument("--diff", metavar="SET/PAGE_ID", help="one page's missed and extra lines (nothing written)")
    ap.add_argument("--refresh", action="store_true", help="rerun the peers instead of reading their cache")
    ap.add_argument("--merge", action="store_true",
                    help="replace only the rows of --extractors in the existing results (the others kept as they are)")
    args = ap.parse_args(argv)
    if not ev.DATA.is_dir():
        print(f"evaluation data not found at {ev.DATA}", file=sys.stderr)
        return 1
    sets = {"trafilatura": ev.trafilatura_pages(None), "aeb": ev.aeb_pages(None),
            "readability": ev.readability_pages(None)}
    kinds: dict[str, dict[str, list[str]]] = {}
    for set_name, (pages, _) in sets.items():
        # trafilatura-eval is keyed by URL; the other two sets' ids are no URLs
        kinds[set_name] = {p["id"]: page_kinds(_raw(p["path"]), p["id"] if set_name == "trafilatura" else "")
                           for p in pages}
    if args.pages or args.diff:
        names = [e for e in args.extractors.split(",") if e]
        return inspect(args.pages or args.diff, "pages" if args.pages else "diff", names, sets, kinds, args.refresh)
    members = {s: {k: [i for i, ks in kinds[s].items() if k == "all" or k in ks or (k == "plain" and not ks)]
                   for k in KINDS} for s in sets}
    results: dict[str, Any] = {"pages": {s: {k: len(v) for k, v in m.items()} for s, m in members.items()},
                               "f1": {}, "versions": {}}
    for name in [e for e in args.extractors.split(",") if e]:
        results["f1"][name] = {}
        for set_name, (pages, gold) in sets.items():
            outputs, version, _, _ = ev.run_extractor(name, pages)
            results["versions"][name] = version
            results["f1"][name][set_name] = {k: score(set_name, outputs, gold, ids)
                                             for k, ids in members[set_name].items() if len(ids) >= 5}
            print(name, set_name, json.dumps(results["f1"][name][set_name]), flush=True)
    results["date"] = datetime.date.today().isoformat()
    results["machine"] = {"platform": platform.platform(), "python": platform.python_version()}
    if args.merge and RESULTS.exists():
        previous = json.loads(RESULTS.read_text())
        if previous.get("pages") != results["pages"]:
            raise SystemExit("--merge: the page groups differ from the stored run's; rerun every extractor")
        for key in ("f1", "versions"):
            results[key] = {**previous.get(key, {}), **results[key]}
    if not args.no_write:
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        print(f"wrote {RESULTS.relative_to(ev.ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
