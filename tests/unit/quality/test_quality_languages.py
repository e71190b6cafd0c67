"""Ordinary prose passes in every language: the default preset keeps >= 97% of 300-word documents
built from the lingua sentences of all 75 languages (issue 3)."""

from __future__ import annotations

import random
from pathlib import Path

from thresher.core import Document
from thresher.core.stages import apply_stage
from thresher.quality.config import QualityConfig
from thresher.quality.stages import build_quality_stages
from thresher.quality.text import TextAnalysis

MIN_KEEP_RATE = 0.97


def documents(path: Path, words: int = 300, sentences_per_line: int = 4) -> list[str]:
    """Documents of `words` words (letters x chars_per_word in scripts without spaces) from the
    sentences of one language, shuffled with the language code as seed, four to a paragraph line.
    The shuffle spreads the corpus's templated sentences the way a real page would not repeat them."""
    sentences = [s.strip() for s in path.read_text(encoding="utf-8").splitlines() if s.strip()]
    random.Random(path.stem).shuffle(sentences)
    traits = TextAnalysis(" ".join(sentences[:20])).traits
    joiner = " " if traits.space_delimited else ""
    target = words * traits.chars_per_word
    out: list[str] = []
    lines: list[str] = []
    count = 0
    for i in range(0, len(sentences) - sentences_per_line + 1, sentences_per_line):
        line = joiner.join(sentences[i:i + sentences_per_line])
        lines.append(line)
        count += len(TextAnalysis(line).words)
        if count >= target:
            out.append("\n".join(lines))
            lines, count = [], 0
    return out


def keep_rates(directory: Path, config: QualityConfig = QualityConfig()) -> dict[str, tuple[int, int]]:
    stages = build_quality_stages(config)
    rates: dict[str, tuple[int, int]] = {}
    for path in sorted(directory.glob("*.txt")):
        kept = 0
        texts = documents(path)
        for n, text in enumerate(texts):
            doc = Document(id=f"{path.stem}-{n}", text=text, annotations={"lang.code": path.stem})
            if not any(apply_stage(stage, doc) for stage in stages):
                kept += 1
        rates[path.stem] = (kept, len(texts))
    return rates


def test_default_preset_keeps_prose_in_all_75_languages(shared_data):
    rates = keep_rates(shared_data / "language" / "lingua" / "sentences")
    assert len(rates) == 75
    low = {lang: f"{k}/{n}" for lang, (k, n) in rates.items() if n == 0 or k / n < MIN_KEEP_RATE}
    assert not low, f"languages below {MIN_KEEP_RATE:.0%}: {low}"
