"""Issue 2's bad input in one crawl: each record gets a located message and a counter, the run
finishes, and the counts reconcile."""

import gzip
import json

from tests.conftest import article_html, local_config

from thresher.run.build import build
from thresher.write.manifest import read_shards


def test_every_kind_of_bad_input_is_counted_and_the_build_finishes(tmp_path):
    good = [{"url": f"https://ok.example/{i}", "html": article_html(i)} for i in range(5)]
    lines = [json.dumps(r) for r in good]
    lines += [
        "this is not json",
        '["a", "list"]',
        '{"html": "<p>no url</p>"}',
        '{"url": "https://x.example/nocontent"}',
        '{"url": ["wrong"], "html": "<p>x</p>"}',
        "",
        json.dumps({"url": "https://x.example/binary", "html": "\x00\x01\x02\x03\x04\x05" * 2000}),
        json.dumps({"url": "https://x.example/huge", "html": "<p>" + "word " * (10 * 1024 * 1024) + "</p>"}),
        json.dumps({"url": "https://x.example/deep", "html": "<div>" * 100_000 + "deep text" + "</div>" * 100_000}),
    ]
    payload = ("\n".join(lines) + "\n").encode() + b'{"url": "https://x.example/latin1", "text": "caf\xe9 cr\xe8me"}\n'
    plain = tmp_path / "crawl.jsonl"
    plain.write_bytes(payload)
    truncated = tmp_path / "tail.jsonl.gz"
    blob = gzip.compress(
        (
            "".join(json.dumps({"url": f"https://t.example/{i}", "text": f"text {i} " * 30}) + "\n" for i in range(400))
        ).encode()
    )
    truncated.write_bytes(blob[: int(len(blob) * 0.6)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")

    result = build(
        [str(plain), str(truncated), str(empty)],
        tmp_path / "out",
        local_config(extract={"max_html_bytes": 20 * 1024 * 1024, "timeout_s": 5.0}),
        rejects=tmp_path / "rej",
    )
    stats = result.stats
    assert stats.reconciles()
    assert stats.by_prefix("malformed") == {
        "invalid_json": 1,
        "missing_content": 1,
        "missing_url": 1,
        "not_an_object": 1,
        "truncated_input": 1,
        "wrong_type": 1,
    }
    events = stats.by_prefix("event")
    assert events["empty_line"] == 1 and events["empty_file"] == 1 and events["invalid_utf8"] == 1
    drops = stats.by_prefix("drop")
    assert drops["extract/binary_content"] == 1
    assert drops["extract/too_large"] == 1  # the 50 MB page, bounded before parsing
    kept_urls = {r["url"] for r in read_shards(tmp_path / "out")}
    assert {f"https://ok.example/{i}" for i in range(5)} <= kept_urls
    assert "https://x.example/latin1" in kept_urls
    # the deeply nested page gives its text, or a named drop; never a crash or a stuck run
    with gzip.open(tmp_path / "rej" / "rejects.jsonl.gz", "rt") as f:
        rejected = {r["url"]: r["drop"] for r in map(json.loads, f)}
    if "https://x.example/deep" in kept_urls:
        (deep,) = [r for r in read_shards(tmp_path / "out") if r["url"] == "https://x.example/deep"]
        assert deep["text"] == "deep text"
    else:
        assert rejected["https://x.example/deep"]["reason"]
    assert rejected["https://x.example/binary"]["reason"] == "binary_content"
    assert rejected["https://x.example/huge"] == {
        "stage": "extract",
        "reason": "too_large",
        "value": len(("<p>" + "word " * (10 * 1024 * 1024) + "</p>").encode()),
        "limit": 20 * 1024 * 1024,
    }
    with gzip.open(tmp_path / "rej" / "malformed.jsonl.gz", "rt") as f:
        located = [json.loads(line)["location"] for line in f]
    assert f"{plain}:6" in located
