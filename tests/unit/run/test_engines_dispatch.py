"""The pool starts the heaviest tasks first and starts warm; results stay in call order."""

import pytest
from tests.engines import probes

from thresher.config import RunConfig
from thresher.pipeline import build_corpus_stages
from thresher.read.base import Partition
from thresher.run.engines import TaskCall, dispatch_order, task_weight
from thresher.run.pool_engine import PoolEngine
from thresher.stage_cache import worker_warmup


def call(*args, weight=None):
    return TaskCall(probes.sleep_then_echo, args, "t", weight=weight)


def test_heaviest_first_when_every_weight_is_known_ties_in_call_order():
    calls = [call(0, "a", weight=1), call(0, "b", weight=5), call(0, "c", weight=1), call(0, "d", weight=9)]
    assert dispatch_order(calls) == [3, 1, 0, 2]


def test_call_order_when_a_weight_is_unknown():
    calls = [call(0, "a", weight=1), call(0, "b"), call(0, "c", weight=9)]
    assert dispatch_order(calls) == [0, 1, 2]
    assert dispatch_order([]) == []


def test_a_byte_range_partition_gives_its_size_as_the_weight():
    ranged = Partition(0, "jsonl", ("f",), 100, 350)
    whole = Partition(1, "warc", ("g",))
    assert ranged.size_hint == 250 and whole.size_hint is None
    assert task_weight(TaskCall(probes.sleep_then_echo, ("ctx", ranged), "t")) == 250
    assert task_weight(TaskCall(probes.sleep_then_echo, ("ctx", whole), "t")) is None
    assert task_weight(TaskCall(probes.sleep_then_echo, ("ctx", whole), "t", weight=7)) == 7


def test_pool_returns_results_in_call_order_whatever_the_start_order():
    engine = PoolEngine(2)
    try:
        calls = [call(0.01 * (i % 3), i, weight=i % 4) for i in range(12)]
        done = []
        assert engine.run(calls, on_done=lambda i, r: done.append(i)) == list(range(12))
        assert sorted(done) == list(range(12))
    finally:
        engine.close()


def test_pool_workers_start_with_the_drivers_stages_and_environment(monkeypatch):
    config = RunConfig()
    build_corpus_stages(config)  # the driver builds them while planning
    engine = PoolEngine(2)  # a fork server may already be running with an older environment
    try:
        engine.run([TaskCall(probes.sleep_then_echo, (0, None), "warm")])
    finally:
        engine.close()
    monkeypatch.setenv("THRESHER_TEST_PROBE", "set-after-the-server-started")
    engine = PoolEngine(2, warmup=worker_warmup)
    try:
        states = engine.run([TaskCall(probes.worker_state, (config, "THRESHER_TEST_PROBE"), f"p{i}") for i in range(4)])
    finally:
        engine.close()
    assert all(s["stages_seeded"] for s in states)
    assert {s["env"] for s in states} == {"set-after-the-server-started"}


@pytest.mark.parametrize("workers", [2, 3])
def test_pool_restart_after_many_runs_keeps_order(workers):
    engine = PoolEngine(workers)
    try:
        for _ in range(3):
            assert engine.run([call(0, i, weight=i) for i in range(7)]) == list(range(7))
    finally:
        engine.close()


def test_each_run_gets_fresh_workers():
    """A phase never inherits the workers (and their heaps) of the phase before."""
    engine = PoolEngine(2)
    try:
        first = engine.run([TaskCall(probes.worker_pid, (i,), f"a{i}") for i in range(4)])
        second = engine.run([TaskCall(probes.worker_pid, (i,), f"b{i}") for i in range(4)])
    finally:
        engine.close()
    assert [v for _, v in first] == [v for _, v in second] == list(range(4))
    assert not {pid for pid, _ in first} & {pid for pid, _ in second}
