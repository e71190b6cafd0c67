"""The build records' hot-path shortcuts give exactly what the plain code gives."""

from __future__ import annotations

import random
from pathlib import Path

from thresher.core.stats import Stats
from thresher.report.index import json_string
from thresher.run.observe import (
    TaskObserver,
    _entry_line,
    kept_line,
    record_id_url,
    record_id_url_json,
    utf8_length,
    value_bin,
    whitespace_tokens,
)
from thresher.write.atomic import dumps_line


def test_whitespace_tokens_is_len_of_split() -> None:
    rng = random.Random(7)
    # every character str.split() splits on in ASCII, plus non-ASCII text (the fallback path)
    alphabet = "ab.\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f \x85\u2003é"
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert whitespace_tokens(text) == len(text.split()), repr(text)


def test_utf8_length() -> None:
    for text in ("", "plain", "naïve café", "\ud800 lone surrogate", "日本語"):
        assert utf8_length(text) == len(text.encode("utf-8", "surrogatepass"))


def test_kept_line_is_the_encoded_entry_and_id_url_json_round_trips() -> None:
    cases = [("a1b2", "https://x.example/p?q=1"), ("id\"quote", None), ("tab\tid", "https://x.example/é\n"),
             ("\\back", "https://x.example/\u2028")]
    for doc_id, url in cases:
        line = dumps_line({"id": doc_id, "url": url, "text": "t"})
        id_json, url_json = record_id_url_json(line)
        assert (json_string(id_json), json_string(url_json)) == (doc_id, url) == record_id_url(line)
        entry = {"id": doc_id, "url": url, "status": "kept", "shard": 3, "row": 17}
        assert kept_line(id_json, url_json, 3, 17) == _entry_line(doc_id, url, entry)


def test_cached_histogram_counts_equal_binning_each_value(tmp_path: Path) -> None:
    rng = random.Random(3)
    stats = Stats()
    observer = TaskObserver(stats, tmp_path / "index.jsonl", tmp_path / "samples.jsonl")
    expected: dict[str, int] = {}
    for n in range(3000):
        annotations = {"lang.code": "en", "lang.score": 0.9,
                       "quality.ratio": round(rng.random(), 2), "quality.count": rng.randrange(0, 50),
                       "quality.flag": rng.random() < 0.5,  # a bool is not a measurement
                       "quality.script": "Latn", "quality.neg": -rng.random() * 10, "quality.zero": 0.0}
        passed = n % 3 != 0
        observer.annotations(annotations, passed)
        for key, value in annotations.items():
            if key.startswith("quality.") and type(value) in (int, float):
                name = f"hist/{key}/{'passed' if passed else 'dropped'}/{value_bin(value)}"
                expected[name] = expected.get(name, 0) + 1
    observer.close()
    got = {k: v for k, v in stats.counters.items() if k.startswith("hist/")}
    assert got == expected
    assert not any("quality.flag" in k or "quality.script" in k for k in got)
