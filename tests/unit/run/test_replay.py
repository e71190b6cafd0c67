"""`thresher replay`: a `build --signals` dataset decided again under changed settings gives the
shards, manifest records and stats of a fresh build with those settings (byte for byte), from
the signals table alone; settings it cannot honour are refused, named."""

import json
import random

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.cli import main
from thresher.core.config import merge
from thresher.core.errors import ConfigError
from thresher.run.build import build
from thresher.run.replay import carried_stats, replay

pytest.importorskip("pyarrow")

VOCABULARY = ("river garden market winter harbor library station orchard bridge valley morning letter "
              "teacher village window kitchen engine museum forest island doctor painter harvest theater "
              "mountain journey council bakery lantern meadow").split()
STOP = "the of and to in that is was it for on with as at by from".split()


def words(seed: int, n: int) -> str:
    rng = random.Random(seed)
    return " ".join(f"{rng.choice(STOP)} {rng.choice(VOCABULARY)}{'.' if k % 9 == 8 else ''}" for k in range(n // 2))


def page(title: str, body: str) -> str:
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>{title}</h1><p>{body.capitalize()}.</p></article><footer>Privacy policy.</footer>"
            "</body></html>")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Pages of 30 to 330 words (the Gopher word floor at 20, 50 or 150 keeps different ones),
    exact duplicates, near duplicates at several similarities (a threshold of 0.7 or 0.9 keeps
    different ones), a re-fetched URL, an empty page and a malformed line."""
    tmp = tmp_path_factory.mktemp("replay")
    records = []
    for i in range(180):
        n = 30 + (i * 37) % 300
        html = page(f"Article {i}", words(i, n))
        if i % 7 == 6:
            html = page(f"Article {i - 3}", words(i - 3, 30 + ((i - 3) * 37) % 300))  # an exact duplicate
        if i % 11 == 10:  # a near duplicate of page i - 5, with 4 to 36 words added
            n5 = 30 + ((i - 5) * 37) % 300
            html = page(f"Article {i - 5}", words(i - 5, n5) + ". " + words(1000 + i, 8 * (1 + i % 5)))
        if i % 29 == 28:
            html = "<html><body></body></html>"
        records.append({"url": f"https://e.example/{i}", "html": html})
    records.append({"url": "https://e.example/5", "html": page("Again", words(900, 200))})
    return write_jsonl(tmp / "crawl.jsonl", records, ["{oops"])


BASE = {"quality": {"preset": "default"}, "output": {"shard_max_records": 30},
        "exec": {"workers": 2}, "input": {"partition_bytes": 48 * 1024}}


@pytest.fixture(scope="module")
def signals_build(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("first") / "out"
    result = build([str(corpus)], out, local_config(**merge(BASE, {"output": {"signals": True}})))
    assert len(result.manifest["signals"]["files"]) > 2
    return out


def outcome(out):
    manifest = json.loads((out / "manifest.json").read_text())
    stats = json.loads((out / "stats.json").read_text())
    shards = [(s["path"], s["records"], s["sha256"]) for s in manifest["shards"]]
    return {"shards": shards, "records": manifest["records"], "counters": stats["counters"],
            "histograms": stats.get("histograms"), "totals": {k: stats[k] for k in stats if type(stats[k]) is int}}


CHANGES = [
    {"quality": {"gopher": {"min_words": 150}}, "dedup": {"near": {"threshold": 0.7}}},
    {"quality": {"gopher": {"min_words": 20}}, "dedup": {"near": {"threshold": 0.9}}},
    {"quality": {"gopher": {"max_hash_ratio": None, "min_stop_words": 4}, "rule_sets": ["gopher", "repetition",
                 "c4_lines", "c4", "fineweb", "statistical"]}, "dedup": {"keep": "longest"}},
    {"output": {"format": "parquet", "shard_max_records": 17}, "dedup": {"exact": {"level": None}}},
]


@pytest.mark.parametrize("change", CHANGES, ids=["words150-t0.7", "words20-t0.9", "rules-keep", "output"])
def test_replay_writes_what_a_fresh_build_with_the_changed_settings_writes(corpus, signals_build, change,
                                                                          tmp_path):
    fresh = build([str(corpus)], tmp_path / "fresh", local_config(**merge(BASE, change)))
    replayed = replay(signals_build, tmp_path / "replayed", change)
    expected = outcome(tmp_path / "fresh")
    assert outcome(tmp_path / "replayed") == expected
    assert replayed.ok and fresh.ok
    # the manifest names the fresh build's settings, not how the replay read them
    assert replayed.manifest["config"] == fresh.manifest["config"]
    assert replayed.manifest["config_hash"] == fresh.manifest["config_hash"]
    assert "signals" not in replayed.manifest and not (tmp_path / "replayed" / "signals").exists()
    first = outcome(signals_build)
    assert first["shards"] != expected["shards"]  # the change changed the output


def test_replay_under_the_same_settings_rewrites_the_first_builds_shards(signals_build, tmp_path):
    replay(signals_build, tmp_path / "same", {})
    assert outcome(tmp_path / "same") == outcome(signals_build)


def test_the_counts_of_the_stages_a_replay_does_not_run_again_are_carried():
    """Language identification does not run in a replay: its counts (languages seen, and the
    scripts of undetermined texts that the card reports) come from the first build's stats."""
    from thresher.core.stats import Stats

    first = Stats()
    for key, n in (("lang/en", 7), ("lang/und", 2), ("lang.und/Latn", 2), ("malformed", 1), ("event/dedup.x", 3),
                   ("drop/quality.gopher/too_few_words", 4), ("drop/read/robots", 1)):
        first.count(key, n)
    carried = carried_stats(first).counters
    assert {k: carried[k] for k in ("lang/en", "lang/und", "lang.und/Latn", "malformed", "drop/read/robots")} == {
        "lang/en": 7, "lang/und": 2, "lang.und/Latn": 2, "malformed": 1, "drop/read/robots": 1}
    assert carried["event/dedup.x"] == 0 and carried["drop/quality.gopher/too_few_words"] == 0  # counted again


def test_the_decisions_changed_are_the_ones_the_settings_move(signals_build, tmp_path):
    stricter = replay(signals_build, tmp_path / "r", {"quality": {"gopher": {"min_words": 150}}})
    first = json.loads((signals_build / "stats.json").read_text())["counters"]
    assert stricter.stats.counters["drop/quality.gopher/too_few_words"] > first["drop/quality.gopher/too_few_words"]
    assert stricter.stats.counters["malformed"] == first["malformed"] == 1


def test_replay_bands_and_verifies_the_recorded_sketches_without_the_text(corpus, signals_build, tmp_path,
                                                                       monkeypatch):
    """Under the first build's sketch settings no row that passed its chain is shingled or hashed
    again: with the text scans broken, the replay at a new threshold still writes the fresh build's
    output (a broken scan would drop its document as `dedup.*: error`)."""
    from thresher.dedup.exact import ExactDedup
    from thresher.dedup.near import MinHashDedup

    change = CHANGES[0]  # stricter: every row it keeps passed the first build's chain
    build([str(corpus)], tmp_path / "fresh", local_config(**merge(BASE, change)))
    section = json.loads((signals_build / "manifest.json").read_text())["signals"]
    assert set(section["settings"]) == {"dedup.exact", "dedup.near"}
    assert {name for name, _ in section["signals"]} >= {"dedup.exact.key", "dedup.near.minhash", "dedup.near.sample"}

    def broken(self, doc):
        raise AssertionError("scanned from the text")

    monkeypatch.setattr(MinHashDedup, "scan", broken)
    monkeypatch.setattr(ExactDedup, "scan", broken)
    # in this process, where the scans are broken (a pool's workers would import them afresh)
    replayed = replay(signals_build, tmp_path / "replayed", merge(change, {"exec": {"engine": "local"}}))
    assert "event/stage_error" not in replayed.stats.counters
    assert outcome(tmp_path / "replayed") == outcome(tmp_path / "fresh")


@pytest.mark.parametrize("change", [
    {"dedup": {"near": {"shingle_size": 3, "threshold": 0.7}}},
    {"dedup": {"exact": {"level": "raw"}, "near": {"method": "simhash"}}},
])
def test_a_change_of_what_the_sketches_depend_on_scans_the_text_again(corpus, signals_build, tmp_path, change):
    build([str(corpus)], tmp_path / "fresh", local_config(**merge(BASE, change)))
    replay(signals_build, tmp_path / "replayed", change)
    assert outcome(tmp_path / "replayed") == outcome(tmp_path / "fresh")
    assert outcome(tmp_path / "fresh")["shards"] != outcome(signals_build)["shards"]


@pytest.mark.parametrize(("change", "named"), [
    ({"extract": {"min_text_chars": 5}}, "extract.min_text_chars (extraction)"),
    ({"lang": {"enabled": False}}, "lang.enabled (language identification)"),
    ({"quality": {"c4": {"min_words_per_line": 5}}}, "quality.c4.min_words_per_line (C4's line cleanup)"),
    ({"quality": {"rule_sets": ["gopher", "repetition", "c4"]}}, "quality.rule_sets"),
    ({"output": {"signals": True}}, "output.signals"),
])
def test_settings_the_table_cannot_replay_are_refused_by_name(signals_build, tmp_path, change, named):
    with pytest.raises(ConfigError) as info:
        replay(signals_build, tmp_path / "r", change)
    assert named in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "r").exists()


