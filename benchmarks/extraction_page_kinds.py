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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extractors", default=",".join(EXTRACTORS))
    ap.add_argument("--no-write", action="store_true")
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
    if not args.no_write:
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        print(f"wrote {RESULTS.relative_to(ev.ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
