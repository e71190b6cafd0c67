"""The cluster phase split over partitions (`--dedup-cluster-partitions`, `thresher.run.cluster_rounds`)
decides exactly as the single cluster task: the same decisions files and shards, byte for byte, on
every engine, and after an interruption mid-phase and a resume."""

import random
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.core.errors import ConfigError, TaskError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS

np = pytest.importorskip("numpy")

WORDS = [f"w{i}" for i in range(3000)]


def chain_texts(rng, length, steps):
    """Documents each a few words away from the previous one: near duplicates in a chain whose ends
    share little, so that the members far from the keeper are attributed through a neighbour."""
    words = [rng.choice(WORDS) for _ in range(length)]
    texts = []
    for _ in range(steps):
        texts.append(" ".join(words))
        for _ in range(length // 30):
            words[rng.randrange(length)] = rng.choice(WORDS)
    return texts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = random.Random(11)
    texts = []
    for _ in range(6):
        texts += chain_texts(rng, 300, 12)
    texts += [" ".join(rng.choice(WORDS) for _ in range(200)) for _ in range(60)]  # unique documents
    texts += [rng.choice(texts) for _ in range(40)]  # exact copies
    rng.shuffle(texts)  # ordinal order is not chain order
    tmp = tmp_path_factory.mktemp("corpus")
    records = [{"id": f"d{i}", "url": f"https://c.example/{i}", "text": t + f" tail{rng.randrange(3)}"}
               for i, t in enumerate(texts)]
    return write_jsonl(tmp / "docs.jsonl", records)


def config(engine="local", keep="first", **extra):
    return local_config(exec={"engine": engine, "workers": 2, **extra}, input={"partition_bytes": 16 * 1024},
                        dedup={"keep": keep, "near": {"threshold": 0.7}})


def decisions(out):
    return {p.name: p.read_bytes() for p in sorted((out / ".work" / "decisions").glob("*.jsonl"))}


def shards(out):
    return {p.name: p.read_bytes() for p in sorted(out.rglob("*.jsonl.gz")) if ".work" not in p.parts}


@pytest.fixture(scope="module")
def references(corpus, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("refs")
    return {keep: build([str(corpus)], tmp / keep, config(keep=keep, keep_work=True))
            for keep in ("first", "longest")}, tmp


@pytest.mark.parametrize("keep", ["first", "longest"])
def test_four_partitions_decide_byte_identically_to_one_task(corpus, references, tmp_path, keep):
    results, ref_dir = references
    reference = results[keep]
    got = build([str(corpus)], tmp_path / "out", config(keep=keep, keep_work=True, cluster_partitions=4))
    rounds = {m.name.split("-")[3] for m in (tmp_path / "out" / ".work" / "done").glob("cluster-n4-round-*.json")}
    assert len(rounds) >= 5  # chains: several large-star/small-star rounds, not one checking round
    assert not (ref_dir / keep / ".work" / "cluster").exists()
    ref_decisions = decisions(ref_dir / keep)
    assert len(ref_decisions) > 1
    lines = b"".join(ref_decisions.values())
    assert b"via_id" in lines and b"dedup.near" in lines and b"dedup.exact" in lines  # chains and copies
    assert decisions(tmp_path / "out") == ref_decisions
    assert got.manifest == reference.manifest
    assert shards(tmp_path / "out") == shards(ref_dir / keep)


@pytest.mark.parametrize("engine", ["pool", "ray"])
def test_partitioned_cluster_phase_is_identical_on_other_engines(corpus, references, tmp_path, engine):
    if engine == "ray":
        pytest.importorskip("ray")
    results, ref_dir = references
    got = build([str(corpus)], tmp_path / engine, config(engine, cluster_partitions=4))
    assert got.manifest == results["first"].manifest
    assert shards(tmp_path / engine) == shards(ref_dir / "first")


def test_interrupted_partitioned_cluster_phase_resumes_to_identical_output(corpus, references, tmp_path):
    results, ref_dir = references
    out = tmp_path / "out"
    from tests.engines.cluster_faults import round_task_failing_once

    tasks = DEFAULT_TASKS.replace(**{"cluster-round": round_task_failing_once})
    with pytest.raises(TaskError, match="interrupted mid cluster phase"):
        build([str(corpus)], out, config(retries=0, cluster_partitions=4), tasks=tasks)
    done = out / ".work" / "done"
    assert (done / "cluster-n4-round-000-0000.json").exists()  # round 0 finished before the failure
    assert not (done / "cluster-n4-round-001-0001.json").exists()
    assert not list(done.glob("cluster-n4-decide-*.json"))
    got = build([str(corpus)], out, config(cluster_partitions=4))
    assert got.manifest == results["first"].manifest
    assert shards(out) == shards(ref_dir / "first")


def test_partitions_default_to_one_task_up_to_the_edge_budget():
    from thresher.run.cluster_rounds import EDGES_PER_PARTITION, SINGLE_TASK_EDGES, auto_partitions

    assert auto_partitions(0) == 1 and auto_partitions(SINGLE_TASK_EDGES) == 1
    assert auto_partitions(SINGLE_TASK_EDGES + 1) == SINGLE_TASK_EDGES // EDGES_PER_PARTITION + 1
    assert auto_partitions(50 * EDGES_PER_PARTITION) == 50


def test_zero_partitions_is_refused():
    with pytest.raises(ConfigError, match="cluster_partitions must be at least 1"):
        config(cluster_partitions=0)


def test_command_line_flag_sets_the_partitions():
    from thresher.cli import build_parser, config_from_args

    args = build_parser().parse_args(["build", "in.jsonl", "-o", "out", "--dedup-cluster-partitions", "4"])
    assert config_from_args(args).exec.cluster_partitions == 4
    default = build_parser().parse_args(["build", "in.jsonl", "-o", "out"])
    assert config_from_args(default).exec.cluster_partitions is None


def test_partitions_over_a_corpus_without_duplicates_decide_nothing(tmp_path):
    rng = random.Random(2)
    records = [{"id": f"u{i}", "url": f"https://u.example/{i}", "text": " ".join(rng.choice(WORDS) for _ in range(150))}
               for i in range(30)]
    corpus = write_jsonl(tmp_path / "unique.jsonl", records)
    reference = build([str(corpus)], tmp_path / "one", config())
    got = build([str(corpus)], tmp_path / "four", config(keep_work=True, cluster_partitions=4))
    assert got.manifest == reference.manifest
    assert not list((tmp_path / "four" / ".work" / "decisions").glob("p??????.jsonl"))  # the cluster phase's
    assert (tmp_path / "four" / ".work" / "done" / "cluster-n4-round-000-0000.json").exists()


def test_split_tasks_take_about_their_byte_budget_of_edge_files(tmp_path, monkeypatch):
    from thresher.run import cluster_rounds

    monkeypatch.setattr(cluster_rounds, "SPLIT_BYTES", 100)
    files = []
    for i, size in enumerate([0, 60, 60, 30, 150, 0]):
        path = tmp_path / f"{i}.edges"
        path.write_bytes(b"x" * size)
        files.append((i % 2, path))
    plan = cluster_rounds.plan_splits(files)
    assert [[int(Path(name).stem) for _, name in task] for task in plan] == [[0, 1], [2, 3], [4], [5]]
    assert cluster_rounds.plan_splits([]) == [[]]


@pytest.mark.slow
def test_sigkill_mid_rounds_then_resume_gives_the_single_tasks_output(corpus, tmp_path):
    """Kill `thresher build --dedup-cluster-partitions 4` (driver and workers) once round 2 has
    started finishing, rerun the same command: the manifest is the one-task build's."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    base = [sys.executable, "-m", "thresher.cli", "build", str(corpus), "-q", "--input-partition-bytes", "16384",
            "--threshold", "0.7", "--quality", "none", "--engine", "pool", "--workers", "2"]
    subprocess.run([*base, "-o", str(tmp_path / "ref")], check=True)
    out = tmp_path / "out"
    command = [*base, "-o", str(out), "--dedup-cluster-partitions", "4"]
    proc = subprocess.Popen(command, start_new_session=True)
    done = out / ".work" / "done"
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if done.exists() and any(done.glob("cluster-n4-round-002-*.json")):
            break
        time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "manifest.json").exists()  # killed mid cluster phase, not after
    assert not list(done.glob("cluster-n4-decide-*.json"))
    subprocess.run(command, check=True)
    reference = json.loads((tmp_path / "ref" / "manifest.json").read_text())
    assert json.loads((out / "manifest.json").read_text()) == reference
    assert shards(out) == shards(tmp_path / "ref")