def test_the_replay_command_takes_build_flags(signals_build, tmp_path, capsys):
    code = main(["replay", str(signals_build), "-o", str(tmp_path / "r"), "-q", "--quality-gopher-min-words", "150",
                 "--threshold", "0.7"])
    assert code == 0
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["config"]["quality"]["gopher"]["min_words"] == 150
    assert manifest["config"]["dedup"]["near"]["threshold"] == 0.7
    code = main(["replay", str(signals_build), "-o", str(tmp_path / "b"), "--target-tokens", "5000", "--by",
                 "quality.word_count", "--by", "words"])
    assert code == 0
    err = capsys.readouterr().err
    assert "budget: kept " in err and " of 5000 target tokens; threshold: quality.word_count " in err
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["budget"]["by"] == ["quality.word_count", "words"]
    code = main(["replay", str(signals_build), "-o", str(tmp_path / "x"), "-q", "--extractor", "trafilatura"])
    assert code == 1
    assert "extract.extractor (extraction)" in capsys.readouterr().err


def test_a_dataset_without_signals_is_refused(corpus, tmp_path):
    build([str(corpus)], tmp_path / "plain", local_config(**BASE))
    with pytest.raises(Exception, match="no signals table"):
        replay(tmp_path / "plain", tmp_path / "r", {})


