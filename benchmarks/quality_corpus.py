"""The documents the quality benchmarks run on: real extracted pages plus generated junk.

Real text (nobody on this project wrote it, read from ../shared/data):
- `aeb-gold`: the human-made article bodies of the article-extraction benchmark (181);
- `aeb-extracted`, `trafilatura-extracted`: thresher's own extractor on the AEB pages and the
  trafilatura evaluation pages (whole pages, so menus, lists and boilerplate come along);
- `dolma-cc`: 20 Common Crawl WET-derived documents.

Junk (`junk-*`): generated with a fixed seed by damaging the real texts the ways web pages are
damaged (repeated lines and paragraphs, bullet and link lists, hashtags, ellipsis teasers, menus,
lorem ipsum, code, number tables, cookie banners, base64 blobs, tiny documents), with parameters
spread across each rule's threshold so that agreement is tested near the bounds, not only far away.

Run directly to write `benchmarks/.data/quality_docs.jsonl` (gitignored) and print counts.
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
DATA_DIR = ROOT / "benchmarks" / ".data"
CORPUS = DATA_DIR / "quality_docs.jsonl"


def _html(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        from thresher.read.decode import decode_html

        return decode_html(raw)[0]
    except ImportError:
        return raw.decode("utf-8", "replace")


def real_documents(extract: bool = True) -> list[dict]:
    from thresher.normalize.text import normalize_text

    docs: list[dict] = []
    aeb = SHARED / "extraction" / "aeb"
    truth = json.loads((aeb / "ground-truth.json").read_text())
    for key in sorted(truth):
        body = truth[key].get("articleBody") or ""
        if body.strip():
            docs.append({"id": f"aeb-gold/{key}", "kind": "aeb-gold", "url": truth[key].get("url"),
                         "text": normalize_text(body)})
    for path in sorted((SHARED / "warc" / "dolma").glob("cc_en_head-*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines()):
            rec = json.loads(line)
            docs.append({"id": f"dolma-cc/{path.stem}/{n}", "kind": "dolma-cc",
                         "url": (rec.get("metadata") or {}).get("url"), "text": normalize_text(rec["text"])})
    if extract:
        from thresher.extract.config import ExtractConfig
        from thresher.extract.registry import get_extractor

        extractor = get_extractor(ExtractConfig())
        pages = [(f"aeb-extracted/{k}", "aeb-extracted", truth[k].get("url"), aeb / "html" / f"{k}.html.gz")
                 for k in sorted(truth)]
        tdir = SHARED / "extraction" / "trafilatura-eval"
        evaldata = json.loads((tdir / "evaldata.json").read_text())
        for url in sorted(evaldata):
            pages.append((f"trafilatura-extracted/{evaldata[url]['file']}", "trafilatura-extracted", url,
                          tdir / "pages" / (evaldata[url]["file"] + ".gz")))
        for doc_id, kind, url, path in pages:
            if not path.exists():
                continue
            try:
                text = extractor.extract(_html(path), url=url).text
            except Exception:  # noqa: BLE001 - a page the extractor cannot read is just left out
                continue
            text = normalize_text(text)
            if text.strip():
                docs.append({"id": doc_id, "kind": kind, "url": url, "text": text})
    return docs


def junk_documents(real: list[dict], seed: int = 20261130, per_kind: int = 60) -> list[dict]:
    rng = random.Random(seed)
    texts = [d["text"] for d in real if len(d["text"]) > 400]
    lines_pool = [ln for t in texts for ln in t.split("\n") if 20 < len(ln) < 300]
    words_pool = [w for ln in lines_pool[:4000] for w in ln.split()]

    def prose(n_lines: int) -> list[str]:
        start = rng.randrange(max(1, len(lines_pool) - n_lines))
        return lines_pool[start:start + n_lines]

    def phrase(n: int) -> str:
        return " ".join(rng.choice(words_pool) for _ in range(n))

    makers = {
        "repeated-lines": lambda: prose(rng.randint(3, 20)) + [rng.choice(lines_pool)] * rng.randint(1, 12),
        "repeated-paragraphs": lambda: (lambda p: (p + [""]) * rng.randint(2, 4) + prose(rng.randint(0, 12)))(
            prose(rng.randint(1, 4))
        ),
        "bullets": lambda: [
            rng.choice(["- ", "• ", "* ", ""]) + phrase(rng.randint(1, 8)) for _ in range(rng.randint(5, 40))
        ],
        "hashtags": lambda: (
            prose(rng.randint(1, 6))
            + [" ".join("#" + rng.choice(words_pool).strip(".,") for _ in range(rng.randint(2, 40)))]
        ),
        "ellipses": lambda: [
            phrase(rng.randint(3, 12)) + rng.choice(["...", "…", ".", ""]) for _ in range(rng.randint(4, 30))
        ],
        "menu": lambda: [phrase(rng.randint(1, 3)) for _ in range(rng.randint(5, 60))] + prose(rng.randint(0, 6)),
        "lorem-code": lambda: (
            prose(rng.randint(2, 12))
            + [
                rng.choice(
                    [
                        "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
                        "function init() { return window.app || {}; }",
                        "Enable JavaScript to see this content.",
                        "This website uses cookies to improve your experience. See our privacy policy.",
                        "var x = {a: 1, b: 2};",
                    ]
                )
                for _ in range(rng.randint(1, 3))
            ]
            + prose(rng.randint(0, 6))
        ),
        "numbers": lambda: (
            [" ".join(str(rng.randint(0, 99999)) for _ in range(rng.randint(2, 10))) for _ in range(rng.randint(3, 30))]
            + prose(rng.randint(0, 8))
        ),
        "tiny": lambda: [phrase(rng.randint(1, 70)) + rng.choice([".", "", "!"])],
        "long-words": lambda: (
            prose(rng.randint(0, 4))
            + [
                "".join(
                    rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                    for _ in range(rng.randint(8, 1500))
                )
                for _ in range(rng.randint(1, 20))
            ]
        ),
        "ngram-spam": lambda: prose(rng.randint(1, 10)) + [" ".join([phrase(rng.randint(2, 6))] * rng.randint(2, 30))],
        "short-lines": lambda: [phrase(rng.randint(1, 6)) + rng.choice([".", ""]) for _ in range(rng.randint(5, 50))],
        "no-punctuation": lambda: [ln.rstrip(".!?\"'") for ln in prose(rng.randint(3, 30))],
        "citations": lambda: [
            ln + rng.choice(["[1]", "[edit]", "[citation needed]", ""]) for ln in prose(rng.randint(3, 20))
        ],
    }
    docs: list[dict] = []
    for kind, make in makers.items():
        for n in range(per_kind):
            lines = make()
            if rng.random() < 0.3:  # mix with real prose so values land near the thresholds
                lines = prose(rng.randint(1, 15)) + lines
                if rng.random() < 0.5:
                    rng.shuffle(lines)
            docs.append({"id": f"junk-{kind}/{n}", "kind": f"junk-{kind}", "url": None, "text": "\n".join(lines)})
    return docs


def build(path: Path = CORPUS, extract: bool = True) -> list[dict]:
    real = real_documents(extract)
    docs = real + junk_documents(real)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    return docs


def load(path: Path = CORPUS) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


if __name__ == "__main__":
    if not SHARED.is_dir():
        sys.exit(f"evaluation data not found at {SHARED}")
    built = build()
    kinds: dict[str, int] = {}
    for d in built:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    print(json.dumps({"documents": len(built), "kinds": kinds}, indent=1))
