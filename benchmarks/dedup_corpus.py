"""A labelled near-duplicate corpus built from real texts in ../shared/data, with exact ground truth.

Base documents (all real, third-party text; nothing is copied into the repository):
- the 181 human-made article bodies of the article-extraction benchmark (`extraction/aeb`),
- the 130 expected Readability.js outputs (`extraction/readability`, HTML stripped to text),
- 4 documents per language of 15 consecutive lingua test sentences (75 languages, including
  Chinese, Japanese and Thai, which exercise character shingles).

Variants: each base gets 0-5 edited copies (some edited from an earlier copy, as mirrors copy each
other). An edit is 1-3 of: inserted boilerplate (cookie notices, newsletter boxes, navigation,
share bars, footers), dropped sentences, reordered sentences, word substitutions, truncation and
changed numbers, each with a random strength, so pair similarities spread over the whole range and
many fall near the thresholds. Everything is drawn from `random.Random(SEED)`: the corpus is the same
on every machine.

Ground truth: the exact Jaccard similarity of the shingle sets (`thresher.dedup.shingles.shingle_set`,
5-word shingles, 5-character shingles for scripts without spaces) of *every* pair of documents that
shares at least one shingle (an inverted index over all shingles enumerates them).

    python benchmarks/dedup_corpus.py      # writes benchmarks/.data/dedup_corpus.jsonl and truth
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from collections import defaultdict
from html.parser import HTMLParser
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
OUT_DIR = ROOT / "benchmarks" / ".data"
CORPUS = OUT_DIR / "dedup_corpus.jsonl"
TRUTH = OUT_DIR / "dedup_truth.json"
SEED = 20261130
SHINGLE_SIZE = 5

sys.path.insert(0, str(ROOT / "src"))
from thresher.dedup.shingles import shingle_set  # noqa: E402

BOILERPLATE = [
    "We use cookies to improve your experience on our website. By continuing to browse you agree to "
    "our use of cookies. Read our privacy policy to learn more.",
    "Sign up for our newsletter and get the best stories delivered to your inbox every morning. "
    "You can unsubscribe at any time.",
    "Home | News | Sport | Business | Culture | Travel | Opinion | Contact us | Advertise with us",
    "Share this article on Facebook Share on Twitter Share via Email Print this page",
    "Copyright 2024 All rights reserved. No part of this site may be reproduced without permission. "
    "Terms of use. Privacy. Accessibility statement.",
    "Related articles: You might also like these stories from our archive. Most read this week.",
    "Advertisement. Continue reading below. Subscribe now for unlimited access to all our journalism "
    "for less than one coffee a week.",
    "Leave a comment. Your email address will not be published. Required fields are marked.",
]
_SENT = re.compile(r"(?<=[.!?。！？])\s*")
_NUM = re.compile(r"\d+")
_WORDS = re.compile(r"\w+")


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in ("p", "br", "div", "li", "h1", "h2", "h3", "tr"):
            self.parts.append("\n")


def html_text(html: str) -> str:
    parser = _TextOnly()
    parser.feed(html)
    text = "".join(parser.parts)
    return re.sub(r"[ \t]+", " ", re.sub(r"\n\s*\n+", "\n", text)).strip()


def base_documents() -> list[tuple[str, str]]:
    """(source id, text) of every base document, in a fixed order."""
    out: list[tuple[str, str]] = []
    aeb = json.loads((SHARED / "extraction/aeb/ground-truth.json").read_text())
    for key in sorted(aeb):
        body = aeb[key].get("articleBody") or ""
        if len(body.split()) >= 20:
            out.append((f"aeb/{key}", body))
    for case in sorted((SHARED / "extraction/readability").iterdir()):
        path = case / "expected.html.gz"
        if path.exists():
            text = html_text(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"))
            if len(text.split()) >= 20:
                out.append((f"readability/{case.name}", text))
    for path in sorted((SHARED / "language/lingua/sentences").glob("*.txt")):
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        for i in range(4):
            chunk = lines[i * 15 : (i + 1) * 15]
            if len(chunk) == 15:
                out.append((f"lingua/{path.stem}/{i}", " ".join(chunk)))
    return out


# --- edits -------------------------------------------------------------------------------------


def sentences(text: str) -> list[str]:
    return [s for s in _SENT.split(text) if s]


def edit_boilerplate(text: str, rnd: random.Random) -> str:
    blocks = rnd.sample(BOILERPLATE, rnd.randint(1, 2))
    where = rnd.choice(["start", "end", "middle"])
    if where == "start":
        return "\n".join(blocks) + "\n" + text
    if where == "end":
        return text + "\n" + "\n".join(blocks)
    sents = sentences(text)
    cut = len(sents) // 2
    return " ".join(sents[:cut] + blocks + sents[cut:])


def edit_drop_sentences(text: str, rnd: random.Random) -> str:
    sents = sentences(text)
    if len(sents) < 3:
        return text
    share = rnd.uniform(0.03, 0.25)
    keep = [s for s in sents if rnd.random() >= share]
    return " ".join(keep or sents[:1])


def edit_reorder(text: str, rnd: random.Random) -> str:
    sents = sentences(text)
    if len(sents) < 3:
        return text
    for _ in range(rnd.randint(1, 3)):
        i = rnd.randrange(len(sents))
        j = rnd.randrange(len(sents))
        sents.insert(j, sents.pop(i))
    return " ".join(sents)


def edit_substitute(text: str, rnd: random.Random, vocabulary: list[str]) -> str:
    share = rnd.uniform(0.005, 0.06)

    def swap(m: re.Match[str]) -> str:
        return rnd.choice(vocabulary) if rnd.random() < share else m.group(0)

    return _WORDS.sub(swap, text)


def edit_truncate(text: str, rnd: random.Random) -> str:
    keep = int(len(text) * rnd.uniform(0.6, 0.97))
    cut = text.rfind(" ", 0, keep)
    return text[: cut if cut > 0 else keep]


def edit_numbers(text: str, rnd: random.Random) -> str:
    return _NUM.sub(lambda m: str(rnd.randint(0, 10 ** len(m.group(0)))) if rnd.random() < 0.7 else m.group(0), text)


EDITS = ["boilerplate", "drop_sentences", "reorder", "substitute", "truncate", "numbers"]


def apply_edits(text: str, rnd: random.Random, vocabulary: list[str]) -> tuple[str, list[str]]:
    chosen = rnd.sample(EDITS, rnd.choice([1, 1, 2, 2, 3]))
    for name in chosen:
        if name == "boilerplate":
            text = edit_boilerplate(text, rnd)
        elif name == "drop_sentences":
            text = edit_drop_sentences(text, rnd)
        elif name == "reorder":
            text = edit_reorder(text, rnd)
        elif name == "substitute":
            text = edit_substitute(text, rnd, vocabulary)
        elif name == "truncate":
            text = edit_truncate(text, rnd)
        else:
            text = edit_numbers(text, rnd)
    return text, chosen


def build_corpus(seed: int = SEED) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    bases = base_documents()
    vocabulary = sorted({w for _, t in bases[:200] for w in _WORDS.findall(t) if len(w) > 3})
    docs: list[dict[str, object]] = []
    for source, text in bases:
        family = [text]
        docs.append({"source": source, "edits": [], "text": text})
        for _ in range(rnd.choices([0, 1, 2, 3, 5], weights=[35, 25, 20, 12, 8])[0]):
            parent = rnd.choice(family) if rnd.random() < 0.3 else text
            variant, edits = apply_edits(parent, rnd, vocabulary)
            family.append(variant)
            docs.append({"source": source, "edits": edits, "text": variant})
    rnd.shuffle(docs)
    for i, d in enumerate(docs):
        d["id"] = i
    return docs


def ground_truth(texts: list[str], min_jaccard: float = 0.3) -> list[tuple[int, int, float]]:
    """(i, j, J) with i < j for every pair sharing a shingle whose exact Jaccard is >= min_jaccard
    (the pairs below are counted, not listed)."""
    sets = [shingle_set(t, SHINGLE_SIZE) for t in texts]
    postings: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, s in enumerate(sets):
        for sh in s:
            postings[sh].append(i)
    pairs: set[tuple[int, int]] = set()
    for members in postings.values():
        if len(members) > 1:
            pairs.update(combinations(members, 2))
    out = []
    for i, j in sorted(pairs):
        a, b = sets[i], sets[j]
        inter = len(a & b)
        jac = inter / (len(a) + len(b) - inter)
        if jac >= min_jaccard:
            out.append((i, j, jac))
    ground_truth.pairs_sharing_a_shingle = len(pairs)  # type: ignore[attr-defined]
    return out


def load_or_build() -> tuple[list[dict[str, object]], dict[str, object]]:
    """The corpus and its truth, built once and cached under benchmarks/.data (gitignored)."""
    if CORPUS.exists() and TRUTH.exists():
        docs = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
        return docs, json.loads(TRUTH.read_text())
    if not SHARED.is_dir():
        raise SystemExit(f"evaluation data not found at {SHARED}")
    docs = build_corpus()
    truth_pairs = ground_truth([str(d["text"]) for d in docs])
    truth = {
        "seed": SEED,
        "documents": len(docs),
        "pairs_sharing_a_shingle": ground_truth.pairs_sharing_a_shingle,  # type: ignore[attr-defined]
        "pairs": truth_pairs,
    }
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with CORPUS.open("w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    TRUTH.write_text(json.dumps(truth))
    return docs, truth


if __name__ == "__main__":
    docs, truth = load_or_build()
    pairs = truth["pairs"]
    print(f"{len(docs)} documents, {truth['pairs_sharing_a_shingle']} pairs share a shingle")
    for t in (0.5, 0.7, 0.8, 0.9, 1.0):
        print(f"  pairs with J >= {t}: {sum(1 for p in pairs if p[2] >= t)}")  # type: ignore[index]
