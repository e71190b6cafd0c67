"""report/compare.py: URL overlap sketches, near-duplicate overlap and the side-by-side rendering."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from tests.conftest import write_jsonl

from thresher.cli import main
from thresher.report.check import CheckResult, Measure
from thresher.report.compare import Comparison, Side, _url_overlap, _UrlSketch, compare_datasets

WORDS = ("a small museum by the canal opened a new room of maps and letters from the old shipping company "
         "whose clerks wrote home about storms cargo prices and the long wait in foreign ports").split()


def _text(i: int) -> str:
    rng = random.Random(i)
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 20))).capitalize() + "."
                     for _ in range(12))


def _build(tmp: Path, name: str, records: list[dict]) -> str:
    crawl = write_jsonl(tmp / f"{name}.jsonl", records)
    out = tmp / name
    assert main(["build", str(crawl), "-o", str(out), "--engine", "local", "-q"]) == 0
    return str(out)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    tmp = tmp_path_factory.mktemp("compare")
    a = _build(tmp, "a", [{"url": f"https://a.example/{i}", "text": _text(i)} for i in range(10)])
    # B shares A's documents 0-4 (same URL and text) and has five of its own
    shared = [{"url": f"https://a.example/{i}", "text": _text(i)} for i in range(5)]
    b = _build(tmp, "b", shared + [{"url": f"https://b.example/{i}", "text": _text(100 + i)} for i in range(5)])
    return a, b


def test_url_sketch_counts_each_url_once_and_is_exact_while_small():
    a, b = _UrlSketch(100), _UrlSketch(100)
    for u in ["u1", "u2", "u2", "u3"]:
        a.add(u)
    for u in ["u2", "u3", "u4"]:
        b.add(u)
    assert not a.saturated and _url_overlap(a, b) == (3, 3, 2.0, True)


def test_url_sketch_estimates_sizes_and_overlap_once_saturated():
    k = 512
    a, b = _UrlSketch(k), _UrlSketch(k)
    for i in range(20_000):
        a.add(f"https://x/{i}")
    for i in range(10_000, 40_000):
        b.add(f"https://x/{i}")
    assert a.saturated and b.saturated and len(a.smallest()) == k
    na, nb, both, exact = _url_overlap(a, b)
    assert not exact
    tolerance = 4 / math.sqrt(k)  # about four standard errors of KMV
    assert abs(na / 20_000 - 1) < tolerance and abs(nb / 30_000 - 1) < tolerance
    assert abs(both / 10_000 - 1) < 2 * tolerance


def test_side_near_share_is_nan_without_a_sample():
    assert math.isnan(Side("x").near_share)
    assert Side("x", near_matched=1, near_sampled=4).near_share == 0.25


def test_comparison_dict_and_render_without_samples_or_checks():
    c = Comparison(Side("A", 0), Side("B", 0), 0, 0, 0.0, True)
    d = c.to_dict()
    assert d["urls"] == {"a": 0, "b": 0, "both": 0.0, "exact": True}
    assert d["a"]["near_share"] is None and d["a"]["check"] is None
    text = c.render()
    assert "URLs: A 0, B 0, in both 0\n" in text + "\n"
    assert "nan% of A's sample (0)" in text
    assert "kept only in" not in text and "measure" not in text


def test_comparison_render_shows_estimates_examples_and_measures_side_by_side():
    check_a = CheckResult("A", 2, 2, [Measure("mean_words", 10.0, 9.0, 11.0, 2), Measure("r", float("nan"), 0, 0, 0)])
    check_b = CheckResult("B", 2, 2, [Measure("mean_words", 20.0, 19.0, 21.0, 2), Measure("r", 0.5, 0.25, 0.75, 2)])
    a = Side("A", 1_200, 1, 2, [{"id": "d1", "url": "https://a/1", "text": "only here " * 20}], check_a)
    b = Side("B", 3, 2, 2, [], check_b)
    lines = Comparison(a, b, 1_000, 2_000, 150.4, False).render().splitlines()
    assert lines[0] == "A: A (1,200 documents)"
    assert lines[2] == "URLs: A 1,000, B 2,000, in both 150 (estimated)"
    assert "50.0% of A's sample (2) is in B; 100.0% of B's sample (2) is in A" in lines[3]
    assert lines[4] == "kept only in A (examples):"
    assert lines[5].startswith("  d1 https://a/1  'only here only here")
    assert lines[-2].split() == ["mean_words", "10", "[9,", "11]", "20", "[19,", "21]"]
    assert lines[-1].split() == ["r", "n/a", "0.5", "[0.25,", "0.75]"]


def test_compare_a_dataset_with_itself_overlaps_fully(datasets):
    a, _ = datasets
    c = compare_datasets(a, a)
    assert (c.urls_a, c.urls_b, c.urls_both, c.exact_urls) == (10, 10, 10.0, True)
    assert c.a.near_share == 1.0 and c.b.near_share == 1.0
    assert c.a.only_examples == [] and c.b.only_examples == []


def test_compare_two_datasets_finds_the_shared_half(datasets):
    a, b = datasets
    c = compare_datasets(a, b)
    assert (c.a.documents, c.b.documents) == (10, 10)
    assert (c.urls_a, c.urls_b, c.urls_both, c.exact_urls) == (10, 10, 5.0, True)
    assert (c.a.near_matched, c.a.near_sampled) == (5, 10)
    assert (c.b.near_matched, c.b.near_sampled) == (5, 10)
    # what only one side keeps: at most five examples, none of them shared
    assert 0 < len(c.a.only_examples) <= 5
    assert all(e["url"].startswith("https://a.example/") and int(e["url"].rsplit("/", 1)[1]) >= 5
               for e in c.a.only_examples)
    assert all(e["url"].startswith("https://b.example/") for e in c.b.only_examples)
    assert all(len(e["text"]) <= 300 for e in c.a.only_examples + c.b.only_examples)
    assert c.a.check is not None and c.a.check.sampled == 10


def test_compare_sample_size_bounds_the_near_pass(datasets):
    a, b = datasets
    c = compare_datasets(a, b, sample=3)
    assert c.a.near_sampled == 3 and c.b.near_sampled == 3
    assert c.urls_both == 5.0  # URL overlap counts every record, not the sample
