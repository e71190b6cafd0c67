"""The per-document deadline: a page that runs too long is dropped as a timeout and the build
finishes, on every engine, even when the page is stuck in one regex call or one C call."""

from __future__ import annotations

import re
import time

import pytest
from tests.conftest import article_html, local_config, write_jsonl
from tests.reliability import stuck

from thresher.core.document import Document, Drop
from thresher.pipeline import DocumentChain
from thresher.run.build import build
from thresher.run.deadline import DeadlineExceeded, DocumentDeadline
from thresher.run.phases import DEFAULT_TASKS

# Inputs that made the regex tokenizer backtrack for minutes (issue 13): each takes > 20 s without
# the deadline on this box.
REGEX_TASKS = DEFAULT_TASKS.replace(scan=stuck.scan_task_with_regex_stage)
ADVERSARIAL_UNITS = ("<b", "if(a<b&&c<d)", '<a "', "<a '", "<b x='", "<!--<a ")


def _busy(seconds: float) -> None:
    """Spend `seconds` of user CPU time (what the deadline's timer counts): arithmetic, with the
    clock (a system call) read only now and then."""
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for i in range(20_000):
            x += i * i


def test_timer_interrupts_a_single_catastrophic_regex_call():
    deadline = DocumentDeadline(0.2)
    t0 = time.process_time()
    with pytest.raises(DeadlineExceeded):
        deadline.start()
        try:
            re.match(r"(a+)+b", "a" * 64)  # 2^64 steps: never ends by itself
        finally:
            deadline.stop()
    assert time.process_time() - t0 < 1.2


def test_stopped_deadline_leaves_no_timer_and_restores_the_handler():
    import signal

    before = signal.getsignal(signal.SIGVTALRM)
    deadline = DocumentDeadline(0.05)
    deadline.start()
    deadline.stop()
    deadline.close()
    _busy(0.1)  # a timer left armed would fire here
    assert signal.getsignal(signal.SIGVTALRM) is before
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


def test_deadline_counts_cpu_time_so_waiting_does_not_use_it_up():
    """A loaded machine (the process waiting for a core) must not time a page out: the timer counts
    CPU time. 0.3 s of sleeping under a 0.2 s deadline passes; 0.3 s of work does not."""
    deadline = DocumentDeadline(0.2)
    deadline.start()
    try:
        time.sleep(0.3)
    finally:
        deadline.stop()
    with pytest.raises(DeadlineExceeded):
        deadline.start()
        try:
            _busy(0.3)
        finally:
            deadline.stop()


def test_page_stuck_in_one_regex_call_becomes_a_timeout_drop_with_value_and_limit():
    chain = DocumentChain(local_config(exec={"doc_deadline_s": 0.3}))
    chain.runners.insert(0, ("test.regex", stuck.CatastrophicRegex().transform, False))
    t0 = time.process_time()
    outcome = chain.run(Document(id="x", url=f"https://e.example/{stuck.REGEX_BOMB_MARK}", html=article_html(1)))
    assert time.process_time() - t0 < 1.3
    assert outcome is not None
    drop, failures = outcome
    assert (drop.stage, drop.reason, drop.limit, failures) == ("test.regex", "timeout", 0.3, [])
    assert 0.3 <= drop.value < 1.3
    assert chain.stats.counters["event/deadline_exceeded"] == 1


def test_adversarial_pages_of_issue_13_finish_within_the_deadline():
    chain = DocumentChain(local_config(exec={"doc_deadline_s": 0.5}))
    for unit in ADVERSARIAL_UNITS:
        t0 = time.process_time()
        outcome = chain.run(Document(id="x", html=unit * 3000))
        assert time.process_time() - t0 < 1.5, unit
        assert outcome is None or outcome[0].stage == "extract"


def test_deadline_off_when_zero():
    chain = DocumentChain(local_config(exec={"doc_deadline_s": 0}))
    assert chain.deadline.seconds is None
    assert chain.run(Document(id="x", html=article_html(1))) is None


def test_stage_exception_becomes_a_located_error_drop():
    chain = DocumentChain(local_config())
    chain.runners.insert(0, ("test.raising", stuck.Raising().transform, False))
    outcome = chain.run(Document(id="x", url="https://e.example/boom", html=article_html(1)))
    assert outcome == (Drop("test.raising", "error", detail={"error": "ZeroDivisionError: a stage bug"}), [])
    assert chain.stats.counters["event/stage_error"] == 1


@pytest.fixture()
def crawl_with_stuck_pages(tmp_path):
    records = [{"url": f"https://e.example/{i}", "html": article_html(i)} for i in range(12)]
    records.insert(3, {"url": f"https://e.example/{stuck.REGEX_BOMB_MARK}-1", "html": article_html(97)})
    records.insert(8, {"url": f"https://e.example/{stuck.REGEX_BOMB_MARK}-2", "html": article_html(98)})
    return write_jsonl(tmp_path / "crawl.jsonl", records)


def _check_two_timeouts(result):
    counters = result.stats.counters
    assert counters["drop/test.regex/timeout"] == 2
    assert counters["event/deadline_exceeded"] == 2
    assert counters["kept"] == 12 and result.stats.reconciles()


@pytest.mark.parametrize("engine", ["local", "pool"])
def test_build_with_stuck_pages_finishes_with_timeout_drops(crawl_with_stuck_pages, tmp_path, engine):
    config = local_config(exec={"engine": engine, "workers": 2, "doc_deadline_s": 0.5})
    t0 = time.monotonic()
    result = build([str(crawl_with_stuck_pages)], tmp_path / "out", config, tasks=REGEX_TASKS)
    assert time.monotonic() - t0 < 30
    _check_two_timeouts(result)


@pytest.mark.slow
def test_ray_build_with_stuck_pages_finishes_with_timeout_drops(crawl_with_stuck_pages, tmp_path):
    pytest.importorskip("ray")
    config = local_config(exec={"engine": "ray", "workers": 2, "doc_deadline_s": 0.5})
    _check_two_timeouts(build([str(crawl_with_stuck_pages)], tmp_path / "out", config, tasks=REGEX_TASKS))


def test_watchdog_ends_a_worker_stuck_in_c_and_the_retry_skips_the_page(tmp_path):
    records = [{"url": f"https://e.example/{i}", "html": article_html(i)} for i in range(6)]
    records.insert(2, {"url": f"https://e.example/{stuck.STUCK_MARK}", "html": article_html(99)})
    crawl = write_jsonl(tmp_path / "crawl.jsonl", records)
    config = local_config(exec={"engine": "pool", "workers": 2, "doc_deadline_s": 0.5, "keep_work": True})
    t0 = time.monotonic()
    result = build(
        [str(crawl)], tmp_path / "out", config, tasks=DEFAULT_TASKS.replace(scan=stuck.scan_task_with_stuck_stage)
    )
    assert time.monotonic() - t0 < 30
    counters = result.stats.counters
    assert counters["drop/test.stuck/timeout"] == 1
    assert counters["kept"] == 6 and result.stats.reconciles()
    [line] = (tmp_path / "out" / ".work" / "stuck" / "scan-0.jsonl").read_text().splitlines()
    assert '"timed_out": true' in line and '"stage": 0' in line
