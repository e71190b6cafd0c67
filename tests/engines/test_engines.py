"""The same input under every engine gives identical shards and equal stats; failures are retried,
then reported with the task, its input and its log; a killed build resumes to identical output."""

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from tests.conftest import article_html, local_config, write_jsonl
from tests.engines import crashy

from thresher.core.errors import InputError, TaskError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    records = []
    for i in range(240):
        src = i - 3 if i % 7 == 6 else i  # exact duplicates
        html = article_html(src)
        if i % 11 == 10:  # near duplicates: one sentence added
            html = article_html(i - 5).replace("</article>", "<p>An added closing line.</p></article>")
        records.append({"url": f"https://e.example/{i}", "html": html})
    return write_jsonl(tmp / "crawl.jsonl", records, ["{oops"])


def engine_config(engine, **extra):
    return local_config(exec={"engine": engine, "workers": 2, **extra}, input={"partition_bytes": 64 * 1024})


def test_local_pool_and_ray_give_identical_output(corpus, tmp_path):
    pytest.importorskip("ray")
    results = {e: build([str(corpus)], tmp_path / e, engine_config(e)) for e in ("local", "pool", "ray")}
    manifests = {e: r.manifest for e, r in results.items()}
    assert manifests["local"] == manifests["pool"] == manifests["ray"]
    counters = {e: r.stats.counters for e, r in results.items()}
    assert counters["local"] == counters["pool"] == counters["ray"]
    assert results["local"].stats.by_prefix("drop")["dedup.exact/exact_duplicate"] > 0


def test_engines_agree_on_web_archives(shared_data, tmp_path):
    pytest.importorskip("ray")
    files = [
        shared_data / "warc" / "aut" / "example.warc.gz",
        shared_data / "warc" / "resiliparse" / "warcfile.warc.gz",
        shared_data / "warc" / "dolma" / "sample-0000.warc.gz",
        shared_data / "warc" / "dolma" / "sample-0001.warc.gz",
        shared_data / "warc" / "pywb" / "iana.warc.gz",
    ]
    files = [str(f) for f in files if f.exists()]
    if not files:
        pytest.skip("no WARC samples under ../shared/data/warc")
    results = {e: build(files, tmp_path / e, engine_config(e)) for e in ("local", "pool", "ray")}
    assert results["local"].manifest == results["pool"].manifest == results["ray"].manifest
    assert results["local"].stats.counters == results["pool"].stats.counters == results["ray"].stats.counters
    assert results["local"].stats.kept > 0 and results["local"].stats.by_prefix("drop").get("read/revisit", 0) > 0


def test_pool_survives_a_dying_worker(corpus, tmp_path, monkeypatch):
    reference = build([str(corpus)], tmp_path / "ref", engine_config("local"))
    tasks = DEFAULT_TASKS.replace(scan=crashy.scan_task_dying_once)
    result = build([str(corpus)], tmp_path / "out", engine_config("pool", keep_work=True), tasks=tasks)
    assert (tmp_path / "out" / ".work" / "died-1").exists()  # the worker really died once
    assert result.manifest == reference.manifest


@pytest.mark.parametrize("engine", ["local", "pool"])
def test_a_task_failing_every_attempt_stops_the_run_with_task_input_and_log(corpus, tmp_path, monkeypatch, engine):
    with pytest.raises(TaskError) as exc:
        build(
            [str(corpus)],
            tmp_path / "out",
            engine_config(engine, retries=1),
            tasks=DEFAULT_TASKS.replace(scan=crashy.scan_task_always_failing),
        )
    message = str(exc.value)
    assert "task scan-000001 (input " in message and "crawl.jsonl[65536:131072]" in message
    assert "failed after 2 attempt(s): ValueError: bad partition" in message
    log = tmp_path / "out" / ".work" / "logs" / "scan-000001.log"
    assert "ValueError: bad partition" in log.read_text()
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert (tmp_path / "out" / ".work" / "done" / "scan-000000.json").exists()  # finished work kept


def test_unreachable_ray_address_is_a_one_line_error(corpus, tmp_path):
    pytest.importorskip("ray")
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(InputError, match=f"cannot reach the Ray cluster at '127.0.0.1:{port}'"):
        build([str(corpus)], tmp_path / "out", engine_config("ray", ray_address=f"127.0.0.1:{port}"))
    assert time.monotonic() - t0 < 30


