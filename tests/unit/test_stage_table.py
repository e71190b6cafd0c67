"""The stage order is one table (`thresher.pipeline.STAGE_TABLE`) that the build and the docs read,
and a corpus stage with phases of its own lands through the phased-stage protocol alone: the example
plugin in examples/plugins/host-cap (a per-host cap no per-document rule could decide) runs in a
build through the stage registry, its drops attributed and reconciled, resumable, with no run/ edit."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.core.errors import ConfigError, TaskError
from thresher.pipeline import CORPUS, DOCUMENT, PHASED, PHASED_STAGES, STAGE_TABLE, build_document_stages
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.write.manifest import read_shards

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "architecture.md"
PLUGIN = ROOT / "examples" / "plugins" / "host-cap"


def test_the_docs_list_the_stage_table_in_its_order():
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("**The stage table"):]
    rows = re.findall(r"^\| ([a-z_.]+) \| (document|corpus|phased) \|", section, flags=re.M)
    assert rows == [(row.name, row.kind) for row in STAGE_TABLE]


def test_the_table_orders_the_document_stages_and_kinds_come_in_their_order():
    kinds = [row.kind for row in STAGE_TABLE]
    assert kinds == sorted(kinds, key=[DOCUMENT, CORPUS, PHASED].index)
    config = local_config(quality={"preset": "default"}, pii={"types": ["email"]})
    names = [stage.name for stage in build_document_stages(config)]
    assert names[:3] == ["consent", "extract", "normalize"] and names[-1].startswith("pii")


@pytest.fixture
def host_cap(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGIN))
    from thresher_host_cap import HostCap

    PHASED_STAGES.register("host_cap_test", lambda config: HostCap(cap=2))
    yield
    PHASED_STAGES.refs.pop("host_cap_test", None)
    PHASED_STAGES.loaded.pop("host_cap_test", None)
    sys.modules.pop("thresher_host_cap", None)


def crawl(tmp_path: Path) -> Path:
    # 5 pages of a.example, 3 of b.example, 1 of c.example, interleaved; distinct bodies
    hosts = ["a", "b", "a", "c", "a", "b", "a", "b", "a"]
    records = [{"id": f"d{i}", "url": f"https://www.{h}.example/p{i}", "html": article_html(i)}
               for i, h in enumerate(hosts)]
    return write_jsonl(tmp_path / "crawl.jsonl", records)


def test_a_plugin_corpus_stage_runs_in_a_build_through_the_table(tmp_path, host_cap):
    src = crawl(tmp_path)
    config = local_config(dedup={"stages": ["semantic", "host_cap_test"]})
    result = build([str(src)], tmp_path / "out", config, rejects=tmp_path / "rejects")
    kept = [r["url"] for r in read_shards(tmp_path / "out")]
    # the first two of each host, in dataset order
    assert kept == ["https://www.a.example/p0", "https://www.b.example/p1", "https://www.a.example/p2",
                    "https://www.c.example/p3", "https://www.b.example/p5"]
    assert result.stats.reconciles() and result.stats.kept == 5
    assert result.manifest["host_cap"] == {"cap": 2, "dropped": 4, "largest_partition_hosts": 3}
    with gzip.open(next((tmp_path / "rejects").glob("*.jsonl.gz")), "rt") as f:
        rejected = [json.loads(line) for line in f]
    drops = sorted((r["url"], r["drop"]["reason"], r["drop"]["value"], r["drop"]["limit"]) for r in rejected)
    assert drops == [("https://www.a.example/p4", "host_cap_exceeded", 3, 2),
                     ("https://www.a.example/p6", "host_cap_exceeded", 4, 2),
                     ("https://www.a.example/p8", "host_cap_exceeded", 5, 2),
                     ("https://www.b.example/p7", "host_cap_exceeded", 3, 2)]


def failing_host_cap(ctx, *args):
    raise RuntimeError("simulated crash in the plugin's phase")


def test_a_plugin_stage_is_resumed_like_any_phase_and_its_tasks_can_be_replaced(tmp_path, host_cap):
    src = crawl(tmp_path)
    config = local_config(dedup={"stages": ["host_cap_test"]}, exec={"retries": 0})
    clean = build([str(src)], tmp_path / "clean", config)
    with pytest.raises(TaskError, match="simulated crash"):
        build([str(src)], tmp_path / "out", config, tasks=DEFAULT_TASKS.replace(host_cap=failing_host_cap))
    markers = {p.name for p in (tmp_path / "out" / ".work").rglob("host_count-*")}
    assert markers  # the counting phase finished before the crash
    resumed = build([str(src)], tmp_path / "out", config)
    assert resumed.manifest["shards"] == clean.manifest["shards"]
    with pytest.raises(ValueError, match="phases this build does not have: host_cup"):
        build([str(src)], tmp_path / "typo", config, tasks=DEFAULT_TASKS.replace(host_cup=failing_host_cap))


def test_an_unknown_corpus_stage_is_a_config_error_naming_the_known_ones(tmp_path):
    src = crawl(tmp_path)
    with pytest.raises(ConfigError, match="unknown corpus stage 'nope'.*semantic"):
        build([str(src)], tmp_path / "out", local_config(dedup={"stages": ["semantic", "nope"]}))