def kept_records(out):
    import gzip

    manifest = json.loads((out / "manifest.json").read_text())
    records = []
    for shard in manifest["shards"]:
        with gzip.open(out / shard["path"], "rt", encoding="utf-8") as f:
            records += [json.loads(line) for line in f]
    return manifest, records


@pytest.mark.parametrize("by", [["quality.word_count"], ["quality_stop_word_count", "words"]])
def test_a_token_budget_keeps_the_best_ranked_prefix_that_fits(corpus, signals_build, tmp_path, by):
    target = 12_000
    _, candidates = kept_records(signals_build)
    budget = {"select": {"target_tokens": target, "by": by}}
    result = replay(signals_build, tmp_path / "budget", budget)
    manifest, kept = kept_records(tmp_path / "budget")

    def value(record, key):
        annotations = record["annotations"]
        if key == "words":
            return len(record["text"].split())
        return annotations[key] if "." in key else annotations[key.replace("_", ".", 1)]

    # the expected selection, computed here: descending by each column in turn, then input order
    order = sorted(range(len(candidates)), key=lambda i: (*[-value(candidates[i], k) for k in by], i))
    tokens, expected = 0, []
    for i in order:
        n = len(candidates[i]["text"].split())
        if tokens + n > target:
            break
        tokens += n
        expected.append(candidates[i]["id"])
    assert sorted(r["id"] for r in kept) == sorted(expected)
    assert [r["id"] for r in kept] == [r["id"] for r in candidates if r["id"] in set(expected)]  # input order
    section = manifest["budget"]
    assert section["tokens"] == tokens == sum(len(r["text"].split()) for r in kept) <= target
    next_one = len(candidates[order[len(expected)]]["text"].split())
    assert target - tokens < next_one  # stopped at the first document that does not fit
    last = candidates[order[len(expected) - 1]]
    assert section["threshold"] == {k: value(last, k) for k in by}
    assert result.stats.counters["drop/select.budget/over_budget"] == len(candidates) - len(expected)
    fresh = build([str(corpus)], tmp_path / "fresh", local_config(**merge(BASE, budget)))
    assert outcome(tmp_path / "fresh") == outcome(tmp_path / "budget") and fresh.manifest["budget"] == section


