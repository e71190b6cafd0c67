"""The work store's primitives on a real S3 endpoint on loopback (moto's server, in this process),
and the one-line errors of a work dir at a URL that cannot be used.

The server is reached through the standard `AWS_ENDPOINT_URL` with dummy credentials, as a build on
a real bucket would be: what is tested is the HTTP conversation s3fs has with an S3 implementation
(exclusive creation by `If-None-Match`, ranged GETs, multipart uploads), not a mock of fsspec."""

import contextlib
import json
import logging
import socket
import threading

import pytest
from tests.engines.s3_env import s3_client

from thresher.config import RunConfig
from thresher.core.errors import ConfigError, WorkDirError
from thresher.core.serial import dump as dump_result
from thresher.core.stats import Stats
from thresher.run.preflight import check_work_dir
from thresher.run.results import VerifyResult
from thresher.run.store import STAMP, Attempt, store_stamp
from thresher.run.stores import open_work_store
from thresher.run.task import TaskContext, run_task

pytest.importorskip("s3fs")
server_module = pytest.importorskip("moto.server")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    port = _free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint, monkeypatch):
    client = s3_client(endpoint, monkeypatch)
    name = f"work-{_free_port()}"  # a bucket of its own per test: no state leaks between them
    client.create_bucket(Bucket=name)
    return client, name


def test_whole_objects_and_ranged_reads(s3):
    client, bucket = s3
    store = open_work_store(f"s3://{bucket}/w")
    data = bytes(range(256)) * 64
    store.put("scan/a.bin", data)
    assert store.read("scan/a.bin") == data
    assert store.read_range("scan/a.bin", 1000, 300) == data[1000:1300]
    assert store.read_range("scan/a.bin", len(data) - 10, 100) == data[-10:]  # short at the end
    with store.writer("scan/b.bin") as out:
        out.write(b"x" * 10)
        out.write(b"y" * 5)
    assert store.read("scan/b.bin") == b"x" * 10 + b"y" * 5
    with pytest.raises(RuntimeError), store.writer("scan/c.bin") as out:
        out.write(b"half")
        raise RuntimeError("killed mid-write")
    assert not store.exists("scan/c.bin")  # an aborted upload leaves nothing
    assert store.list("scan") == ["scan/a.bin", "scan/b.bin"]
    keys = {o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]}
    assert keys == {"w/scan/a.bin", "w/scan/b.bin"}  # no temp names, nothing renamed
    store.delete("scan")
    assert store.list("scan") == [] and not store.exists("scan/a.bin")
    with pytest.raises(FileNotFoundError):
        store.read("scan/a.bin")


def test_commit_manifest_first_attempt_wins(s3):
    _, bucket = s3
    store = open_work_store(f"s3://{bucket}/w")
    assert store.committed("scan-p000000") is None
    first, second = "a1", "a2"
    for attempt, body in ((first, b"first"), (second, b"second")):
        store.put(store.attempt_name("scan/p0.docs", attempt), body)
    won = store.commit("scan-p000000", first, {"scan/p0.docs": store.attempt_name("scan/p0.docs", first)}, {"n": 1})
    assert won.attempt == first
    # a duplicated attempt finishing later gets the standing commit, not its own
    late = store.commit("scan-p000000", second, {"scan/p0.docs": store.attempt_name("scan/p0.docs", second)}, {"n": 2})
    assert late == won and late.result == {"n": 1}
    assert store.read(late.resolve("scan/p0.docs")) == b"first"
    assert store.committed("scan-p000000") == won
    assert store.attempt_name("scan/p0.docs", first) != store.attempt_name("scan/p0.docs", second)


def test_attempts_committing_at_once_agree_on_one(s3):
    _, bucket = s3
    store = open_work_store(f"s3://{bucket}/w")
    results = {}
    barrier = threading.Barrier(6)

    def attempt(i):
        own = open_work_store(f"s3://{bucket}/w")  # as on another node: its own connection
        name = own.attempt_name("edges/e", f"a{i}")
        own.put(name, f"edges of attempt {i}".encode())
        barrier.wait()
        results[i] = own.commit("group-k0000", f"a{i}", {"edges/e": name}, {"attempt": i})

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    commits = set(json.dumps(c.to_json(), sort_keys=True) for c in results.values())
    assert len(commits) == 1  # every attempt reads back the same single commit
    standing = store.committed("group-k0000")
    assert store.read(standing.resolve("edges/e")) == f"edges of attempt {standing.result['attempt']}".encode()


