"""Worker-side stand-ins for the reliability tests (importable by forked and spawned workers)."""

from __future__ import annotations

import re
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


def _with_stage(stage: Any) -> None:
    import thresher.pipeline as pipeline

    original = getattr(pipeline, "_original_build_document_stages", pipeline.build_document_stages)
    pipeline._original_build_document_stages = original  # type: ignore[attr-defined]
    pipeline.build_document_stages = lambda config: [stage, *original(config)]


def scan_task_with_stuck_stage(ctx: Any, partition: Any) -> dict[str, Any]:
    import thresher.run.deadline as deadline
    from thresher.run.tasks import scan_task

    deadline.WATCHDOG_GRACE_S = 0.5  # the test waits 1 CPU s for the kill timer, not 5
    _with_stage(CallIgnoringSignals())
    return scan_task(ctx, partition)


def scan_task_with_raising_stage(ctx: Any, partition: Any) -> dict[str, Any]:
    from thresher.run.tasks import scan_task

    _with_stage(Raising())
    return scan_task(ctx, partition)


def scan_task_with_regex_stage(ctx: Any, partition: Any) -> dict[str, Any]:
    from thresher.run.tasks import scan_task

    _with_stage(CatastrophicRegex())
    return scan_task(ctx, partition)
