"""An input that changes while a build reads it stops the build with one line naming it — never a
dataset that silently holds part of it (issue 13: an input truncated during a run lost the rest
with only the cut line reported) — and the rerun is refused until --overwrite."""

from __future__ import annotations

import gzip
import json

import pytest
from tests.conftest import article_html, local_config, write_jsonl
from tests.reliability import stuck

from thresher.core.errors import TaskError, WorkDirError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS


@pytest.mark.parametrize("name", ["crawl.jsonl", "crawl.jsonl.gz"])
def test_input_cut_while_the_build_reads_it_stops_the_build(tmp_path, name):
    records = [{"url": f"https://e.example/{i}", "html": article_html(i)} for i in range(40)]
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in records).encode()))
    else:
        write_jsonl(path, records)
    out = tmp_path / "out"
    with pytest.raises(
        TaskError, match=r"changed while the build read it \(it is \d+ bytes, \d+ when the build planned it\)"
    ):
        build(
            [str(path)],
            out,
            local_config(exec={"retries": 0}),
            tasks=DEFAULT_TASKS.replace(scan=stuck.scan_task_after_the_input_is_cut),
        )
    assert not (out / "manifest.json").exists()
    with pytest.raises(WorkDirError, match="changed"):  # the rerun over the changed input is refused
        build([str(path)], out, local_config())
    result = build([str(path)], out, local_config(), overwrite=True)
    assert result.stats.reconciles()