def test_lease_refuses_a_second_build_until_it_expires(s3):
    _, bucket = s3
    url = f"s3://{bucket}/w"
    first = open_work_store(url).lease(ttl=60)
    first.acquire(now=1000.0)
    second = open_work_store(url).lease(ttl=60)
    with pytest.raises(WorkDirError) as refused:
        second.acquire(now=1030.0)
    line = str(refused.value)
    assert "\n" not in line and "another build holds it" in line and first.owner in line and "expires in 30 s" in line
    first.renew(now=1050.0)  # pushes the expiry to 1110
    with pytest.raises(WorkDirError):
        second.acquire(now=1100.0)
    second.acquire(now=1111.0)  # expired: taken over
    with pytest.raises(WorkDirError, match="another build took it over"):
        first.renew(now=1112.0)  # the first build learns it lost the store
    with pytest.raises(WorkDirError):
        first.check()
    second.release()
    third = open_work_store(url).lease(ttl=60)
    third.acquire(now=1113.0)  # a released lease need not expire first
    assert third.generation == second.generation + 1
    assert open_work_store(url).list("lease") == [f"lease/g{third.generation:09d}.json"]  # history deleted


def test_lease_as_a_context_and_the_stamp(s3):
    _, bucket = s3
    url = f"s3://{bucket}/w"
    store = open_work_store(url)
    with store.lease(ttl=60) as held:
        assert json.loads(store.read(STAMP)) == store_stamp()
        with pytest.raises(WorkDirError, match="another build holds it"), open_work_store(url).lease(ttl=60):
            pass
        held.check()
    with open_work_store(url).lease(ttl=60):  # released on exit
        pass


def test_store_of_another_version_is_refused_in_one_line(s3):
    client, bucket = s3
    stamp = {**store_stamp(), "thresher": "0.0.1"}
    client.put_object(Bucket=bucket, Key=f"old/{STAMP}", Body=json.dumps(stamp).encode())
    for check in (lambda: check_work_dir(f"s3://{bucket}/old"), lambda: open_work_store(f"s3://{bucket}/old").lease()
                  .acquire()):
        with pytest.raises(WorkDirError) as refused:
            check()
        assert "\n" not in str(refused.value)
        assert "written by thresher 0.0.1" in str(refused.value) and "use another --work-dir" in str(refused.value)
    client.put_object(Bucket=bucket, Key=f"odd/{STAMP}", Body=b"not json")
    with pytest.raises(WorkDirError, match="not a thresher work store"):
        check_work_dir(f"s3://{bucket}/odd")
    check_work_dir(f"s3://{bucket}/new")  # a new prefix in an existing bucket is fine
    assert "Contents" not in client.list_objects_v2(Bucket=bucket, Prefix="new/")  # and the probe wrote nothing


def test_missing_bucket_is_one_line(s3):
    with pytest.raises(ConfigError) as refused:
        check_work_dir("s3://no-such-bucket-here/w")
    assert "\n" not in str(refused.value) and "bucket no-such-bucket-here does not exist" in str(refused.value)


