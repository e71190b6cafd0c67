"""Line dedup (issue 31): boilerplate removed and content kept on a planted corpus, repeated lines left on
the real archives (beside datatrove's FineWeb recipe), and the stage's cost against exact dedup's.

1. Planted corpus (seeded, written once to benchmarks/.data/line_dedup/): hosts with a skewed number of
   pages (P(n) ~ 1/n on 1..60, so about a third of hosts have 1-2 pages), pages whose content paragraphs
   are real text used exactly once in the whole corpus (the lingua sentences of ../shared/data, 75
   languages, 1-3 sentences of one language a paragraph, and the AEB article bodies' paragraphs; pairwise
   distinct at the structural level), and planted boilerplate lines:
   - per_host: a navigation line, a "(c) YEAR SITE. All rights reserved." footer and a tagline, text
     of one host only (a host with 1-2 pages cannot repeat them 3 times: by design not catchable);
   - varying: per-host counters whose number changes on every page ("Downloaded 812 times",
     "Page 3 of 17", "Posted on 2021-03-05"): one line per page at the normalized level, one at the
     structural level;
   - cross_host: cookie notices, share bars, newsletter boxes, "Skip to main content", "Back to top",
     comment-form lines, "Proudly powered by WordPress": each adopted by 8-30% of hosts, small ones
     included (the corpus count can catch them there);
   - rare_cross_host: 25 "Powered by CMS x.y" lines, each adopted by ~0.4% of hosts (a few documents:
     not catchable when their hosts are small).
   An adopted item is on each page of its host with probability 0.95. Quoted content: paragraphs that
   appear on exactly 2 pages (of one host or of two hosts), below both thresholds: they must stay.
   Input is JSONL (url, text: no extraction), built with `--quality none` so only dedup decides (exact
   and near dedup on: every page is distinct). Measured from the shards and `--rejects`'s spans: the
   share of boilerplate occurrences removed (goal >= 0.95), of content paragraphs lost (goal <= 0.005),
   of quoted occurrences kept; per kind and host size; and what the thresholds make catchable
   (`expected`: the stage's rule applied to the planted truth), for defaults and a small sweep.
2. Real archives (the shared WARC files of tests/golden/test_output_digests.py): `thresher build`
   (default config) without and with `--line-dedup`, and datatrove's FineWeb-recipe pipeline
   (headline_datatrove_worker.py) on the same files. Over each side's kept documents: the share of
   lines of >= 20 characters (stripped, runs of whitespace made one space, compared exactly) that are
   on >= 3 kept pages of the same host (URL host, lower-cased, without `www.`). Goal: with <= 0.3x
   without.
3. Cost, on the planted corpus, `--exec-engine local` (one process: GNU time's peak RSS is the whole
   build's): no dedup (`--exact-level none --method none`), exact dedup only (`--method none`), exact
   + line dedup; `--repeats` interleaved rounds, medians of CPU (user + sys) and peak RSS. Line dedup's
   cost = (exact + lines) - exact, exact dedup's = exact - none, per document; stats.json's phase
   timings for both.

    python benchmarks/line_dedup.py [--docs 5000] [--repeats 3] [--parts planted,sweep,real,cost]
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from thresher.dedup.exact import exact_key_text
from thresher.dedup.lines import host_of
from thresher.normalize.text import normalize_text

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
SHARED = ROOT.parent / "shared" / "data"
DATA = BENCH / ".data" / "line_dedup"
RESULTS = BENCH / "results" / "line_dedup.json"
DT_PY = BENCH / ".venvs" / "datatrove" / "bin" / "python"
WORKER = BENCH / "headline_datatrove_worker.py"
THRESHER = [sys.executable, "-m", "thresher.cli"]
# as tests/golden/test_output_digests.py WARC_FILES
WARC_FILES = (
    "aut/example.warc.gz",
    "aut/example.arc.gz",
    "resiliparse/warcfile.warc.gz",
    "resiliparse/clueweb-quirk.warc.gz",
    "dolma/sample-0000.warc.gz",
    "dolma/sample-0001.warc.gz",
    "whirlwind/whirlwind.warc.gz",
    "pywb/iana.warc.gz",
    "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz",
    "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz",
)
GOALS = {"boilerplate_removed": 0.95, "content_lost": 0.005, "real_ratio_with_over_without": 0.3}
DEFAULTS = {"unit": "line", "level": "structural", "min_documents": 10, "min_host_pages": 3}
SWEEP = (
    {},
    {"level": "normalized"},
    {"level": "raw"},
    {"unit": "paragraph"},
    {"min_host_pages": 2},
    {"min_host_pages": 5},
    {"min_documents": 5},
    {"min_documents": 20},
    {"level": "structural", "min_host_pages": 2, "min_documents": 5},
)

# -- the planted corpus -------------------------------------------------------------------------------

WORDS = ("blue", "fox", "river", "stone", "green", "tech", "daily", "north", "urban", "pixel", "maple", "harbor",
         "silver", "cedar", "metro", "solar", "atlas", "nova", "coastal", "prairie", "summit", "valley", "echo",
         "orbit", "garden", "market", "press", "media", "hub", "lab", "works", "journal", "post", "times")
TLDS = ("com", "com", "com", "org", "net", "de", "fr", "co.uk", "info", "io")
SECTIONS = ("News", "Sports", "About", "Blog", "Shop", "Events", "Contact", "Archive", "Gallery", "FAQ", "Jobs",
            "Team", "Services", "Products", "Support", "Forum", "Recipes", "Travel", "Reviews", "Videos")
TAGLINES = ("your daily source of news", "independent journalism since 1998", "tips, guides and reviews",
            "the community for makers", "stories from around the world", "everything about gardening")
VARYING = {
    "downloaded": lambda r, i, n: f"Downloaded {r.randint(1, 5000)} times",
    "viewed": lambda r, i, n: f"This article has been viewed {r.randint(1, 90000)} times.",
    "page_of": lambda r, i, n: f"Page {i + 1} of {n}",
    "posted_on": lambda r, i, n: f"Posted on {r.randint(2009, 2024)}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}",
    "comments": lambda r, i, n: f"{r.randint(0, 300)} comments",
}
# (item, lines, share of hosts that adopt it, where on the page)
CROSS_HOST = (
    ("skip_link", ("Skip to main content",), 0.30, "head"),
    ("login", ("Log in | Register",), 0.12, "head"),
    ("cookie_a", ("We use cookies to ensure that we give you the best experience on our website.",), 0.12, "tail"),
    ("cookie_b", ("This website uses cookies to improve your experience. We'll assume you're ok with this, "
                  "but you can opt-out if you wish. Accept Read More",), 0.10, "tail"),
    ("cookie_c", ("By continuing to use this site you consent to the use of cookies in accordance with our "
                  "cookie policy.",), 0.08, "tail"),
    ("share_bar", ("Share this:", "Share on Facebook", "Share on Twitter", "Share via Email"), 0.25, "after"),
    ("newsletter", ("Subscribe to our newsletter",), 0.15, "after"),
    ("newsletter_long", ("Sign up for our newsletter and get the latest news delivered to your inbox.",), 0.10,
     "after"),
    ("related", ("Related posts:",), 0.15, "after"),
    ("leave_reply", ("Leave a Reply Cancel reply",
                     "Your email address will not be published. Required fields are marked *"), 0.12, "after"),
    ("back_to_top", ("Back to top",), 0.25, "tail"),
    ("powered_wp", ("Proudly powered by WordPress",), 0.10, "tail"),
)
RARE_CMS = tuple(f"Powered by {name} {v}" for name in ("Nucleus", "Quillpress", "Brickset", "Tinysite", "Folio")
                 for v in ("1.2", "2.0", "2.4", "3.1", "4.0"))
RARE_SHARE = 0.004
ON_PAGE = 0.95  # an adopted item is on each page of its host with this probability
QUOTED_PER_DOC = 0.01  # quoted paragraphs (each on 2 pages) per document
COLLISIONS: Counter = Counter()  # source paragraphs left out as repeats, by the first level that equates them


def content_paragraphs(rng: random.Random, avoid: set[str]) -> dict[str, list[str]]:
    """Per language: real paragraphs, each distinct from every other (and from the boilerplate) at the
    structural level, so no level of line dedup can equate two of them."""
    seen = set(avoid)
    pools: dict[str, list[str]] = {}
    by_level: dict[str, set[str]] = {"raw": set(), "normalized": set()}

    def take(lang: str, para: str) -> None:
        para = normalize_text(" ".join(para.split()))  # what the build's normalize step makes of it
        key = exact_key_text(para, "structural")
        if key and key not in seen:
            seen.add(key)
            pools.setdefault(lang, []).append(para)
            for level, keys in by_level.items():
                keys.add(exact_key_text(para, level))  # type: ignore[arg-type]
        elif key:  # a repeat: which level first equates it with an earlier paragraph
            first = next((lv for lv, keys in by_level.items() if exact_key_text(para, lv) in keys), "structural")
            COLLISIONS[first] += 1

    for path in sorted((SHARED / "language" / "lingua" / "sentences").glob("*.txt")):
        sentences = [s.strip() for s in path.read_text(encoding="utf-8").splitlines() if s.strip()]
        rng.shuffle(sentences)
        i = 0
        while i < len(sentences):
            k = rng.randint(1, 3)
            take(path.stem, " ".join(sentences[i:i + k]))
            i += k
    aeb = json.loads((SHARED / "extraction" / "aeb" / "ground-truth.json").read_text(encoding="utf-8"))
    for key in sorted(aeb):
        for para in (aeb[key].get("articleBody") or "").split("\n"):
            if len(para.strip()) >= 40:
                take("aeb-en", para)
    for pool in pools.values():
        rng.shuffle(pool)
    return pools


def boilerplate_keys() -> set[str]:
    keys = {exact_key_text(line, "structural") for _, lines, _, _ in CROSS_HOST for line in lines}
    keys |= {exact_key_text(line, "structural") for line in RARE_CMS}
    r = random.Random(0)
    keys |= {exact_key_text(f(r, 1, 9), "structural") for f in VARYING.values()}
    keys |= {exact_key_text(t, "structural") for t in ("All rights reserved", *SECTIONS)}
    return keys


def _host_sizes(rng: random.Random, docs: int) -> list[int]:
    sizes, total = [], 0
    weights = [1 / n for n in range(1, 61)]
    while total < docs:
        n = min(rng.choices(range(1, 61), weights)[0], docs - total)
        sizes.append(n)
        total += n
    return sizes


def _letters(n: int) -> str:
    """n in base 26 as letters: host names without digits, so that the structural level (which equates
    digits) cannot make two hosts' footers one line."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = chr(ord("a") + r) + out
        if n == 0:
            return out


