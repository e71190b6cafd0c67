"""`build --signals`: one row per document the chain judged, with its measured values, signatures,
decision and text; byte-identical across engines and a resume; listed in the manifest and checked
by verify; invisible to `datasets.load_dataset`; readable by pyarrow, DuckDB, Polars and pandas."""

import gzip
import json
import random
import sys

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.core.errors import ConfigError, TaskError
from thresher.lang.labels import label
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.write.dataset_checks import check_dataset

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


VOCABULARY = ("river garden market winter harbor library station orchard bridge valley morning letter "
              "teacher village window kitchen engine museum forest island doctor painter harvest theater "
              "mountain journey council bakery lantern meadow").split()
STOP = "the of and to in that is was it for on with as at by from".split()


def article_html(i: int, words: int = 160) -> str:
    """A page whose article passes the default rules (seeded words with stop words between them)."""
    rng = random.Random(i)
    body = " ".join(
        f"{rng.choice(STOP)} {rng.choice(VOCABULARY)}{'.' if k % 9 == 8 else ''}" for k in range(words // 2)
    )
    return (f"<html><head><title>Article {i}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>Article {i}</h1><p>{body.capitalize()}.</p></article><footer>Privacy policy.</footer>"
            "</body></html>")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("signals")
    records = []
    for i in range(160):
        src = i - 3 if i % 7 == 6 else i  # exact duplicates
        html = article_html(src)
        if i % 11 == 10:  # near duplicates
            html = article_html(i - 5).replace("</article>", "<p>An added closing line.</p></article>")
        if i % 13 == 12:  # too short for the Gopher word count
            html = "<html><body><p>Too short to keep.</p></body></html>"
        records.append({"url": f"https://e.example/{i}", "html": html})
    records.append({"url": "https://e.example/5", "html": article_html(900)})  # a re-fetch of a URL
    return write_jsonl(tmp / "crawl.jsonl", records, ["{oops"])


def signals_config(engine="local", **extra):
    return local_config(
        quality={"preset": "default"},
        output={"signals": True, "shard_max_records": 40},
        exec={"engine": engine, "workers": 2, **extra},
        input={"partition_bytes": 64 * 1024},
    )


def read_rows(out):
    manifest = json.loads((out / "manifest.json").read_text())
    rows = []
    for entry in manifest["signals"]["files"]:
        rows += pq.read_table(out / entry["path"]).to_pylist()
    return manifest, rows


def file_bytes(out):
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted((out / "signals").iterdir())}


