"""A build whose work dir is an object store (`--work-dir s3://bucket/prefix`, issue 34) gives the
folder build's shards byte for byte: on the local and pool engines, with the cluster phase over
partitions, with the output on the store too, and resumed after an interruption on a machine that
kept nothing of the first run (its local mirror and object cache deleted). The store is S3 on
loopback (moto's server in this process), reached through the standard `AWS_ENDPOINT_URL`."""

import json
import random
import shutil
import socket

import pytest
from tests.conftest import local_config, write_jsonl
from tests.engines.s3_env import s3_client

from thresher.core.errors import TaskError, WorkDirError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.run.scan import scan_task
from thresher.run.shards import write_task
from thresher.run.store_mirror import cache_root
from thresher.run.stores import open_work_store as open_store
from thresher.run.workdir import default_work_dir

pytest.importorskip("s3fs")
server_module = pytest.importorskip("moto.server")

WORDS = [f"w{i}" for i in range(2000)]


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
def bucket(endpoint, monkeypatch):
    client = s3_client(endpoint, monkeypatch)
    name = f"work-{_free_port()}"
    client.create_bucket(Bucket=name)
    return client, name


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Near duplicates in chains, exact copies, unique documents and a malformed line."""
    rng = random.Random(7)
    texts = []
    for _ in range(4):
        words = [rng.choice(WORDS) for _ in range(240)]
        for _ in range(8):
            texts.append(" ".join(words))
            for _ in range(8):
                words[rng.randrange(len(words))] = rng.choice(WORDS)
    texts += [" ".join(rng.choice(WORDS) for _ in range(150)) for _ in range(30)]
    texts += [rng.choice(texts) for _ in range(15)]
    rng.shuffle(texts)
    records = [{"id": f"d{i}", "url": f"https://s.example/{i}", "text": t} for i, t in enumerate(texts)]
    return write_jsonl(tmp_path_factory.mktemp("corpus") / "docs.jsonl", records, ["{broken"])


def config(engine="local", **extra):
    return local_config(exec={"engine": engine, "workers": 2, **extra}, input={"partition_bytes": 12 * 1024},
                        dedup={"near": {"threshold": 0.7}})


def files(folder):
    """The dataset's files (shards, manifest, card, stats, index, rejects) by name; stats.json
    without its wall times (`timings_s`), which no two runs share."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and ".work" not in p.parts:
            data = p.read_bytes()
            if p.name == "stats.json":
                stats = json.loads(data)
                assert stats.pop("timings_s")
                data = json.dumps(stats).encode()
            out[p.relative_to(folder).as_posix()] = data
    return out


@pytest.fixture(scope="module")
def reference(corpus, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    result = build([str(corpus)], tmp / "out", config(), rejects=tmp / "rejects")
    assert result.stats.dropped and result.stats.malformed  # something to decide and to reject
    return files(tmp / "out"), files(tmp / "rejects")


def store_keys(client, name):
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=name).get("Contents", []))


@pytest.mark.parametrize("engine", ["local", "pool"])
def test_build_on_an_object_work_dir_equals_the_folder_build(corpus, reference, tmp_path, bucket, engine):
    client, name = bucket
    url = f"s3://{name}/work"
    result = build([str(corpus)], tmp_path / "out", config(engine, work_dir=url), rejects=tmp_path / "rejects")
    assert result.ok
    assert files(tmp_path / "out") == reference[0]
    assert files(tmp_path / "rejects") == reference[1]
    # swept once finished: only the stamp and the released lease are left, and nothing local
    assert [k for k in store_keys(client, name) if not k.startswith("work/lease/")] == ["work/store.json"]
    assert not default_work_dir(url).exists() and not cache_root(url).exists()
    with pytest.raises(WorkDirError, match="holds a finished dataset"):
        build([str(corpus)], tmp_path / "out", config(engine, work_dir=url))


def test_partitioned_cluster_phase_and_output_on_the_store(corpus, reference, tmp_path, bucket):
    client, name = bucket
    out = f"s3://{name}/out"
    build([str(corpus)], out, config(work_dir=f"s3://{name}/work", cluster_partitions=4),
          rejects=tmp_path / "rejects")
    fetched = tmp_path / "fetched"
    for key in store_keys(client, name):
        if key.startswith("out/"):
            (fetched / key[4:]).parent.mkdir(parents=True, exist_ok=True)
            client.download_file(name, key, str(fetched / key[4:]))
    assert files(fetched) == reference[0]
    assert files(tmp_path / "rejects") == reference[1]


