import json

from thresher.core import Document, Malformed
from thresher.quality.assess import assess, percentile, reservoir
from thresher.quality.config import QualityConfig

PROSE = ("The river runs through the old town, and the bridges that cross it have stood for centuries. "
         "Visitors walk along the banks in the evening to watch the light fade over the water. ")
ARTICLE = "\n".join([
    "The river runs through the old town, and the bridges that cross it have stood for centuries.",
    "Visitors walk along the banks in the evening to watch the light fade over the water.",
    "In spring the markets fill with flowers, and farmers bring cheese and bread from the hills.",
    "Most of the houses near the square were built by merchants who traded wool with the north.",
    "A small museum keeps their ledgers, letters and the maps they drew of the coast.",
    "Children learn to swim in the shallow bend below the mill, where the current is slow.",
    "Every autumn a festival of music and lanterns brings the whole valley into the streets.",
])


def docs():
    yield Document(id="good", text=ARTICLE)
    yield Document(id="short", text="Too short to keep.")
    yield Malformed("not_json", "input.jsonl:3")
    yield Document(id="code", text=ARTICLE + "\nif (x) { y(); } is what the code says.")


def test_assess_counts_every_failing_rule_and_the_attributed_one():
    report = assess(docs(), QualityConfig(preset="gopher"))
    assert (report.seen, report.assessed, report.malformed) == (4, 3, 1)
    assert (report.would_keep, report.would_drop) == (2, 1)  # the gopher preset has no curly-bracket rule
    assert report.drops == {"quality.gopher/too_few_words": 1}
    assert report.failures == {"quality.gopher/too_few_words": 1}


def test_assess_never_drops_and_keeps_examples():
    report = assess(docs(), QualityConfig(preset="c4"), examples=1)
    assert report.failures["quality.c4/curly_bracket"] == 1
    assert report.examples["quality.c4/curly_bracket"][0]["id"] == "code"
    assert report.examples["quality.c4/curly_bracket"][0]["value"] == 1


def test_metric_percentiles_with_bounds():
    texts = [" ".join(["word"] * n) + "." for n in (10, 20, 30, 40, 50)]
    report = assess((Document(id=str(i), text=t) for i, t in enumerate(texts)), QualityConfig(preset="gopher"))
    m = report.metrics["word_count"]
    assert (m["min"], m["max"], m["count"]) == (50, 100_000, 5)
    assert m["percentiles"]["p50"] == 30 and m["percentiles"]["p1"] == 10.4 and m["percentiles"]["p99"] == 49.6
    assert report.failures["quality.gopher/too_few_words"] == 4
    assert "!" in report.render() and "word_count" in report.render()


def test_seeded_sample_is_reproducible():
    items = [Document(id=str(i), text=PROSE) for i in range(100)]
    a = assess(items, QualityConfig(preset="gopher"), sample=10, seed=7)
    b = assess(items, QualityConfig(preset="gopher"), sample=10, seed=7)
    assert a.to_dict() == b.to_dict()
    assert (a.seen, a.assessed, a.sampled) == (100, 10, True)
    chosen, seen = reservoir(range(100), 10, seed=7)
    assert seen == 100 and chosen == sorted(chosen) and len(chosen) == 10
    assert reservoir(range(100), 10, seed=8)[0] != chosen


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 99) == 5


def test_report_is_json_ready_and_renders_examples():
    report = assess(docs(), QualityConfig(preset="all"))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["assessed"] == 3 and "quality.gopher/too_few_words" in data["rule_failures"]
    assert "examples per failing rule" in report.render(verbose=True)
    assert "examples per failing rule" not in report.render()


def test_assess_command_prints_json(tmp_path, capsys):
    from thresher.cli import main

    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps({"url": f"https://e.org/{i}", "text": ARTICLE + f"\nDocument {i}."})
                              for i in range(4)) + "\n")
    assert main(["assess", str(path), "--json", "--quality", "gopher"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["assessed"] == 4 and out["stages"] == ["quality.gopher", "quality.repetition"]
    assert main(["assess", str(path), "--sample", "2", "-v"]) == 0
    assert "assessed 2 of 4 documents (seeded sample)" in capsys.readouterr().out
