"""A seeded corpus of documents in many languages, mixed within documents, for the engine-identity
checks of the language stage (issue 29: a paragraph's language once depended on the process's
string-hash seed, and the small, uniform corpora of the other engine tests never reached the path).

Built from lingua's test sentences in ../shared/data/language/lingua (75 languages). The document
kinds are chosen to reach every path of the cascade detector: scripts that decide alone, CLD2
alone, lingua re-deciding between close languages, per-paragraph spans, and paragraphs whose
languages tie in count.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

# languages CLD2 confuses (lang/cascade.py CONFUSED_WITH): where lingua is asked
CLOSE_GROUPS = (("bs", "hr", "sr"), ("id", "ms"), ("nb", "da", "sv", "nn"), ("es", "ca"), ("sk", "cs", "sl"),
                ("xh", "zu"), ("en", "nl", "pt"))
SENTENCES_PER_LANGUAGE = 300


def load_sentences(lingua_dir: Path) -> dict[str, list[str]]:
    sentences = {}
    for path in sorted((lingua_dir / "sentences").glob("*.txt")):
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if len(line.strip()) > 20]
        sentences[path.stem] = lines[:SENTENCES_PER_LANGUAGE]
    return sentences


def _paragraph(rnd: random.Random, sentences: dict[str, list[str]], code: str, count: int) -> str:
    return " ".join(rnd.choice(sentences[code]) for _ in range(count))


def documents(sentences: dict[str, list[str]], n: int, seed: int = 29) -> list[str]:
    rnd = random.Random(seed)
    codes = sorted(sentences)
    groups = [tuple(c for c in group if c in sentences) for group in CLOSE_GROUPS]
    groups = [g for g in groups if len(g) >= 2]
    texts = []
    for i in range(n):
        kind = i % 6
        if kind == 0:  # one language, a few paragraphs
            code = rnd.choice(codes)
            paragraphs = [_paragraph(rnd, sentences, code, rnd.randint(2, 4)) for _ in range(rnd.randint(1, 4))]
        elif kind == 1:  # close languages, paragraph by paragraph: CLD2 unsure, lingua decides
            group = rnd.choice(groups)
            paragraphs = [
                _paragraph(rnd, sentences, rnd.choice(group), rnd.randint(1, 3)) for _ in range(rnd.randint(2, 5))
            ]
        elif kind == 2:  # two languages, one paragraph each: the counts tie
            a, b = rnd.sample(codes, 2)
            paragraphs = [_paragraph(rnd, sentences, a, 2), _paragraph(rnd, sentences, b, 2)]
        elif kind == 3:  # English with short foreign paragraphs
            foreign = rnd.choice(codes)
            paragraphs = [_paragraph(rnd, sentences, "en" if j % 2 == 0 else foreign, 1 + (j % 2 == 0))
                          for j in range(rnd.randint(2, 6))]
        elif kind == 4:  # short: one or two sentences of a close-group language
            paragraphs = [_paragraph(rnd, sentences, rnd.choice(rnd.choice(groups)), rnd.randint(1, 2))]
        else:  # many languages, one sentence each
            paragraphs = [_paragraph(rnd, sentences, rnd.choice(codes), 1) for _ in range(rnd.randint(3, 8))]
        texts.append("\n\n".join(paragraphs))
    return texts


def write_corpus(path: Path, lingua_dir: Path, n: int, seed: int = 29) -> Path:
    texts = documents(load_sentences(lingua_dir), n, seed)
    with path.open("w", encoding="utf-8") as fh:
        for i, text in enumerate(texts):
            fh.write(json.dumps({"url": f"https://mixed.example/{i}", "text": text}, ensure_ascii=False) + "\n")
    return path
