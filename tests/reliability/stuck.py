"""Worker-side stand-ins for the reliability tests (importable by forked and spawned workers)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from thresher.core.document import Document, Drop

STUCK_MARK = "stuck-in-c"


class CallIgnoringSignals:
    """A transform that, for pages whose URL holds STUCK_MARK, runs a C loop that never checks for
    signals (builtin `sum` over a huge range): only the watchdog can end it."""

    name = "test.stuck"

    def transform(self, doc: Document) -> Drop | None:
        if doc.url and STUCK_MARK in doc.url:
            sum(range(10**12))
        return None


REGEX_BOMB_MARK = "regex-bomb"


class CatastrophicRegex:
    """A transform that, for pages whose URL holds REGEX_BOMB_MARK, runs one regex call that
    backtracks 2^64 steps (what the old tokenizer did on `<b` runs): only the timer can stop it."""

    name = "test.regex"

    def transform(self, doc: Document) -> Drop | None:
        if doc.url and REGEX_BOMB_MARK in doc.url:
            re.match(r"(a+)+b", "a" * 64)
        return None


class Raising:
    """A transform that raises for pages whose URL ends in /boom."""

    name = "test.raising"

    def transform(self, doc: Document) -> Drop | None:
        if doc.url and doc.url.endswith("/boom"):
            raise ZeroDivisionError("a stage bug")
        return None


@contextlib.contextmanager
def _with_stage(stage: Any) -> Iterator[None]:
    """The pipeline's stages with `stage` first, for the duration of one task: the local engine
    runs tasks in the test process, so a lasting patch would leak into every later test."""
    import thresher.pipeline as pipeline

    original = pipeline.document_stages_by_row  # what the chain and build_document_stages build from
    pipeline.document_stages_by_row = lambda config, rows=None: [("test", stage), *original(config, rows)]
    try:
        yield
    finally:
        pipeline.document_stages_by_row = original


def scan_task_with_stuck_stage(ctx: Any, partition: Any) -> dict[str, Any]:
    import thresher.run.deadline as deadline
    from thresher.run.scan import scan_task

    deadline.WATCHDOG_GRACE_S = 0.5  # the test waits 1 CPU s for the kill timer, not 5
    with _with_stage(CallIgnoringSignals()):
        return scan_task(ctx, partition)


def scan_task_with_raising_stage(ctx: Any, partition: Any) -> dict[str, Any]:
    from thresher.run.scan import scan_task

    with _with_stage(Raising()):
        return scan_task(ctx, partition)


def scan_task_with_regex_stage(ctx: Any, partition: Any) -> dict[str, Any]:
    from thresher.run.scan import scan_task

    with _with_stage(CatastrophicRegex()):
        return scan_task(ctx, partition)


BOOM_MARK = "/boom"


class BoomTag:
    """A transform that tags pages whose URL ends in /boom (for the patched bookkeeping below)."""

    name = "test.tag"

    def transform(self, doc: Document) -> Drop | None:
        if doc.url and doc.url.endswith(BOOM_MARK):
            doc.annotations["test.boom"] = True
        return None


def _raise_on_tagged(original: Any) -> Any:
    """`TaskObserver.survived` or `chain_dropped`, raising for a tagged document."""
    def observe(self: Any, doc: Document, *args: Any) -> Any:
        if doc.annotations.get("test.boom"):
            raise KeyError("a bookkeeping bug this record's values trigger")
        return original(self, doc, *args)

    return observe


def scan_task_failing_after_the_chain(ctx: Any, partition: Any) -> dict[str, Any]:
    """A scan in which an exception escapes the processing of one record, outside any stage (the
    run's own bookkeeping): the task fails at that record on every attempt."""
    from thresher.run.observe import TaskObserver
    from thresher.run.scan import scan_task

    survived, chain_dropped = TaskObserver.survived, TaskObserver.chain_dropped
    TaskObserver.survived = _raise_on_tagged(survived)  # type: ignore[method-assign]
    TaskObserver.chain_dropped = _raise_on_tagged(chain_dropped)  # type: ignore[method-assign]
    try:
        with _with_stage(BoomTag()):
            return scan_task(ctx, partition)
    finally:
        TaskObserver.survived, TaskObserver.chain_dropped = survived, chain_dropped  # type: ignore[method-assign]


class _RaisingScan:
    """A corpus stage whose scan raises for /boom pages (its other methods are the wrapped stage's)."""

    def __init__(self, stage: Any) -> None:
        self._stage = stage

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stage, name)

    def scan(self, doc: Document) -> Any:
        if doc.url and doc.url.endswith(BOOM_MARK):
            raise ValueError("a key function bug")
        return self._stage.scan(doc)


def scan_task_with_raising_corpus_scan(ctx: Any, partition: Any) -> dict[str, Any]:
    import thresher.run.scan as scan

    original = scan.build_corpus_stages
    scan.build_corpus_stages = lambda config: [_RaisingScan(s) if i == 0 else s for i, s in enumerate(original(config))]
    try:
        return scan.scan_task(ctx, partition)
    finally:
        scan.build_corpus_stages = original


def scan_task_after_the_input_is_cut(ctx: Any, partition: Any) -> dict[str, Any]:
    """A scan whose input file is cut to half its size after the build planned it (a file truncated
    by another process while the build runs)."""
    import os

    from thresher.run.scan import scan_task

    size = os.path.getsize(partition.path)
    if size > 100:
        with open(partition.path, "r+b") as f:
            f.truncate(size // 2)
    return scan_task(ctx, partition)
