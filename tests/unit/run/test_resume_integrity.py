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


@pytest.mark.parametrize("version", [0, None])
def test_a_marker_of_another_schema_version_is_run_again_on_resume(tmp_path, version):
    """A completion marker written under another schema version of its result (an older thresher's,
    or one from before markers had a version) does not count: that task alone runs again."""
    import json

    from thresher.run.results import ScanResult

    src, out = unfinished(tmp_path, "cluster")
    markers = sorted((out / ".work" / "done").glob("scan-*.json"))
    stale, current = markers[0], markers[1:]
    record = json.loads(stale.read_text())
    assert record["v"] == ScanResult.SCHEMA
    if version is None:
        del record["v"]
    else:
        record["v"] = version
    stale.write_text(json.dumps(record))
    untouched = {m: m.read_bytes() for m in current}

    scanned = []

    def counting_scan(ctx, partition):
        scanned.append(partition.index)
        return DEFAULT_TASKS.scan(ctx, partition)

    resumed = build([str(src)], out, local_config(exec={"retries": 0, "keep_work": True}), rejects=tmp_path / "rej",
                    tasks=DEFAULT_TASKS.replace(scan=counting_scan))
    assert scanned == [int(stale.stem.split("-")[1])]
    assert json.loads(stale.read_text())["v"] == ScanResult.SCHEMA  # replaced by the new run's marker
    assert all(m.read_bytes() == data for m, data in untouched.items())
    reference = build([str(src)], tmp_path / "ref", local_config(exec={"retries": 0}))
    assert resumed.manifest["shards"] == reference.manifest["shards"]
