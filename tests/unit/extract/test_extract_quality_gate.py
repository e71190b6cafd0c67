"""Quality gate on real pages: the built-in extractor's score on the Article Extraction Benchmark
(181 news and blog pages with human-made article bodies) must not regress.

Scored as the benchmark scores it (see benchmarks/extraction_eval.py): multisets of 4-token `\\w+`
shingles, per-page tp/fp/fn normalized by their sum, precision and recall averaged over pages, F1 of
the averages. The floor sits just under the score measured when it was last re-pinned; re-pin
deliberately, never loosen silently.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter

from thresher.extract.builtin import BuiltinExtractor

AEB_F1_FLOOR = 0.965  # measured 0.975
_TOKEN = re.compile(r"\w+")


def _shingles(text: str) -> Counter:
    tokens = _TOKEN.findall(text)
    return Counter(tuple(tokens[i:i + 4]) for i in range(max(1, len(tokens) - 3)) if tokens[i:i + 4])


def _page_counts(true: str, pred: str) -> tuple[float, float, float]:
    t, p = _shingles(true), _shingles(pred)
    tp = sum((t & p).values())
    fp = sum((p - t).values())
    fn = sum((t - p).values())
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s else (0.0, 0.0, 0.0)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", "replace")


def test_aeb_f1_does_not_regress(shared_data):
    aeb = shared_data / "extraction" / "aeb"
    truth = json.loads((aeb / "ground-truth.json").read_text())
    ex = BuiltinExtractor()
    precisions, recalls = [], []
    for page_id in sorted(truth):
        html = _decode(gzip.decompress((aeb / "html" / f"{page_id}.html.gz").read_bytes()))
        tp, fp, fn = _page_counts(truth[page_id]["articleBody"], ex.extract(html).text)
        if fp == 0 and fn == 0:
            precisions.append(1.0)
            recalls.append(1.0)
            continue
        if tp + fp:
            precisions.append(tp / (tp + fp))
        if tp + fn:
            recalls.append(tp / (tp + fn))
    p = sum(precisions) / len(precisions)
    r = sum(recalls) / len(recalls)
    f1 = 2 * p * r / (p + r)
    assert f1 >= AEB_F1_FLOOR, f"AEB F1 {f1:.4f} (P {p:.4f}, R {r:.4f}) fell below {AEB_F1_FLOOR}"