def test_a_budget_needs_a_column_and_a_column_needs_a_budget(signals_build, tmp_path):
    with pytest.raises(ConfigError, match="needs --by"):
        replay(signals_build, tmp_path / "r", {"select": {"target_tokens": 100}})
    with pytest.raises(ConfigError, match="--by ranks"):
        replay(signals_build, tmp_path / "r", {"select": {"by": ["words"]}})


def decided_stages(monkeypatch):
    """The names of the rule sets that decide again (from the measurements) in this process."""
    from thresher.quality.rules import QualityRuleSet

    names: list[str] = []
    decide = QualityRuleSet.decide

    def counting(self, doc, measured):
        names.append(self.name)
        return decide(self, doc, measured)

    monkeypatch.setattr(QualityRuleSet, "decide", counting)
    return names


def test_only_the_rule_sets_whose_bounds_changed_decide_again(corpus, signals_build, tmp_path, monkeypatch):
    """A rule set under the bounds the table was recorded with keeps its recorded decision (its
    annotations and drop); the output is still the fresh build's."""
    change = {"quality": {"gopher": {"min_words": 150}}}
    build([str(corpus)], tmp_path / "fresh", local_config(**merge(BASE, change)))
    names = decided_stages(monkeypatch)
    replay(signals_build, tmp_path / "replayed", merge(change, {"exec": {"engine": "local"}}))
    assert outcome(tmp_path / "replayed") == outcome(tmp_path / "fresh")
    assert names and set(names) == {"quality.gopher"}
    names.clear()
    replay(signals_build, tmp_path / "same", {"exec": {"engine": "local"}})
    assert names == []  # nothing moved: every decision is the recorded one
    assert outcome(tmp_path / "same") == outcome(signals_build)


@pytest.mark.parametrize("change", [
    # the first rule set, which wrote the script key, removed: the next one writes it now
    {"quality": {"rule_sets": ["repetition", "c4_lines", "c4", "fineweb"]}},
    # the dense-script floor is captured by a closure: its value is part of what the rules decide with
    {"quality": {"gopher": {"dense_min_mean_word_length": 5.0, "min_mean_word_length": 4}}},
])
def test_a_recorded_decision_is_not_reused_where_it_would_differ(corpus, signals_build, tmp_path, change):
    build([str(corpus)], tmp_path / "fresh", local_config(**merge(BASE, change)))
    replay(signals_build, tmp_path / "replayed", change)
    assert outcome(tmp_path / "replayed") == outcome(tmp_path / "fresh")


def test_what_a_rule_set_decides_with_names_every_bound_and_floor():
    from thresher.core.config import from_dict
    from thresher.quality.config import QualityConfig
    from thresher.quality.stages import build_quality_stages

    def keys(**gopher):
        config = from_dict(QualityConfig, {"gopher": gopher})
        return {s.name: getattr(s, "decided_with", None) for s in build_quality_stages(config)}

    base = keys()
    assert base["quality.gopher"] is not None and base == keys()
    for changed in ({"min_words": 150}, {"dense_min_mean_word_length": 2.5}, {"alpha_ratio_denominator": "tokens"}):
        other = keys(**changed)
        assert other["quality.gopher"] != base["quality.gopher"], changed
        assert {k: v for k, v in other.items() if k != "quality.gopher"} == {
            k: v for k, v in base.items() if k != "quality.gopher"}