@pytest.mark.slow
def test_sigkill_at_ten_random_moments_then_resume_gives_identical_output(tmp_path):
    """Kill `thresher build` with SIGKILL at seeded random moments across its phases; rerunning the
    same command must produce the reference manifest every time, with nothing lost or duplicated.

    A moment is "once k tasks have finished" for a random k below the build's task count (plus
    kills before the first marker, mid-scan): unlike a fraction of the reference run's wall time,
    it lands in the same phase however loaded the machine is."""
    from thresher.demo import write_crawl

    crawl = write_crawl(tmp_path / "crawl.jsonl", n_pages=1500)
    # many scan and group tasks (a 1,500-page crawl would get one group task per stage), so that
    # the seeded kill moments spread over the phases
    base = [sys.executable, "-m", "thresher.cli", "build", str(crawl), "-q", "--input-partition-bytes", "400000",
            "--key-partitions", "16"]
    subprocess.run([*base, "-o", str(tmp_path / "ref"), "--engine", "local", "--keep-work"], check=True)
    reference = json.loads((tmp_path / "ref" / "manifest.json").read_text())
    tasks = len(list((tmp_path / "ref" / ".work" / "done").glob("*.json")))
    assert tasks >= 20, tasks
    rng = random.Random(20261130)
    phases_hit = set()
    order = ["scan", "group", "verify", "cluster", "url_keys", "url_groups", "url_decide", "write", "assemble"]
    for k in range(10):
        out = tmp_path / f"run{k}"
        engine = ["--engine", "local"] if k % 2 == 0 else ["--engine", "pool", "--workers", "2"]
        target = 0 if k == 0 else rng.randrange(1, tasks)
        proc = subprocess.Popen([*base, "-o", str(out), *engine], start_new_session=True)
        done_dir = out / ".work" / "done"
        while proc.poll() is None:
            finished = sum(1 for _ in done_dir.glob("*.json")) if done_dir.exists() else 0
            if finished >= target and (target or (out / ".work" / "scan").exists()):
                break
            time.sleep(0.002)
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its workers, as a crashed machine would
        proc.wait()
        done = (
            {p.name.split("-")[0].removesuffix(".json") for p in done_dir.glob("*.json")}
            if done_dir.exists()
            else set()
        )
        phases_hit.add(max(done, key=order.index) if done else "start")
        if (out / "manifest.json").exists():  # it finished before the kill
            phases_hit.add("finished")
        else:
            subprocess.run([*base, "-o", str(out), *engine], check=True)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest == reference, f"kill {k} at {target} finished tasks ({sorted(done)}) gave a different dataset"
    assert len(phases_hit) >= 4, phases_hit  # the kills landed in different phases


def test_input_that_vanishes_mid_run_is_reported_and_the_run_finishes(tmp_path, monkeypatch):
    first = write_jsonl(
        tmp_path / "a.jsonl", [{"url": f"https://a.example/{i}", "html": article_html(i)} for i in range(10)]
    )
    second = write_jsonl(
        tmp_path / "b.jsonl", [{"url": f"https://b.example/{i}", "html": article_html(50 + i)} for i in range(10)]
    )
    real_scan_task = DEFAULT_TASKS.scan

    def scan_after_deleting_second(ctx, partition):
        second.unlink(missing_ok=True)  # gone between planning and its scan
        return real_scan_task(ctx, partition)

    result = build(
        [str(first), str(second)],
        tmp_path / "out",
        local_config(),
        tasks=DEFAULT_TASKS.replace(scan=scan_after_deleting_second),
    )
    assert result.stats.by_prefix("malformed") == {"unreadable_file": 1}
    assert result.stats.kept == 10 and result.stats.reconciles()


def test_full_disk_stops_the_run_with_the_reason_and_keeps_finished_work(tmp_path, monkeypatch):
    import errno

    src = write_jsonl(
        tmp_path / "c.jsonl", [{"url": f"https://c.example/{i}", "html": article_html(i)} for i in range(20)]
    )

    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(
        TaskError, match=r"task write-000000 failed after 2 attempt\(s\): OSError: \[Errno 28\] No space left on device"
    ):
        build(
            [str(src)], tmp_path / "out", local_config(exec={"retries": 1}), tasks=DEFAULT_TASKS.replace(write=no_space)
        )
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert (tmp_path / "out" / ".work" / "done" / "cluster.json").exists()
