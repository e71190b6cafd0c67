"""The decontamination stages: drop a document that shares n-grams with a benchmark item, or cut
the overlapping spans out of it.

`DecontamFilter` (mode `drop`) drops a document sharing at least `min_overlap` distinct indexed
n-grams with the benchmarks (GPT-3, Brown et al. 2020, appendix C: 13-gram overlap):

    Drop("decontam", "benchmark_overlap", value=<distinct shared n-grams>, limit=min_overlap,
         detail={"benchmark": "gsm8k/test", "item": "17", "ngram": "...", "items": <items matched>})

attributed to the item with the most shared n-grams (ties: the item read first), its first shared
n-gram in document order. `DecontamCut` (mode `cut`) removes every overlapping span instead, keeps
the document with `decontam.cut_ngrams` and `decontam.items` annotations (`benchmark#item`), and drops
it only when nothing is left (`empty_after_cut`). Both run after the quality filters: only
documents that would be kept pay for the lookup.
"""

from __future__ import annotations

import re
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stats import Stats
from thresher.decontam.config import DecontamConfig
from thresher.decontam.index import NgramIndex
from thresher.decontam.index_store import load_index
from thresher.dedup.shingles import word_tokens

STAGE = "decontam"
_WORD = re.compile(r"\w+")


class _Overlap:
    def __init__(self, index: NgramIndex, matches: list[tuple[int, int]]) -> None:
        self.index = index
        self.matches = matches
        per_item: dict[int, list[int]] = {}
        for pos, entry in matches:
            per_item.setdefault(index.items_of[entry], []).append(pos)
        self.per_item = per_item

    @property
    def distinct_ngrams(self) -> int:
        return len({entry for _, entry in self.matches})

    def top_item(self) -> tuple[int, int]:
        """(item, first position) of the item with the most shared n-grams."""
        item = min(self.per_item, key=lambda i: (-len(self.per_item[i]), i))
        return item, self.per_item[item][0]

    def labels(self) -> list[str]:
        refs = self.index.items
        return sorted({f"{refs[i].benchmark}#{refs[i].id}" for i in self.per_item})


class DecontamFilter:
    """Drops documents that share benchmark n-grams (module doc)."""

    name = STAGE

    def __init__(self, config: DecontamConfig) -> None:
        self.config = config
        self.index = load_index(config)

    def check(self, doc: Document) -> Drop | None:
        matches = self.index.matches(doc.text)
        if not matches:
            return None
        overlap = _Overlap(self.index, matches)
        shared = overlap.distinct_ngrams
        if shared < self.config.min_overlap:
            return None
        item, pos = overlap.top_item()
        ref = self.index.items[item]
        ngram = " ".join(word_tokens(doc.text)[pos : pos + self.index.n])
        detail = {"benchmark": ref.benchmark, "item": ref.id, "ngram": ngram, "items": len(overlap.per_item)}
        return Drop(STAGE, "benchmark_overlap", value=shared, limit=self.config.min_overlap, detail=detail)


class DecontamCut:
    """Cuts benchmark-overlapping spans out of documents (module doc)."""

    name = STAGE

    def __init__(self, config: DecontamConfig) -> None:
        self.config = config
        self.index = load_index(config)
        self.stats: Stats | None = None

    def bind_stats(self, stats: Stats) -> None:
        self.stats = stats

    def transform(self, doc: Document) -> Drop | None:
        matches = self.index.matches(doc.text)
        overlap = _Overlap(self.index, matches) if matches else None
        if overlap is None or overlap.distinct_ngrams < self.config.min_overlap:
            doc.annotations["decontam.cut_ngrams"] = 0
            doc.annotations["decontam.items"] = []
            return None
        doc.text = cut_spans(doc.text, [pos for pos, _ in matches], self.index.n)
        doc.annotations["decontam.cut_ngrams"] = overlap.distinct_ngrams
        doc.annotations["decontam.items"] = overlap.labels()
        if self.stats is not None:
            self.stats.count("event/decontam.cut_documents")
            self.stats.count("event/decontam.cut_ngrams", overlap.distinct_ngrams)
        if not doc.text.strip() or _WORD.search(doc.text) is None:
            return Drop(STAGE, "empty_after_cut", value=0, limit=1)
        return None


def cut_spans(text: str, positions: list[int], n: int) -> str:
    """`text` without the words of the n-grams starting at `positions` (word-token indexes) and what
    lies between them. Word tokens are the lower-cased text's `\\w+` runs (as the index's); where
    lower-casing changes the text's length (a rare letter such as `İ`), offsets of the lower-cased text
    cannot be used on the original, and the whole text is removed."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return ""
    spans = [m.span() for m in _WORD.finditer(lowered)]
    ranges: list[list[int]] = []
    for pos in sorted(positions):
        lo, hi = pos, min(pos + n, len(spans)) - 1
        if ranges and lo <= ranges[-1][1] + 1:
            ranges[-1][1] = max(ranges[-1][1], hi)
        else:
            ranges.append([lo, hi])
    pieces, cursor = [], 0
    for lo, hi in ranges:
        pieces.append(text[cursor : spans[lo][0]])
        cursor = spans[hi][1]
    pieces.append(text[cursor:])
    out = pieces[0]
    for piece in pieces[1:]:
        out = (
            out.rstrip(" ")
            + (" " if out and not out.endswith("\n") and piece[:1] not in ("\n", "") else "")
            + piece.lstrip(" ")
        )
    return out.strip()


def build_decontam_stages(config: DecontamConfig) -> list[Any]:
    if not config.enabled:
        return []
    return [DecontamCut(config) if config.mode == "cut" else DecontamFilter(config)]