def test_unreachable_endpoint_is_one_line(s3, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{_free_port()}")  # nothing listens there
    with pytest.raises(ConfigError) as refused:
        check_work_dir(f"s3://{s3[1]}/w")
    line = str(refused.value)
    assert "\n" not in line and "cannot reach" in line and "127.0.0.1" in line


def test_denied_credentials_are_one_line(s3, monkeypatch):
    from moto import settings

    # the server checks signatures from now on; the dummy key is not one it knows
    monkeypatch.setattr(settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)
    with pytest.raises(ConfigError) as refused:
        check_work_dir(f"s3://{s3[1]}/w")
    line = str(refused.value)
    assert "\n" not in line and "access denied, check the credentials" in line


def test_run_task_commits_through_the_object_store(s3):
    client, bucket = s3
    ctx = TaskContext(config=RunConfig(), workdir=f"s3://{bucket}/w", write_rejects=False)
    calls = []

    def task(ctx, edges):
        calls.append(edges)
        logging.getLogger("thresher.test").warning("attempt %d ran", len(calls))
        return VerifyResult(stats=Stats(), edges=edges)

    first = run_task(task, VerifyResult, ctx, "verify-s0-v0000", 3)
    assert first.edges == 3 and calls == [3]
    again = run_task(task, VerifyResult, ctx, "verify-s0-v0000", 99)
    assert again == first and calls == [3]  # committed: not run again

    def duplicated(ctx, edges):
        # another attempt of the same task commits while this one runs (a straggler beside its retry)
        ctx.store.commit("verify-s0-v0001", "other", {}, dump_result(VerifyResult(stats=Stats(), edges=7)))
        return VerifyResult(stats=Stats(), edges=edges)

    assert run_task(duplicated, VerifyResult, ctx, "verify-s0-v0001", 1).edges == 7  # the standing commit

    def failing(ctx):
        raise ValueError("bad record")

    with pytest.raises(ValueError):
        run_task(failing, VerifyResult, ctx, "verify-s0-v0002")
    assert ctx.store.committed("verify-s0-v0002") is None  # a failed attempt commits nothing
    logs = ctx.store.list("logs")
    assert [n for n in logs if "verify-s0-v0000" in n] and len([n for n in logs if "v0000" in n]) == 1
    failed_log = [n for n in logs if "verify-s0-v0002" in n]
    assert len(failed_log) == 1 and b"ValueError: bad record" in ctx.store.read(failed_log[0])
    assert b"attempt 1 ran" in ctx.store.read(next(n for n in logs if "verify-s0-v0000" in n))


def test_task_killed_after_writing_before_committing_counts_for_nothing(s3):
    _, bucket = s3
    ctx = TaskContext(config=RunConfig(), workdir=f"s3://{bucket}/kill", write_rejects=False)
    runs = []

    located = []

    def scan(ctx, die):
        runs.append(die)
        located.append(ctx.output_location("scan/p000000.docs.jsonl"))  # what a result would name
        with ctx.output("scan/p000000.docs.jsonl") as out:
            out.write(f"docs of run {len(runs)}\n".encode())
        with contextlib.suppress(OSError), ctx.output("scan/p000000.malformed.jsonl") as out:
            out.write(b"partial")
            raise OSError("upload broken off")  # this writer never completes
        if die:
            raise KeyboardInterrupt  # killed after its upload, before its commit
        return VerifyResult(stats=Stats(), edges=len(runs))

    with pytest.raises(KeyboardInterrupt):
        run_task(scan, VerifyResult, ctx, "scan-p000000", True)
    store = ctx.store
    assert store.committed("scan-p000000") is None
    with pytest.raises(FileNotFoundError, match="has not committed"):
        store.resolve("scan-p000000", "scan/p000000.docs.jsonl")
    orphan = [n for n in store.list("scan") if "docs" in n]
    assert len(orphan) == 1 and store.read(orphan[0]) == b"docs of run 1\n"  # written whole, never committed
    assert not [n for n in store.list("scan") if "malformed" in n]  # the broken-off upload left nothing

    assert run_task(scan, VerifyResult, ctx, "scan-p000000", False).edges == 2
    name = store.resolve("scan-p000000", "scan/p000000.docs.jsonl")
    assert name != orphan[0] and store.read(name) == b"docs of run 2\n"
    assert located[1] == store.locate(name) == f"s3://{bucket}/kill/{name}" and located[0] != located[1]
    with pytest.raises(FileNotFoundError, match="not among the outputs"):
        store.resolve("scan-p000000", "scan/p000000.malformed.jsonl")  # an unfinished writer is no output
    fresh = open_work_store(f"s3://{bucket}/kill")  # another node resolves the same object
    assert fresh.resolve("scan-p000000", "scan/p000000.docs.jsonl") == name


def test_duplicate_attempt_keeps_the_first_commits_objects(s3):
    _, bucket = s3
    ctx = TaskContext(config=RunConfig(), workdir=f"s3://{bucket}/dup", write_rejects=False)
    straggler = Attempt(ctx.store, "write-p000003", "straggler")
    straggler.put("pieces/s00000-p000003.jsonl", b"the straggler's piece\n")

    def write(ctx):
        with ctx.output("pieces/s00000-p000003.jsonl") as out:
            out.write(b"the retry's piece\n")
        straggler.commit(dump_result(VerifyResult(stats=Stats(), edges=1)))  # it commits first
        return VerifyResult(stats=Stats(), edges=2)

    assert run_task(write, VerifyResult, ctx, "write-p000003").edges == 1
    standing = ctx.store.resolve("write-p000003", "pieces/s00000-p000003.jsonl")
    assert ctx.store.read(standing) == b"the straggler's piece\n"


def test_local_copies_of_committed_objects(s3):
    _, bucket = s3
    store = open_work_store(f"s3://{bucket}/copies")
    attempt = Attempt(store, "write-000000")
    bodies = {"pieces/s00000-p000000.jsonl": b'{"a":1}\n', "pieces/s00001-p000000.jsonl": b'{"b":2}\n' * 1000}
    for rel, body in bodies.items():
        attempt.put(rel, body)
    attempt.commit({"pieces": [attempt.location(rel) for rel in bodies]})
    named = store.committed("write-000000").result["pieces"]
    assert all(n.startswith(f"s3://{bucket}/copies/pieces/") and ".attempt-" in n for n in named)
    with store.local_copies(named) as paths:
        assert [p.read_bytes() for p in paths] == list(bodies.values())
        folder = paths[0].parent
    assert not folder.exists()  # the copies go with the block
    with pytest.raises(ValueError, match="not an object of the work store"), store.local_copies(["/etc/hostname"]):
        pass
