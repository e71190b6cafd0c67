"""The build records' hot-path shortcuts give exactly what the plain code gives."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from thresher.core.stats import Stats
from thresher.report.index import json_string
from thresher.run.histograms import BOUNDARIES, ValueHistograms, bin_range, value_bin
from thresher.run.observe import (
    TaskObserver,
    _dumps,
    _entry_line,
    dropped_line,
    entry_json,
    kept_line,
    record_id_url_json,
    utf8_length,
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
        assert (json_string(id_json), json_string(url_json)) == (doc_id, url)
        entry = {"id": doc_id, "url": url, "status": "kept", "shard": 3, "row": 17}
        assert kept_line(id_json, url_json, 3, 17) == _entry_line(doc_id, url, entry)


def test_hand_formatted_lines_are_the_encoded_entries() -> None:
    """The dropped-document line (hand-formatted drop, C encoder built once) is `json.dumps`'s."""
    import json

    from thresher.core.document import Drop

    drops = [
        Drop("quality.repetition", "top_3_gram_too_frequent", 0.1862, 0.18),
        Drop("dedup.near", "near_duplicate", 0.9, 0.8, {"kept_id": "k\u00e9", "cluster": "c", "n": [1, 2.5]}),
        Drop("quality.gopher", "too_few_words", 12, 50),
        Drop("read", "revisit", None, None),
        Drop("x", "nan", math.nan, math.inf),
        Drop("x", "neg", -0.0, -1e300),
        Drop("x", "flag", True, False),
        Drop("x", "big", 10**30, "limit as text"),
        Drop('st\u00e4ge"', "re\tason", 1.0, 2.0, {"z": None, "a": "\u2028"}),
    ]
    sources = [{"file": "/x/a.jsonl", "offset": 624}, None, {"warc": "é.warc.gz", "record": 3, "offset": 7}, "text"]
    for drop in drops:
        record = drop.to_record()
        assert entry_json(record) == json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        for source in sources:
            for doc_id, url in (("a1", "https://x.example/é"), (None, None), ("q\"id", "https://x.example/\u2028")):
                entry = {"id": doc_id, "url": url, "status": "dropped", "source": source, "drop": record}
                assert dropped_line(_dumps(doc_id), _dumps(url), source, record) == _entry_line(doc_id, url, entry)
    assert all(_dumps(v) == json.dumps(v, ensure_ascii=False) for v in ("é\n\"", None, 3, 2.5, [1]))


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


def _awkward_values(rng: random.Random) -> list[float]:
    """Values on and next to every kind of bin edge, plus the ones binning must not trip on."""
    edges = [BOUNDARIES[i] for i in rng.sample(range(len(BOUNDARIES)), 40)] + [BOUNDARIES[0], BOUNDARIES[-1]]
    near = [math.nextafter(e, d) for e in edges for d in (0.0, math.inf)]
    odd = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-300, 1e300, 5e-324, 1.0, 10.0, 0.1, 2**53 + 1]
    return (
        edges + near + odd + [rng.uniform(-100, 100) for _ in range(200)] + [rng.randrange(0, 10**6) for _ in range(50)]
    )


def test_bins_hold_their_values() -> None:
    for v in _awkward_values(random.Random(5)):
        name = value_bin(v)
        if name == "z":
            assert v == 0 or not math.isfinite(v)
            continue
        lo, hi = bin_range(name)
        k = int(name[1:])
        if BOUNDARIES[0] <= abs(v) < BOUNDARIES[-1]:  # inside the boundaries: exactly its bin
            assert (lo <= v < hi) if v > 0 else (lo < v <= hi), (v, name)
        else:
            assert k in (-401, 400), (v, name)
    assert value_bin(10**400) == "p400" and value_bin(-(10**400)) == "n400"  # beyond any float


def test_vectorized_histograms_count_what_value_by_value_counts(tmp_path: Path) -> None:
    pytest = __import__("pytest")
    pytest.importorskip("numpy")
    rng = random.Random(11)
    values = _awkward_values(rng)
    vec, each = Stats(), Stats()
    hv, he = ValueHistograms(vec.counters, vectorized=True), ValueHistograms(each.counters, vectorized=False)
    hv.FLUSH_VALUES = he.FLUSH_VALUES = 97  # several flushes mid-stream
    for n in range(2000):
        annotations = {"lang.code": "en", "quality.a": rng.choice(values), "quality.b": rng.randrange(0, 30),
                       "quality.flag": n % 2 == 0, "quality.script": "Latn", "quality.c": rng.choice(values)}
        if n % 50 == 0:  # another type for a metric: this document goes value by value
            annotations["quality.b"] = "n/a"
        if n % 77 == 0:  # another key order: another layout
            annotations = dict(reversed(list(annotations.items())))
        if n == 999:
            annotations["quality.b"] = 10**400  # an int beyond any float
        if n % 91 == 0:  # no annotations, or a single one
            annotations = {} if n % 2 else {"quality.a": annotations["quality.a"]}
        hv.add(annotations, passed=n % 3 != 0)
        he.add(annotations, passed=n % 3 != 0)
    hv.flush()
    he.flush()
    assert vec.counters == each.counters
    assert sum(vec.counters.values()) > 2000 * 2