def _host_template(rng: random.Random, host: str) -> dict:
    site = " ".join(w.capitalize() for w in host.split(".")[0].split("-"))
    t: dict = {"site": site, "per_host": [], "cross": [], "varying": None}
    if rng.random() < 0.9:
        nav = " | ".join(["Home", *rng.sample(SECTIONS, 4)])
        t["per_host"].append(("nav", f"{site}: {nav}" if rng.random() < 0.5 else nav, 1.0, "head"))
    if rng.random() < 0.4:
        t["per_host"].append(("tagline", f"{site} - {rng.choice(TAGLINES)}", rng.uniform(0.5, 1.0), "top"))
    if rng.random() < 0.8:
        t["per_host"].append(("footer", f"© {rng.randint(2015, 2024)} {site}. All rights reserved.", 1.0, "tail"))
    if rng.random() < 0.3:
        t["varying"] = rng.choice(sorted(VARYING))
    for item, lines, share, where in CROSS_HOST:
        if rng.random() < share:
            t["cross"].append(("cross_host", item, lines, where))
    for line in RARE_CMS:
        if rng.random() < RARE_SHARE:
            t["cross"].append(("rare_cross_host", line, (line,), "tail"))
    return t


def planted_corpus(docs: int, seed: int) -> tuple[Path, list[dict], dict]:
    """Write the corpus (JSONL of url + text); return its path, the truth per document (every line's
    character span, kind and item) and a description."""
    rng = random.Random(seed)
    pools = content_paragraphs(rng, boilerplate_keys())
    langs = sorted(pools)
    available = sum(len(p) for p in pools.values())
    hosts: list[tuple[str, int, dict]] = []
    used_hosts: set[str] = set()
    for n in _host_sizes(rng, docs):
        while True:
            name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{_letters(len(hosts))}.{rng.choice(TLDS)}"
            if name not in used_hosts:
                break
        used_hosts.add(name)
        hosts.append((name, n, _host_template(rng, name)))
    # the pages' content: 3-8 paragraphs of one language, drawn without replacement
    pages: list[dict] = []
    exhausted = False
    for host, n, t in hosts:
        www = "www." if rng.random() < 0.5 else ""
        for i in range(n):
            lang = rng.choices(langs, [len(pools[x]) for x in langs])[0]
            k = rng.randint(3, 8)
            if len(pools[lang]) < k:
                exhausted = True
                break
            paras = [pools[lang].pop() for _ in range(k)]
            section = rng.choice(SECTIONS).lower()
            pages.append({"url": f"https://{www}{host}/{section}/{i:03d}-{lang}.html", "host": host, "host_pages": n,
                          "index": i, "template": t, "content": [("content", p, None) for p in paras]})
        if exhausted:
            break
    actual = Counter(page["host"] for page in pages)
    for page in pages:
        page["host_pages"] = actual[page["host"]]
    # quoted paragraphs: one extra paragraph each, on exactly two pages (of one host, or of two hosts)
    by_host: dict[str, list[int]] = defaultdict(list)
    for j, page in enumerate(pages):
        by_host[page["host"]].append(j)
    multi = [h for h, js in by_host.items() if len(js) >= 2]
    quotes = 0
    for q in range(int(len(pages) * QUOTED_PER_DOC)):
        lang = max(langs, key=lambda x: len(pools[x]))
        if not pools[lang]:
            break
        para = pools[lang].pop()
        scope = "same_host" if q % 2 == 0 and multi else "cross_host"
        if scope == "same_host":
            a, b = rng.sample(by_host[rng.choice(multi)], 2)
        else:
            while True:
                a, b = rng.sample(range(len(pages)), 2)
                if pages[a]["host"] != pages[b]["host"]:
                    break
        for j in (a, b):
            c = pages[j]["content"]
            c.insert(rng.randint(0, len(c)), ("quoted", para, f"q{q}:{scope}"))
        quotes += 1
    # render: blocks between blank lines; a block's lines are joined by a line break
    truth: list[dict] = []
    records = []
    for page in pages:
        t = page["template"]
        blocks: dict[str, list[tuple[str, str, str]]] = {"head": [], "top": [], "after": [], "tail": []}
        for item, line, share, where in t["per_host"]:
            if share >= 1.0 or rng.random() < share:
                blocks[where].append(("per_host", item, line))
        for kind, item, lines, where in t["cross"]:
            if rng.random() < ON_PAGE:
                blocks[where].extend((kind, item, line) for line in lines)
        if t["varying"]:
            blocks["tail"].insert(0, ("varying", t["varying"],
                                      VARYING[t["varying"]](rng, page["index"], page["host_pages"])))
        paragraphs: list[list[tuple[str, str, str]]] = []
        paragraphs += [blocks["head"]] if blocks["head"] else []
        paragraphs += [[b] for b in blocks["top"]]
        paragraphs += [[(kind, item or "", text)] for kind, text, item in page["content"]]
        after = blocks["after"]
        groups: dict[str, list] = {}
        for entry in after:  # an item's lines (a share bar) form one paragraph
            groups.setdefault(entry[1], []).append(entry)
        paragraphs += list(groups.values())
        paragraphs += [blocks["tail"]] if blocks["tail"] else []
        text_parts, segments, at = [], [], 0
        for p_index, para in enumerate(paragraphs):
            if p_index:
                text_parts.append("\n\n")
                at += 2
            for l_index, (kind, item, line) in enumerate(para):
                if l_index:
                    text_parts.append("\n")
                    at += 1
                segments.append({"kind": kind, "item": item, "start": at, "end": at + len(line), "para": p_index})
                text_parts.append(line)
                at += len(line)
        text = "".join(text_parts)
        if normalize_text(text) != text:  # the spans' offsets are into the normalized text
            raise AssertionError(f"planted text changes under normalization: {page['url']}")
        records.append({"url": page["url"], "text": text})
        truth.append({"url": page["url"], "host": page["host"], "host_pages": page["host_pages"], "text": text,
                      "segments": segments})
    order = list(range(len(records)))
    rng.shuffle(order)  # crawl order is not host order
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"planted-d{docs}-s{seed}.jsonl"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for j in order:
            f.write(json.dumps(records[j], ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    kinds = Counter(s["kind"] for d in truth for s in d["segments"])
    sizes = Counter(_size_bucket(n) for n in actual.values())
    info = {
        "path": str(path.relative_to(ROOT)), "documents": len(records), "hosts": len({p["host"] for p in pages}),
        "hosts_by_pages": dict(sorted(sizes.items())), "lines_by_kind": dict(sorted(kinds.items())),
        "quoted_paragraphs": quotes, "content_paragraphs_available": available,
        "source_repeats_left_out_by_level": dict(COLLISIONS),
        "content_pool_exhausted": exhausted, "bytes": path.stat().st_size, "seed": seed,
    }
    return path, truth, info


def _size_bucket(n: int) -> str:
    return "1-2" if n <= 2 else "3-9" if n <= 9 else "10+"


# -- measuring a build against the truth ----------------------------------------------------------------

def read_jsonl_gz(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def kept_documents(out: Path) -> list[dict]:
    return [r for shard in sorted(out.glob("shard-*.jsonl.gz")) for r in read_jsonl_gz(shard)]


def expected_removed(truth: list[dict], kept: set[str], cfg: dict) -> set[tuple[int, int]]:
    """(document, segment) pairs the stage's rule removes, applied to the planted truth: a unit (line,
    or paragraph) on >= min_documents kept documents or >= min_host_pages kept pages of one host is
    removed from every kept document that holds it."""
    docs_of: dict[str, set[int]] = defaultdict(set)
    pages_of: dict[tuple[str, str], set[int]] = defaultdict(set)
    units_of: list[list[tuple[str, list[int]]]] = []
    for d, doc in enumerate(truth):
        units: dict[object, list[int]] = {}
        for s, seg in enumerate(doc["segments"]):
            units.setdefault(s if cfg["unit"] == "line" else seg["para"], []).append(s)
        keyed = []
        for segs in units.values():
            text = "\n".join(doc["text"][doc["segments"][s]["start"]:doc["segments"][s]["end"]] for s in segs)
            key = exact_key_text(text.strip(), cfg["level"])
            keyed.append((key, segs))
            if doc["url"] in kept:
                docs_of[key].add(d)
                pages_of[(key, doc["host"])].add(d)
        units_of.append(keyed)
    most: Counter = Counter()  # a unit's most pages on one host: over that bound it goes from every page
    for (key, _), ds in pages_of.items():
        most[key] = max(most[key], len(ds))
    removed = set()
    for d in range(len(truth)):
        for key, segs in units_of[d]:
            if len(docs_of[key]) >= cfg["min_documents"] or most[key] >= cfg["min_host_pages"]:
                removed.update((d, s) for s in segs)
    return removed


def evaluate(truth: list[dict], out: Path, rejects: Path, cfg: dict) -> dict:
    kept = {r["url"]: r["text"] for r in kept_documents(out)}
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    span_info: dict[tuple[str, int], dict] = {}
    by_url = {doc["url"]: doc for doc in truth}
    mismatched = 0
    for r in read_jsonl_gz(rejects / "spans.jsonl.gz"):
        spans[r["url"]].append((r["start"], r["end"]))
        span_info[(r["url"], r["start"])] = r
        if by_url[r["url"]]["text"][r["start"]:r["end"]] != r["text"]:
            mismatched += 1
    dropped_by: Counter = Counter()
    rej = rejects / "rejects.jsonl.gz"
    reason_of: dict[str, str] = {}
    if rej.exists():
        for r in read_jsonl_gz(rej):
            drop = r.get("drop") or {}
            reason_of[r.get("url")] = f"{drop.get('stage', r.get('stage'))}:{drop.get('reason', r.get('reason'))}"
    expected = expected_removed(truth, set(kept), cfg)
    planted: Counter = Counter()
    removed: Counter = Counter()
    agree = disagree = 0
    content = {"paragraphs": 0, "lost_to_spans": 0, "lost_with_document": 0, "untouched_missing_from_text": 0}
    quoted = {"occurrences": 0, "kept": 0}
    quoted_scope: Counter = Counter()
    quoted_kept_scope: Counter = Counter()
    lost_examples: list[dict] = []
    for d, doc in enumerate(truth):
        url = doc["url"]
        is_kept = url in kept
        if not is_kept:
            dropped_by[reason_of.get(url, "not in shards")] += 1
        cuts = sorted(spans.get(url, []))
        for s, seg in enumerate(doc["segments"]):
            a, b = seg["start"], seg["end"]
            covered = sum(max(0, min(b, y) - max(a, x)) for x, y in cuts)
            gone = (not is_kept) or covered >= b - a
            touched = (not is_kept) or covered > 0
            line = doc["text"][a:b]
            if seg["kind"] in ("content", "quoted"):
                if seg["kind"] == "content":
                    content["paragraphs"] += 1
                    if not is_kept:
                        content["lost_with_document"] += 1
                    elif covered:
                        content["lost_to_spans"] += 1
                        if len(lost_examples) < 10:
                            info = next((span_info[(url, x)] for x, y in cuts if x <= a < y), {})
                            lost_examples.append({"text": line[:200], "documents": info.get("documents"),
                                                  "hosts": info.get("hosts"), "host_pages": info.get("host_pages")})
                    elif line not in kept[url]:
                        content["untouched_missing_from_text"] += 1
                else:
                    scope = seg["item"].split(":")[1]
                    quoted["occurrences"] += 1
                    quoted_scope[scope] += 1
                    if not touched:
                        quoted["kept"] += 1
                        quoted_kept_scope[scope] += 1
                continue
            size = _size_bucket(doc["host_pages"])
            for key in (("all",), (seg["kind"],), (seg["kind"], seg["item"]), ("hosts", size), (seg["kind"], size)):
                planted[key] += 1
                removed[key] += gone
            if is_kept:
                if gone == ((d, s) in expected):
                    agree += 1
                else:
                    disagree += 1
    expected_bp = sum(1 for d, s in expected if truth[d]["segments"][s]["kind"] not in ("content", "quoted"))

    def share(key: tuple) -> dict:
        return {"planted": planted[key], "removed": removed[key],
                "share": round(removed[key] / planted[key], 4) if planted[key] else None}

    kinds = sorted({k[0] for k in planted if len(k) == 2 and k[0] != "hosts"})
    lost = content["lost_to_spans"] + content["lost_with_document"]
    return {
        "config": cfg,
        "documents_kept": len(kept),
        "documents_dropped": dict(dropped_by),
        "boilerplate": share(("all",)),
        "boilerplate_catchable_by_rule": {"occurrences": expected_bp,
                                          "share": round(expected_bp / planted[("all",)], 4)},
        "boilerplate_by_kind": {k: share((k,)) for k in kinds},
        "boilerplate_by_item": {f"{k[0]}/{k[1]}": share(k) for k in sorted(planted)
                                if len(k) == 2 and k[0] in kinds and k[1] not in ("1-2", "3-9", "10+")},
        "boilerplate_by_host_pages": {b: share(("hosts", b)) for b in ("1-2", "3-9", "10+")},
        "boilerplate_by_kind_and_host_pages": {f"{k}/{b}": share((k, b)) for k in kinds for b in ("1-2", "3-9", "10+")
                                               if planted[(k, b)]},
        "content": {**content, "lost_share": round(lost / content["paragraphs"], 5)},
        "content_lost_examples": lost_examples,
        "quoted": {**quoted, "by_scope": dict(quoted_scope), "kept_by_scope": dict(quoted_kept_scope)},
        "rule_agreement": {"agree": agree, "disagree": disagree},  # removed lines vs the rule on the truth
        "span_text_mismatches": mismatched,
    }


# -- running thresher ------------------------------------------------------------------------------

def timed(cmd: list[str]) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        load = os.getloadavg()
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name, *cmd], capture_output=True,
                              text=True)
        fields = tf.read().split()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:5]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    wall, user, sys_, rss = fields[-4:]
    return {"wall_s": float(wall), "cpu_s": round(float(user) + float(sys_), 3),
            "peak_rss_mib": round(int(rss) / 1024, 1), "loadavg_before": round(load[0], 2)}


