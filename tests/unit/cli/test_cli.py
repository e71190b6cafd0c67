"""The command line as a user meets it: exit codes, messages, progress, stdin."""

import json
import subprocess
import sys

import pytest
from tests.conftest import article_html, write_jsonl

from thresher.cli import main


@pytest.fixture
def crawl(tmp_path):
    records = [{"url": f"https://s.example/{i}", "html": article_html(i)} for i in range(30)]
    return write_jsonl(tmp_path / "crawl.jsonl", records, ["{broken"])


def test_build_then_verify(tmp_path, crawl, capsys):
    out = tmp_path / "out"
    assert main(["build", str(crawl), "-o", str(out), "--engine", "local", "--quality", "none"]) == 0
    err = capsys.readouterr().err
    assert "seen" in err and "malformed" in err and "crawl.jsonl:31: invalid_json" in err
    assert "wrote 30 documents in 1 shard(s)" in err
    assert main(["verify", str(out)]) == 0
    assert "ok: 1 shard(s), 30 records" in capsys.readouterr().out
    shard = out / "shard-00000.jsonl.gz"
    shard.write_bytes(shard.read_bytes()[:-1])
    assert main(["verify", str(out)]) == 1
    assert "FAIL shard-00000.jsonl.gz: size" in capsys.readouterr().err


def test_verify_of_a_folder_without_manifest_is_a_one_line_error(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("thresher: error: ") and "no manifest" in err and err.count("\n") == 1


def test_strict_turns_malformed_records_into_exit_1(tmp_path, crawl, capsys):
    assert main(["build", str(crawl), "-o", str(tmp_path / "o"), "--engine", "local", "--strict", "-q"]) == 1
    assert "1 malformed input record(s) and --strict is set" in capsys.readouterr().err
    assert not (tmp_path / "o" / "manifest.json").exists()


def test_config_errors_exit_1_usage_errors_exit_2(tmp_path, crawl, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[dedup]\nkepp = 'first'\n")
    assert main(["build", str(crawl), "-o", str(tmp_path / "o"), "--config", str(bad)]) == 1
    assert "config error: unknown setting 'dedup.kepp'" in capsys.readouterr().err
    assert main(["build", str(crawl), "-o", str(tmp_path / "o"), "--shard-size", "lots"]) == 1
    with pytest.raises(SystemExit) as exc:
        main(["build"])
    assert exc.value.code == 2
    assert main([]) == 2


def test_progress_lines_when_not_a_terminal(tmp_path, crawl, capsys):
    assert main(["build", str(crawl), "-o", str(tmp_path / "o"), "--engine", "local", "--progress-every", "10"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("scan ")]
    assert lines and "docs/s" in lines[0] and "tasks" in lines[0]
    assert any(line.startswith("write ") for line in err.splitlines())


def test_quiet_prints_nothing_on_success(tmp_path, crawl, capsys):
    assert main(["build", str(crawl), "-o", str(tmp_path / "o"), "--engine", "local", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_stdin_input(tmp_path, crawl):
    out = tmp_path / "o"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "thresher.cli",
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
        stdin=open(crawl, "rb"),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["records"] == 30 and manifest["inputs"] == [{"path": "-", "bytes": None}]


def test_demo_builds_and_verifies(tmp_path, capsys):
    assert main(["demo", "-o", str(tmp_path / "demo"), "--pages", "150", "--workers", "1", "-q"]) == 0
    err = capsys.readouterr().err
    assert "verify: ok" in err
    stats = json.loads((tmp_path / "demo" / "dataset" / "stats.json").read_text())
    assert stats["reconciles"] and stats["malformed"] == 2
    drops = stats["drops"]
    assert drops["dedup.exact"]["exact_duplicate"] > 0 and drops["dedup.near"]["near_duplicate"] > 0
    assert any(stage.startswith("quality.") for stage in drops)
