"""The local work store: today's work dir behind the store interface, byte for byte (the markers
`thresher.run.task` writes, names kept, flock), and the stamp rule every store shares."""

import json

import pytest

from thresher.core.errors import WorkDirError
from thresher.core.serial import dump
from thresher.core.stats import Stats
from thresher.run.results import VerifyResult
from thresher.run.store import (
    Attempt,
    LocalWorkStore,
    TaskCommit,
    check_stamp,
    new_attempt,
    store_stamp,
)
from thresher.run.stores import open_work_store
from thresher.run.workdir import WorkDir
from thresher.write.atomic import write_work_json


def test_local_store_keeps_todays_files(tmp_path):
    store = open_work_store(f"file://{tmp_path}")
    assert isinstance(store, LocalWorkStore) and store.root == tmp_path
    data = b"0123456789" * 100
    store.put("scan/p000000.docs.jsonl", data)
    assert (tmp_path / "scan" / "p000000.docs.jsonl").read_bytes() == data
    assert store.read_range("scan/p000000.docs.jsonl", 995, 10) == data[995:]
    with pytest.raises(RuntimeError), store.writer("scan/p000001.docs.jsonl") as out:
        out.write(b"half")
        raise RuntimeError
    assert not store.exists("scan/p000001.docs.jsonl") and list((tmp_path / "scan").iterdir()) == [
        tmp_path / "scan" / "p000000.docs.jsonl"
    ]
    assert store.attempt_name("scan/p000000.docs.jsonl", new_attempt()) == "scan/p000000.docs.jsonl"
    assert store.list("scan") == ["scan/p000000.docs.jsonl"] and store.list("nothing") == []
    store.delete("scan")
    assert not (tmp_path / "scan").exists()


def test_local_commit_is_the_marker_run_task_writes(tmp_path):
    store = LocalWorkStore(tmp_path / "a")
    result = dump(VerifyResult(stats=Stats(), edges=3))
    commit = store.commit("scan-p000000", new_attempt(), {}, result)
    expected = tmp_path / "b.json"
    write_work_json(expected, result)
    marker = WorkDir(tmp_path / "a").marker("scan-p000000")
    assert marker.read_bytes() == expected.read_bytes()
    assert store.committed("scan-p000000") == TaskCommit("scan-p000000", "", {}, result)
    assert commit.resolve("scan/p000000.docs.jsonl") == "scan/p000000.docs.jsonl"
    assert store.committed("scan-p000001") is None


def test_local_lease_is_the_build_lock(tmp_path):
    store = LocalWorkStore(tmp_path / "w")
    with store.lease():
        with pytest.raises(WorkDirError, match="another build is running"), LocalWorkStore(tmp_path / "w").lease():
            pass
    with store.lease():
        pass


def test_stamp_of_this_thresher_passes_others_are_refused():
    check_stamp("s3://b/w", None)
    check_stamp("s3://b/w", json.dumps(store_stamp()).encode())
    for stamp in ({**store_stamp(), "thresher": "9.9"}, {**store_stamp(), "layout": 0}):
        with pytest.raises(WorkDirError, match="written by thresher"):
            check_stamp("s3://b/w", json.dumps(stamp).encode())
    with pytest.raises(WorkDirError, match="not a thresher work store"):
        check_stamp("s3://b/w", b"\xff")


def test_task_commit_round_trips():
    commit = TaskCommit("t", "a1", {"x": "x.attempt-a1"}, {"n": [1, 2]})
    assert TaskCommit.from_json(json.loads(json.dumps(commit.to_json()))) == commit
    assert commit.resolve("x") == "x.attempt-a1" and commit.resolve("y") == "y"
    with pytest.raises(ValueError):
        TaskCommit.from_json({"attempt": "a"})


def test_local_attempt_writes_and_names_the_file_itself(tmp_path):
    store = LocalWorkStore(tmp_path)
    attempt = Attempt(store, "write-000001")
    rel = "pieces/s00000-p000001.jsonl"
    with attempt.writer(rel) as out:
        out.write(b"line\n")
    # a result names the piece by the path it always had, so assemble reads it as before
    assert attempt.location(rel) == str(WorkDir(tmp_path).piece(0, 1, ".jsonl")) == store.locate(rel)
    assert attempt.outputs == {rel: rel} and (tmp_path / rel).read_bytes() == b"line\n"
    assert store.resolve("write-000001", rel) == rel
