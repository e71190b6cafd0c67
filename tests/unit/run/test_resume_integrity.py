"""Resume integrity (issue 13): an unfinished build refuses to resume over a changed input, and a
phase refuses to run when a work file an earlier phase left for it is gone."""

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.core.errors import TaskError, WorkDirError
from thresher.run.build import build
from thresher.run.integrity import input_fingerprint
from thresher.run.phases import DEFAULT_TASKS


def _stop(*args):
    raise RuntimeError("stop")


def crawl(path, n=30):
    return write_jsonl(path, [{"url": f"https://s.example/{i}", "html": article_html(i % 20)} for i in range(n)])


def unfinished(tmp_path, stop_at):
    src = crawl(tmp_path / "crawl.jsonl")
    out = tmp_path / "out"
    with pytest.raises(TaskError):
        build(
            [str(src)],
            out,
            local_config(exec={"retries": 0}),
            rejects=tmp_path / "rej",
            tasks=DEFAULT_TASKS.replace(**{stop_at: _stop}),
        )
    return src, out


def test_an_input_rewritten_with_the_same_size_refuses_the_resume(tmp_path):
    src, out = unfinished(tmp_path, "cluster")
    data = src.read_bytes()
    src.write_bytes(data.replace(b"s.example/1", b"t.example/1"))  # same size, other records
    assert len(src.read_bytes()) == len(data)
    with pytest.raises(WorkDirError, match="crawl.jsonl changed since the unfinished build"):
        build([str(src)], out, local_config(exec={"retries": 0}), rejects=tmp_path / "rej")
    # --overwrite starts over
    result = build([str(src)], out, local_config(exec={"retries": 0}), rejects=tmp_path / "rej", overwrite=True)
    assert result.stats.reconciles() and result.stats.kept > 0


def test_a_lost_decisions_file_is_found_before_the_write_phase(tmp_path):
    src, out = unfinished(tmp_path, "write")
    decisions = sorted((out / ".work" / "decisions").iterdir())
    assert decisions  # the crawl has duplicates
    decisions[0].unlink()
    with pytest.raises(WorkDirError, match=r"work dir is damaged: .*decisions.* for the write phase"):
        build([str(src)], out, local_config(exec={"retries": 0}), rejects=tmp_path / "rej")


def test_lost_scan_rejects_are_found_before_finalize(tmp_path):
    src, out = unfinished(tmp_path, "assemble")
    (out / ".work" / "scan" / "p000000.rejects.jsonl").unlink()
    with pytest.raises(WorkDirError, match=r"rejects.jsonl .* for the (write|finalize) phase"):
        build([str(src)], out, local_config(exec={"retries": 0}), rejects=tmp_path / "rej")


def test_fingerprint_changes_with_content_not_with_a_reread(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(bytes(range(256)) * 4096)
    first = input_fingerprint(str(path))
    assert input_fingerprint(str(path)) == first
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert input_fingerprint(str(path))["sample"] != first["sample"]
