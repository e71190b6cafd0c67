"""Issue 14 item 10, the smaller ones a new user meets: one test per item."""

import json

import pytest
from tests.conftest import article_html, write_jsonl

from thresher.cli import build_parser, config_from_args, main
from thresher.core.errors import ConfigError
from thresher.read.config import InputConfig
from thresher.read.sources import iter_items


def test_unterminated_string_message_says_at_column_once(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"url": "https://a.example/", "html": "<p>never closed}')
    (item,) = list(iter_items([str(path)], InputConfig()))
    assert item.detail == "Unterminated string starting at column 39"
    assert "at at" not in item.describe()


@pytest.mark.parametrize("where", [["--threshold", "0.7"], ["--dedup-near-threshold", "0.9"]])
def test_threshold_with_simhash_is_an_error_not_ignored(where):
    args = build_parser().parse_args(["build", "in.jsonl", "-o", "out", "--method", "simhash", *where])
    with pytest.raises(ConfigError, match="simhash-max-hamming"):
        config_from_args(args)


def test_threshold_from_a_config_file_with_simhash_is_an_error(tmp_path):
    toml = tmp_path / "t.toml"
    toml.write_text('[dedup.near]\nmethod = "simhash"\nthreshold = 0.7\n')
    args = build_parser().parse_args(["build", "in.jsonl", "-o", "out", "--config", str(toml)])
    with pytest.raises(ConfigError, match="Hamming"):
        config_from_args(args)
    ok = build_parser().parse_args(["build", "in.jsonl", "-o", "out", "--method", "simhash"])
    assert config_from_args(ok).dedup.near.method == "simhash"


def test_extract_on_a_binary_file_is_a_one_line_error(tmp_path, capsys):
    blob = tmp_path / "image.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    assert main(["extract", str(blob)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "not an HTML page" in captured.err


def test_gitignore_ignores_the_demo_folder():
    from pathlib import Path

    lines = (Path(__file__).resolve().parents[3] / ".gitignore").read_text().split()
    assert "/thresher-demo/" in lines or "thresher-demo/" in lines


def test_dataset_card_shows_size_inputs_and_language_mix(tmp_path):
    records = [{"url": f"https://a.example/{i}", "html": article_html(i)} for i in range(4)]
    crawl = write_jsonl(tmp_path / "crawl.jsonl", records)
    out = tmp_path / "out"
    assert main(["build", str(crawl), "-o", str(out), "--engine", "local", "-q", "--quality", "none"]) == 0
    card = (out / "README.md").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert f"| `{crawl}` |" in card
    assert "whitespace tokens" in card and f"{manifest['bytes']:,}" in card
    assert "## Languages" in card or "no language annotations" in card


def test_non_terminal_progress_prints_each_phase_as_it_ended_not_as_it_started(tmp_path, capsys):
    records = [{"url": f"https://a.example/{i}", "html": article_html(i)} for i in range(6)]
    crawl = write_jsonl(tmp_path / "crawl.jsonl", records)
    assert (
        main(
            [
                "build",
                str(crawl),
                "-o",
                str(tmp_path / "o"),
                "--engine",
                "local",
                "--progress-every",
                "2",
                "--quality",
                "none",
            ]
        )
        == 0
    )
    lines = [line for line in capsys.readouterr().err.splitlines() if line[:8].strip() in
             ("scan", "group", "verify", "cluster", "write", "assemble", "finalize")]
    scan = [x for x in lines if x.startswith("scan ")]
    assert scan and "tasks 1/1" in scan[-1] and "100.0%" in scan[-1]
    for phase in ("group", "cluster", "write", "assemble", "finalize"):
        (line,) = [x for x in lines if x.startswith(phase + " ")]
        done, total = line.split("tasks ")[1].split()[0].split("/")
        assert done == total


def test_read_stage_rejects_have_an_id_and_a_source_like_every_other_reject():
    from thresher.core.document import Drop
    from thresher.read.base import Skip

    record = Skip(Drop("read", "revisit"), "crawl/a.warc.gz@1234+56", "https://a.example/").to_record()
    assert record["source"] == {"file": "crawl/a.warc.gz", "offset": 1234, "inner_offset": 56}
    assert isinstance(record["id"], str) and len(record["id"]) == 16 and "location" not in record
    other = Skip(Drop("read", "revisit"), "crawl/a.warc.gz@2000", "https://a.example/").to_record()
    assert other["id"] != record["id"] and other["source"] == {"file": "crawl/a.warc.gz", "offset": 2000}
    assert Skip(Drop("read", "x"), "odd@name", None, "0123456789abcdef").to_record()["source"] == {"file": "odd@name"}


def test_stdin_documents_name_stdin_not_the_deleted_spool_file(tmp_path):
    import gzip
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    lines = "".join(
        json.dumps({"url": f"https://a.example/{i}", "text": f"text number {i} " * 20}) + "\n" for i in range(3)
    )
    out = tmp_path / "o"
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "thresher",
            "build",
            "-",
            "-o",
            str(out),
            "--engine",
            "local",
            "-q",
            "--quality",
            "none",
        ],
        input=lines + "{broken\n",
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    with gzip.open(out / "shard-00000.jsonl.gz", "rt") as f:
        sources = [json.loads(line)["source"] for line in f]
    assert [s["file"] for s in sources] == ["-", "-", "-"]
    examples = json.loads((out / "stats.json").read_text())["malformed_examples"]
    assert examples and all(e["location"].startswith("-:") for e in examples)
