"""No record can stop a build: an exception that escapes the processing of one record — in a
corpus stage's key function, or anywhere outside the stages — drops that record with an attributed
reason and the build finishes with counts that reconcile."""

from __future__ import annotations

import gzip
import json

import pytest
from tests.conftest import article_html, local_config, write_jsonl
from tests.reliability import stuck

from thresher.core.errors import TaskError
from thresher.read.base import make_ordinal
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS


@pytest.fixture()
def crawl_with_a_bad_record(tmp_path):
    records = [{"url": f"https://e.example/{i}", "html": article_html(i)} for i in range(8)]
    records.insert(4, {"url": f"https://e.example{stuck.BOOM_MARK}", "html": article_html(50)})
    return write_jsonl(tmp_path / "crawl.jsonl", records)


def _stuck_log(out):
    path = out / ".work" / "stuck" / "scan-0.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_corpus_stage_that_raises_for_one_record_drops_it_at_once(crawl_with_a_bad_record, tmp_path):
    config = local_config(exec={"keep_work": True})
    out = tmp_path / "out"
    result = build(
        [str(crawl_with_a_bad_record)],
        out,
        config,
        tasks=DEFAULT_TASKS.replace(scan=stuck.scan_task_with_raising_corpus_scan),
    )
    counters = result.stats.counters
    stage = next(k for k in counters if k.startswith("drop/") and k.endswith("/error"))
    assert counters[stage] == 1 and counters["event/stage_error"] == 1
    assert counters["kept"] == 8 and result.stats.reconciles()
    assert _stuck_log(out) == []  # dropped in place: no attempt failed


@pytest.mark.parametrize("engine", ["local", "pool"])
def test_record_two_attempts_failed_in_is_skipped_with_a_reason(crawl_with_a_bad_record, tmp_path, engine):
    config = local_config(exec={"engine": engine, "workers": 2, "retries": 2, "keep_work": True})
    out = tmp_path / "out"
    rejects = tmp_path / "rejects"
    tasks = DEFAULT_TASKS.replace(scan=stuck.scan_task_failing_after_the_chain)
    result = build([str(crawl_with_a_bad_record)], out, config, tasks=tasks, rejects=rejects)
    counters = result.stats.counters
    assert counters["drop/scan/error"] == 1 and counters["event/record_failed_twice"] == 1
    assert counters["kept"] == 8 and counters["seen"] == 9 and result.stats.reconciles()
    # two attempts failed at the same record (ordinal 4), noted with the exception; the third skipped it
    log = _stuck_log(out)
    assert [entry["o"] for entry in log] == [make_ordinal(0, 4)] * 2
    assert all(entry["step"] == "scan" and entry["error"].startswith("KeyError") for entry in log)
    with gzip.open(rejects / "rejects.jsonl.gz", "rt") as f:
        [reject] = [json.loads(line) for line in f]
    assert reject["url"].endswith(stuck.BOOM_MARK)
    assert (reject["drop"]["stage"], reject["drop"]["reason"], reject["drop"]["value"], reject["drop"]["limit"]) == (
        "scan",
        "error",
        2,
        2,
    )
    assert "KeyError" in reject["drop"]["detail"]["error"]


def test_without_retries_to_spare_the_build_stops_with_the_task_named(crawl_with_a_bad_record, tmp_path):
    config = local_config(exec={"retries": 1})
    with pytest.raises(TaskError, match="scan"):
        build(
            [str(crawl_with_a_bad_record)],
            tmp_path / "out",
            config,
            tasks=DEFAULT_TASKS.replace(scan=stuck.scan_task_failing_after_the_chain),
        )