@pytest.fixture(scope="module")
def local_build(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "out"
    result = build([str(corpus)], out, signals_config())
    return out, result


def test_every_document_the_chain_judged_has_one_row_with_this_builds_decision(local_build):
    out, result = local_build
    manifest, rows = read_rows(out)
    stats = result.stats
    assert len(rows) == stats.seen - stats.malformed == manifest["signals"]["rows"]
    assert len({r["id"] for r in rows}) == len(rows)
    assert [r["ordinal"] for r in rows] == sorted(r["ordinal"] for r in rows)
    kept = [r for r in rows if r["status"] == "kept"]
    assert len(kept) == manifest["records"]
    drops: dict[str, int] = {}
    for r in rows:
        if r["status"] == "dropped":
            drops[f"{r['drop_stage']}/{r['drop_reason']}"] = drops.get(f"{r['drop_stage']}/{r['drop_reason']}", 0) + 1
    assert drops == stats.by_prefix("drop")
    assert {"quality.gopher/too_few_words", "dedup.exact/exact_duplicate", "dedup.near/near_duplicate",
            "dedup.url/url_duplicate"} <= set(drops)


def test_a_rule_drop_carries_its_measured_value_bound_and_every_failing_rule(local_build):
    out, _ = local_build
    _, rows = read_rows(out)
    short = next(r for r in rows if r["drop_reason"] == "too_few_words")
    assert short["drop_value"] == short["quality_word_count"] < short["drop_limit"] == 50
    assert json.loads(short["drop"]) == {"stage": "quality.gopher", "reason": "too_few_words",
                                         "value": short["quality_word_count"], "limit": 50}
    assert [f["reason"] for f in json.loads(short["failures"])][0] == "too_few_words"
    assert short["text"] == "Too short to keep." and short["words"] == 4 and short["text_chars"] == 18


def test_kept_rows_name_their_shard_and_row_and_hold_the_shards_text(local_build):
    out, _ = local_build
    manifest, rows = read_rows(out)
    shards = []
    for entry in manifest["shards"]:
        with gzip.open(out / entry["path"], "rt", encoding="utf-8") as f:
            shards.append([json.loads(line) for line in f])
    for r in rows:
        if r["status"] == "kept":
            record = shards[r["shard"]][r["row"]]
            assert (record["id"], record["text"], record["url"]) == (r["id"], r["text"], r["url"])
            assert r["dedup_exact_key"] is not None and len(r["dedup_exact_key"]) == 16
            assert len(r["dedup_near_minhash"]) == 4 * 128
    keepers = [r for r in rows if r["dedup_duplicates"]]
    assert keepers and all(r["status"] == "kept" and r["dedup_cluster"] for r in keepers)
    assert sum(r["dedup_duplicates"] for r in keepers) == sum(
        1 for r in rows if r["drop_stage"] in ("dedup.exact", "dedup.near"))


def test_annotations_are_typed_columns_and_kept_exactly_as_json(local_build):
    out, _ = local_build
    schema = pq.read_schema(next((out / "signals").iterdir()))
    assert schema.field("quality_word_count").type == pa.int64()
    assert schema.field("lang_score").type == pa.float64()
    assert schema.field("lang_code").type == pa.string()
    assert schema.field("lang_label").type == pa.string()
    keys = json.loads(schema.metadata[b"thresher.annotation_keys"])
    assert keys["quality_word_count"] == "quality.word_count"
    _, rows = read_rows(out)
    r = next(r for r in rows if r["status"] == "kept")
    assert json.loads(r["annotations"])["quality.word_count"] == r["quality_word_count"]
    # the canonical label beside its ISO 639-1 alias (`eng_Latn`, `en`)
    labelled = [r for r in rows if r["lang_code"] and r["lang_code"] != "und"]
    assert labelled and all(r["lang_label"].partition("_")[0] == label(r["lang_code"], None).partition("_")[0]
                            and len(r["lang_label"]) > len(r["lang_code"]) for r in labelled)


def test_pool_and_resume_write_byte_identical_signals(corpus, local_build, tmp_path):
    out, result = local_build
    pooled = build([str(corpus)], tmp_path / "pool", signals_config("pool"))
    assert len(result.manifest["signals"]["files"]) > 1  # several partitions
    assert pooled.manifest == result.manifest
    assert file_bytes(tmp_path / "pool") == file_bytes(out)
    resumed = tmp_path / "resumed"
    with pytest.raises(TaskError):
        build([str(corpus)], resumed, signals_config(retries=0),
              tasks=DEFAULT_TASKS.replace(signals=failing_signals_task))
    assert (resumed / ".work" / "done").is_dir() and not (resumed / "manifest.json").exists()
    again = build([str(corpus)], resumed, signals_config())
    assert again.manifest == result.manifest and file_bytes(resumed) == file_bytes(out)


def failing_signals_task(ctx, p, *args):
    raise RuntimeError("interrupted in the signals phase")


def test_verify_reports_an_altered_or_unlisted_signals_file(corpus, tmp_path):
    out = tmp_path / "out"
    build([str(corpus)], out, signals_config())
    assert check_dataset(out)[1] == []
    first = sorted((out / "signals").iterdir())[0]
    first.write_bytes(first.read_bytes()[:-10])
    (out / "signals" / "part-999999.parquet").write_bytes(b"stray")
    problems = {p.shard: p.problem for p in check_dataset(out)[1]}
    assert problems[f"signals/{first.name}"].startswith("size")
    assert problems["signals/part-999999.parquet"] == "a signals file the manifest does not list"


def test_a_build_without_signals_removes_the_previous_ones(corpus, tmp_path):
    out = tmp_path / "out"
    build([str(corpus)], out, signals_config())
    plain = local_config(quality={"preset": "default"}, output={"shard_max_records": 40},
                         input={"partition_bytes": 64 * 1024})
    result = build([str(corpus)], out, plain, overwrite=True)
    assert "signals" not in result.manifest
    assert not list((out / "signals").glob("*.parquet"))
    assert check_dataset(out)[1] == []


def test_signals_off_by_default_writes_nothing_more(corpus, tmp_path):
    result = build([str(corpus)], tmp_path / "out", local_config())
    assert "signals" not in result.manifest and not (tmp_path / "out" / "signals").exists()


def test_signals_without_pyarrow_fail_at_start_naming_the_extra(corpus, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError) as info:
        build([str(corpus)], tmp_path / "out", signals_config())
    assert str(info.value) == '--signals needs the parquet extra: pip install "thresher[parquet]"'
    assert not (tmp_path / "out").exists()


def test_duckdb_polars_and_pandas_read_the_table(local_build):
    out, _ = local_build
    manifest, rows = read_rows(out)
    pattern = str(out / "signals" / "*.parquet")
    duckdb = pytest.importorskip("duckdb")
    counts = dict(duckdb.sql(f"SELECT status, count(*) FROM read_parquet('{pattern}') GROUP BY status").fetchall())
    assert counts["kept"] == manifest["records"] and sum(counts.values()) == len(rows)
    polars = pytest.importorskip("polars")
    frame = polars.read_parquet(pattern)
    assert frame.height == len(rows) and frame["quality_word_count"].dtype == polars.Int64
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_parquet(out / "signals")
    assert len(frame) == len(rows) and set(frame["status"]) == {"kept", "dropped"}


def test_load_dataset_reads_only_the_shards(local_build):
    datasets = pytest.importorskip("datasets")
    out, result = local_build
    loaded = datasets.load_dataset(str(out), split="train")
    assert loaded.num_rows == result.manifest["records"]
    assert "status" not in loaded.column_names


def test_rows_hold_every_rules_exact_value_and_each_stages_annotation_mark(local_build):
    out, _ = local_build
    _, rows = read_rows(out)
    from thresher.quality.gopher import GopherQualityConfig, gopher_quality_rules

    every_gopher_rule = {"quality.script"} | {rule.key for rule in gopher_quality_rules(GopherQualityConfig())}
    short = next(r for r in rows if r["drop_reason"] == "too_few_words")
    measured = json.loads(short["measured"])
    assert set(measured) == {"quality.gopher"} and set(measured["quality.gopher"]) == every_gopher_rule
    kept = [r for r in rows if r["status"] == "kept"]
    for row in kept:
        measured = json.loads(row["measured"])
        assert list(measured) == ["quality.gopher", "quality.repetition", "quality.c4", "quality.fineweb"]
        annotations = json.loads(row["annotations"])
        marks = json.loads(row["marks"])
        assert [m[0] for m in marks][:4] == ["consent", "extract", "normalize", "lang"]
        assert marks[-1][2] == len(annotations)
        for values in measured.values():
            for key, value in values.items():
                if key in annotations and type(value) is float:
                    assert annotations[key] == round(value, 4)  # the table's value is the exact one
    gopher = [v for row in kept for v in json.loads(row["measured"])["quality.gopher"].values()]
    assert any(type(v) is float and v != round(v, 4) for v in gopher)


def test_shards_are_byte_identical_with_and_without_signals(corpus, local_build, tmp_path):
    out, with_signals = local_build
    config = signals_config()
    plain = build([str(corpus)], tmp_path / "plain",
                  local_config(quality={"preset": "default"}, output={"shard_max_records": 40},
                               exec={"engine": "local", "workers": 2}, input={"partition_bytes": 64 * 1024}))
    assert config.output.signals and [s["sha256"] for s in plain.manifest["shards"]] == [
        s["sha256"] for s in with_signals.manifest["shards"]]
    assert plain.stats.by_prefix("drop") == with_signals.stats.by_prefix("drop")


def test_the_recorded_annotation_types_are_each_values_own(tmp_path):
    """The recorder remembers the annotation shapes it has classified; every value still counts
    with its own type, an integer beyond int64 included, whatever order the rows come in."""
    from thresher.core.document import Document
    from thresher.run.signal_rows import SignalRecorder, value_type
    from thresher.run.workdir import WorkDir

    def recorded(rows, where):
        recorder = SignalRecorder(WorkDir(where), 0, [])
        for i, annotations in enumerate(rows):
            recorder.record(Document(id=f"{i:016x}", text="t", annotations=annotations, ordinal=i), None, [], None)
        recorder.close()
        return recorder.types

    # one shape, first beyond int64 then within it (and the reverse): each row adds its own kind
    assert recorded([{"n": 1 << 63}, {"n": 1}], tmp_path / "big-first") == {"n": {"json", "int"}}
    assert recorded([{"n": 1}, {"n": 1}, {"n": -(1 << 63) - 1}], tmp_path / "big-last") == {"n": {"json", "int"}}
    assert recorded([{"n": 1}, {"n": 2}], tmp_path / "small") == {"n": {"int"}}

    rng = random.Random(7)
    pool = [0, 3, -5, 1 << 63, -(1 << 63), -(1 << 63) - 1, 2.5, "x", True, None, [1], {"a": 1}]
    rows = []
    for i in range(400):
        keys = ("a", "b", "c") if i % 3 else ("a", "c", "b", "d")
        rows.append({k: rng.choice(pool[:2] if i < 50 else pool) for k in keys})
    expected: dict[str, set[str]] = {}
    for annotations in rows:
        for key, value in annotations.items():
            if value_type(value) is not None:
                expected.setdefault(key, set()).add(value_type(value))
    assert recorded(rows, tmp_path / "mixed") == expected
    assert "json" in expected["a"] and "int" in expected["a"]  # the pool reached both kinds