def failing_write(ctx, p, *args):
    if p == 1:
        raise RuntimeError("write task lost")
    return write_task(ctx, p, *args)


SCANS: list[int] = []


def counting_scan(ctx, partition, *args):
    SCANS.append(partition.index)
    return scan_task(ctx, partition, *args)


def test_interrupted_build_resumes_from_the_store_alone(corpus, reference, tmp_path, bucket):
    client, name = bucket
    url = f"s3://{name}/work"
    with pytest.raises(TaskError):
        build([str(corpus)], tmp_path / "out", config(work_dir=url, retries=0), rejects=tmp_path / "rejects",
              tasks=DEFAULT_TASKS.replace(write=failing_write))
    committed = [k for k in store_keys(client, name) if k.startswith("work/done/")]
    assert any("/scan-" in k for k in committed) and any("/write-" in k for k in committed)
    # another machine: nothing local of the first run is left
    shutil.rmtree(default_work_dir(url))
    shutil.rmtree(cache_root(url))
    SCANS.clear()
    result = build([str(corpus)], tmp_path / "out", config(work_dir=url), rejects=tmp_path / "rejects",
                   tasks=DEFAULT_TASKS.replace(scan=counting_scan))
    assert result.ok and SCANS == []  # the scans committed in the store are not run again
    assert files(tmp_path / "out") == reference[0]
    assert files(tmp_path / "rejects") == reference[1]


def test_a_node_without_the_drivers_folder_gets_its_files_at_their_paths(tmp_path, bucket):
    """A task on another machine may read the driver's own files by path (a partition of spooled
    standard input, compiled URL lists): they come from the store's `driver` commit, linked where
    the driver has them."""
    from thresher.config import RunConfig
    from thresher.core.stats import Stats
    from thresher.run.results import VerifyResult
    from thresher.run.store_mirror import push_driver_files
    from thresher.run.task import TaskContext, run_task

    _, name = bucket
    url = f"s3://{name}/work"
    driver = tmp_path / "driver-stage"
    (driver / ".work" / "lists").mkdir(parents=True)
    (driver / ".work" / "stdin.bin").write_bytes(b"spooled standard input\n")
    (driver / ".work" / "lists" / "block.bin").write_bytes(b"\x01\x02")
    push_driver_files(open_store(url), driver, ["lists/block.bin", "stdin.bin"])
    shutil.rmtree(driver)  # this "node" never saw the driver's folder
    ctx = TaskContext(RunConfig(), str(driver / ".work"), False, store_url=url)

    def read_by_path(ctx):
        data = (driver / ".work" / "stdin.bin").read_bytes() + (driver / ".work" / "lists" / "block.bin").read_bytes()
        return VerifyResult(stats=Stats(), edges=len(data))

    assert run_task(read_by_path, VerifyResult, ctx, "scan-000000").edges == len(b"spooled standard input\n") + 2


def test_task_killed_between_its_uploads_and_its_commit(corpus, reference, tmp_path, bucket, monkeypatch):
    """A write task whose objects are uploaded but whose commit never happens (its process killed in
    between) counts for nothing: the rerun writes and commits it again, and its orphans are in no
    view (the shards are the folder build's)."""
    from thresher.run.store_object import ObjectWorkStore

    client, name = bucket
    url = f"s3://{name}/work"
    real_commit = ObjectWorkStore.commit

    def killed_before_commit(self, task, attempt, outputs, result):
        if task == "write-000001":
            raise RuntimeError("killed after the uploads, before the commit")
        return real_commit(self, task, attempt, outputs, result)

    monkeypatch.setattr(ObjectWorkStore, "commit", killed_before_commit)
    with pytest.raises(TaskError):
        build([str(corpus)], tmp_path / "out", config(work_dir=url, retries=0), rejects=tmp_path / "rejects")
    keys = store_keys(client, name)
    assert "work/done/write-000001.json" not in keys
    assert any(k.startswith("work/rejects/p000001.jsonl.attempt-") for k in keys)  # uploaded, never committed
    monkeypatch.setattr(ObjectWorkStore, "commit", real_commit)
    assert build([str(corpus)], tmp_path / "out", config(work_dir=url), rejects=tmp_path / "rejects").ok
    assert files(tmp_path / "out") == reference[0]
    assert files(tmp_path / "rejects") == reference[1]