def test_index_buckets_written_are_the_buckets_read(tmp_path: Path) -> None:
    """The merge's inlined bucketing is `_bucket` (CRC-32), so every id and URL is found; ids and
    URLs with escapes, tabs and non-ASCII included."""
    from thresher.report.index import DocumentIndex, IndexWriter

    writer = IndexWriter(tmp_path / "parts", 40_000)  # 16 buckets
    assert writer.buckets > 1
    ids = [f"d{i:05d}" for i in range(3000)] + ['q"uote', "tab\tid", "é\\back"]
    for i, doc_id in enumerate(ids):
        url = f"https://x.example/{i}/é\t{doc_id}"
        writer.add_json(
            _dumps(doc_id), _dumps(url), kept_line(_dumps(doc_id), _dumps(url), 0, i).split("\t", 2)[2].rstrip("\n")
        )
    writer.finish(tmp_path / "ds")
    index = DocumentIndex(tmp_path / "ds")
    for i, doc_id in enumerate(ids):
        entry = index.by_id(doc_id)
        assert entry is not None and entry["row"] == i
        assert index.ids_for_url(f"https://x.example/{i}/é\t{doc_id}") == [doc_id]


@pytest.mark.parametrize("spilled", [False, True])
def test_ids_and_urls_with_line_breaks_are_found(tmp_path: Path, spilled: bool) -> None:
    """Every character `str.splitlines` or text-mode reading breaks a line on, inside an id or a
    URL: the entry stays one line (escaped or not by JSON) and is found, in memory or spilled."""
    from thresher.report.index import DocumentIndex, IndexWriter

    writer = IndexWriter(tmp_path / "parts", 10)
    if spilled:
        writer.FLUSH_BYTES = 1  # type: ignore[misc]  # every line goes through the part files
    breaks = ["\r", "\r\n", "\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\t"]
    ids = [f"id{c}{i}" for i, c in enumerate(breaks)]
    for i, doc_id in enumerate(ids):
        url = f"https://x.example/{breaks[i]}/{i}"
        writer.add_json(
            _dumps(doc_id), _dumps(url), kept_line(_dumps(doc_id), _dumps(url), 0, i).split("\t", 2)[2].rstrip("\n")
        )
    writer.finish(tmp_path / "ds")
    index = DocumentIndex(tmp_path / "ds")
    assert index.documents == len(ids)
    for i, doc_id in enumerate(ids):
        entry = index.by_id(doc_id)
        assert entry is not None and entry["row"] == i and entry["id"] == doc_id
        assert index.ids_for_url(f"https://x.example/{breaks[i]}/{i}") == [doc_id]


def test_stored_boundaries_are_the_decimal_powers() -> None:
    from thresher.run.histogram_boundaries import compute_boundaries

    assert BOUNDARIES == compute_boundaries()
    assert len(BOUNDARIES) == 801 and BOUNDARIES[400] == 1.0


def test_a_small_task_bins_without_importing_numpy(tmp_path: Path) -> None:
    """NumPy is imported only once a task has binned enough values to be worth it (or when the
    build imported it already); a small task's counts come from the bisect path, the same counts."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from thresher.core.stats import Stats\n"
        "from thresher.run.histograms import ValueHistograms\n"
        "s = Stats(); h = ValueHistograms(s.counters)\n"
        "for i in range(100): h.add({'quality.a': i / 7, 'quality.b': i, 'lang.code': 'en'}, i % 2 == 0)\n"
        "h.flush()\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
        "print(sum(v for k, v in s.counters.items() if k.startswith('hist/')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "200"


def test_recorded_text_sizes_count_only_for_the_recorded_text(tmp_path: Path) -> None:
    """A replayed row's recorded sizes stand for its text only while the text is that string: an
    edited text is measured again (the recorded sizes here are deliberately wrong, to tell)."""
    from thresher.core.document import Document
    from thresher.core.stages import RECORDED_TEXT_SIZES

    def card(doc: Document) -> tuple[int, int]:
        stats = Stats()
        observer = TaskObserver(stats, tmp_path / "index.part", tmp_path / "samples.part")
        observer.survived(doc)
        observer.close()
        return stats.counters["card/text_bytes"], stats.counters["card/whitespace_tokens"]

    text = "naïve café, two words more"
    doc = Document(id="0000000000000001", text=text)
    doc.derived[RECORDED_TEXT_SIZES] = (text, 1000, 7)
    assert card(doc) == (1000, 7)
    doc.text = "".join(["naïve café, ", "two words more"])  # equal, but not the recorded string
    assert card(doc) == (utf8_length(text), len(text.split()))


def test_dumps_line_matches_json_dumps() -> None:
    """`dumps_line`'s prebuilt encoder writes what `json.dumps` with its settings writes."""
    import json

    for record in ({"id": "a", "text": "naïve \u2028 \"q\"", "n": 1.5, "x": [1, None, True]}, {}, {"k": {"z": 1e300}}):
        expected = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
        assert dumps_line(record) == expected.encode("utf-8")
    assert dumps_line({"v": math.nan, "s": "\ud800"}) == b'{"v":null,"s":"\xef\xbf\xbd"}\n'