def line_flags(cfg: dict) -> list[str]:
    return ["--line-dedup", "--line-dedup-unit", cfg["unit"], "--line-dedup-level", cfg["level"],
            "--line-dedup-min-documents", str(cfg["min_documents"]),
            "--line-dedup-min-host-pages", str(cfg["min_host_pages"])]


def build(inputs: list[str], out: Path, flags: list[str], rejects: Path | None = None) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    if rejects is not None:
        shutil.rmtree(rejects, ignore_errors=True)
    cmd = [*THRESHER, "build", *inputs, "-o", str(out), "-q", "--exec-engine", "local", *flags]
    r = timed(cmd + (["--rejects", str(rejects)] if rejects is not None else []))
    stats = json.loads((out / "stats.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    r["seen"], r["kept"] = stats.get("seen"), stats.get("kept")
    r["timings_s"] = stats.get("timings_s") or {}
    r["line_dedup"] = {k: v for k, v in (manifest.get("line_dedup") or {}).items() if k != "top_lines"}
    return r


def planted_part(path: Path, truth: list[dict], work: Path, variants: tuple[dict, ...]) -> list[dict]:
    results = []
    for v in variants:
        cfg = {**DEFAULTS, **v}
        run = build([str(path)], work / "out", ["--quality", "none", *line_flags(cfg)], work / "rejects")
        ev = evaluate(truth, work / "out", work / "rejects", cfg)
        ev["build"] = {k: run[k] for k in ("wall_s", "cpu_s", "peak_rss_mib", "seen", "kept", "line_dedup")}
        results.append(ev)
        print(f"{json.dumps(v) or 'defaults':<70} boilerplate removed {ev['boilerplate']['share']:.4f} "
              f"(rule {ev['boilerplate_catchable_by_rule']['share']:.4f}) "
              f"content lost {ev['content']['lost_share']:.5f} "
              f"quoted kept {ev['quoted']['kept']}/{ev['quoted']['occurrences']} "
              f"rule disagreements {ev['rule_agreement']['disagree']}", flush=True)
    return results


# -- real archives ----------------------------------------------------------------------------------

def repeated_line_share(docs: list[tuple[str, str]], min_pages: int = 3, min_chars: int = 20) -> dict:
    """Share of kept lines (>= min_chars after strip, whitespace runs as one space) that are on >= min_pages
    kept pages of their host."""
    lines_of = []
    pages: Counter = Counter()
    host_pages: Counter = Counter()
    for url, text in docs:
        host = host_of(url)
        host_pages[host] += 1
        lines = [x for x in (" ".join(raw.split()) for raw in text.split("\n")) if len(x) >= min_chars]
        lines_of.append((host, lines))
        pages.update((host, x) for x in set(lines))
    total = repeated = chars = repeated_chars = 0
    top: Counter = Counter()
    for host, lines in lines_of:
        for x in lines:
            total += 1
            chars += len(x)
            if pages[(host, x)] >= min_pages:
                repeated += 1
                repeated_chars += len(x)
                top[(host, x)] += 1
    return {
        "pages": len(docs), "hosts": len(host_pages), "hosts_with_3_pages": sum(n >= 3 for n in host_pages.values()),
        "lines": total, "repeated_lines": repeated, "share": round(repeated / total, 4) if total else None,
        "chars": chars, "repeated_chars": repeated_chars,
        "share_of_chars": round(repeated_chars / chars, 4) if chars else None,
        "top_repeated": [{"host": h, "line": x[:120], "occurrences": n} for (h, x), n in top.most_common(8)],
    }


def real_part(work: Path, dt_timeout: float) -> dict:
    warc = SHARED / "warc"
    files = [str(warc / f) for f in WARC_FILES]
    out: dict = {"files": list(WARC_FILES)}
    for name, flags in (("thresher", []), ("thresher_line_dedup", ["--line-dedup"]),
                        ("thresher_line_dedup_structural", ["--line-dedup", "--line-dedup-level", "structural"])):
        run = build(files, work / f"real-{name}", flags)
        docs = [(r.get("url") or "", r.get("text") or "") for r in kept_documents(work / f"real-{name}")]
        out[name] = {**repeated_line_share(docs), "build": {k: run[k] for k in ("cpu_s", "seen", "kept", "line_dedup")}}
        print(f"real {name}: kept {len(docs)}, repeated line share {out[name]['share']}", flush=True)
    a, b = out["thresher"]["share"], out["thresher_line_dedup"]["share"]
    out["ratio_with_over_without"] = round(b / a, 4) if a else None
    if not DT_PY.exists():
        out["datatrove"] = {"skipped": f"no datatrove venv at {DT_PY.relative_to(ROOT)}"}
        return out
    folder = work / "real-input"
    folder.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):  # the worker reads *.warc.gz: the ARC file too, under that name
        (folder / f"real-{i:02d}.warc.gz").symlink_to(f)
    dt_work = work / "datatrove"
    env = dict(os.environ, PYTHONPATH="", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([str(DT_PY), str(WORKER), "pipeline", str(folder), str(dt_work), "1", str(dt_timeout)],
                          capture_output=True, text=True, env=env)
    result = next((json.loads(x[7:]) for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
    if proc.returncode != 0 or result is None:
        out["datatrove"] = {"failed": proc.stderr[-2000:]}
        return out
    docs = []
    for p in sorted((dt_work / "deduped").glob("*.jsonl.gz")):
        for r in read_jsonl_gz(p):
            docs.append(((r.get("metadata") or {}).get("url") or "", r.get("text") or ""))
    out["datatrove"] = {**repeated_line_share(docs), "versions": result.get("versions"),
                        "after_filters": result.get("after_filters")}
    print(f"real datatrove: kept {len(docs)}, repeated line share {out['datatrove']['share']}", flush=True)
    return out


# -- cost -----------------------------------------------------------------------------------------

COST_CONFIGS = {
    "no_dedup": ["--quality", "none", "--exact-level", "none", "--method", "none"],
    "exact": ["--quality", "none", "--method", "none"],
    "exact_lines": ["--quality", "none", "--method", "none", "--line-dedup"],
}
LINE_PHASES = ("phase.line_keys", "phase.line_count", "phase.line_edit")
EXACT_TIMINGS = ("dedup.keys", "dedup.exact.group")


def cost_part(path: Path, documents: int, work: Path, repeats: int) -> dict:
    runs: dict[str, list[dict]] = {k: [] for k in COST_CONFIGS}
    for rep in range(repeats):
        for name, flags in COST_CONFIGS.items():
            r = build([str(path)], work / "cost", flags)
            runs[name].append(r)
            print(f"cost rep {rep} {name:<12} cpu {r['cpu_s']:.2f}s rss {r['peak_rss_mib']} MiB "
                  f"load {r['loadavg_before']}", flush=True)
    med = {name: {"cpu_s": statistics.median(r["cpu_s"] for r in rs),
                  "wall_s": statistics.median(r["wall_s"] for r in rs),
                  "peak_rss_mib": statistics.median(r["peak_rss_mib"] for r in rs),
                  "cpu_all": [r["cpu_s"] for r in rs], "kept": rs[0]["kept"]} for name, rs in runs.items()}
    line_phase_s = statistics.median(sum(r["timings_s"].get(k, 0.0) for k in LINE_PHASES) for r in runs["exact_lines"])
    exact_timing_s = statistics.median(sum(r["timings_s"].get(k, 0.0) for k in EXACT_TIMINGS) for r in runs["exact"])
    line_us = (med["exact_lines"]["cpu_s"] - med["exact"]["cpu_s"]) / documents * 1e6
    exact_us = (med["exact"]["cpu_s"] - med["no_dedup"]["cpu_s"]) / documents * 1e6
    return {
        "documents": documents, "repeats": repeats, "engine": "local (one process)", "medians": med,
        "line_dedup_cpu_us_per_doc": round(line_us, 1),
        "exact_dedup_cpu_us_per_doc": round(exact_us, 1),
        "line_over_exact_cpu": round(line_us / exact_us, 2) if exact_us > 0 else None,
        "line_dedup_phases_s_per_doc_us": round(line_phase_s / documents * 1e6, 1),
        "exact_dedup_timings_us_per_doc": round(exact_timing_s / documents * 1e6, 1),
        "phase_timings_note": f"stats.json timings_s: sum of {', '.join(LINE_PHASES)} (line dedup) and of "
                              f"{', '.join(EXACT_TIMINGS)} (exact dedup), medians",
        "peak_rss_mib": {k: v["peak_rss_mib"] for k, v in med.items()},
        "timings_s_last": {k: rs[-1]["timings_s"] for k, rs in runs.items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=5000, help="documents in the planted corpus")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds of the cost runs")
    ap.add_argument("--parts", default="planted,sweep,real,cost")
    ap.add_argument("--dt-timeout", type=float, default=10.0, help="datatrove's per-page extraction guard, s")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    if not SHARED.is_dir():
        print(f"shared data not found at {SHARED}", file=sys.stderr)
        return 1
    parts = set(args.parts.split(","))
    started = datetime.datetime.now(datetime.UTC)
    path, truth, info = planted_corpus(args.docs, args.seed)
    print(f"planted corpus: {info}", flush=True)
    result: dict = {"benchmark": "line dedup: planted boilerplate, real archives, cost", "goals": GOALS,
                    "defaults": DEFAULTS, "planted_corpus": info}
    if Path(args.out).exists():  # keep the parts this invocation does not rerun
        previous = json.loads(Path(args.out).read_text())
        for key in ("planted", "sweep", "real", "cost"):
            if key not in parts and key in previous:
                result[key] = previous[key]
    work = Path(tempfile.mkdtemp(prefix="line-dedup-"))
    try:
        if "planted" in parts:
            result["planted"] = planted_part(path, truth, work, (SWEEP[0],))[0]
        if "sweep" in parts:
            result["sweep"] = planted_part(path, truth, work, SWEEP[1:])
        if "real" in parts:
            result["real"] = real_part(work, args.dt_timeout)
        if "cost" in parts:
            result["cost"] = cost_part(path, info["documents"], work, args.repeats)
            c = result["cost"]
            print(f"cost: line dedup {c['line_dedup_cpu_us_per_doc']} us/doc, exact {c['exact_dedup_cpu_us_per_doc']} "
                  f"us/doc, rss {c['peak_rss_mib']}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["parts_run"] = sorted(parts)  # the others were carried over from the results file
    result["machine"] = {"platform": platform.platform(), "python": platform.python_version(),
                         "cpus": os.cpu_count()}
    result["started_utc"] = started.isoformat(timespec="seconds")
    result["finished_utc"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
