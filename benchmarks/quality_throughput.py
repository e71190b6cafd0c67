"""Throughput of the default quality chain, side by side with datatrove's filters and websieve's
`assess`, in one run, on the same real extracted documents of about 3 KB.

Documents: the real part of the benchmark corpus (`quality_corpus.py`: AEB gold bodies, thresher's
extraction of the AEB and trafilatura-eval pages, Common Crawl WET text) between 1,000 and 6,000
characters. One process, one core; times are CPU seconds (`time.process_time`), which the other
work on a shared machine disturbs less than wall time.

Measured:
- thresher: the default chain (gopher, repetition, C4 line cleanup, C4, FineWeb) as the pipeline
  runs it (`apply_stage`, stopping at the first drop), the same calling the stages directly, and each
  rule set on every document (the cost when nothing is dropped, as in `assess`);
- datatrove 0.10.1 (side venv, subprocess): GopherQuality, GopherRepetition, C4 (FineWeb's setting),
  FineWebQuality, each on every document and as a chain stopping at the first drop;
- websieve 0.1.2: `websieve.quality.heuristics.assess` per document;
- loading the FineWeb URL block list (4.6 M domains) and URL lookups per second.

    python benchmarks/quality_throughput.py        # writes benchmarks/results/quality_throughput.json
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality_corpus import CORPUS, ROOT, SHARED, build, load  # noqa: E402

from thresher.core import Document  # noqa: E402
from thresher.core.stages import RuleSet, apply_stage  # noqa: E402
from thresher.quality.config import QualityConfig  # noqa: E402
from thresher.quality.stages import build_quality_stages  # noqa: E402

SIDE_PYTHON = ROOT / "benchmarks" / ".venvs" / "datatrove" / "bin" / "python"
RESULTS = ROOT / "benchmarks" / "results" / "quality_throughput.json"
MIN_CHARS, MAX_CHARS = 1_000, 6_000


def documents() -> list[dict]:
    docs = load() if CORPUS.exists() else build()
    return [d for d in docs if not d["kind"].startswith("junk") and MIN_CHARS <= len(d["text"]) <= MAX_CHARS]


def timed(fn, repeat: int = 5) -> float:  # noqa: ANN001
    """Best CPU time of `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def thresher_numbers(docs: list[dict]) -> dict:
    stages = build_quality_stages(QualityConfig())

    def pipeline_chain() -> None:
        for d in docs:
            doc = Document(id=d["id"], text=d["text"], url=d.get("url"))
            for stage in stages:
                if apply_stage(stage, doc):
                    break

    def direct_chain() -> None:
        for d in docs:
            doc = Document(id=d["id"], text=d["text"], url=d.get("url"))
            for stage in stages:
                drops = stage.check_all(doc) if isinstance(stage, RuleSet) else stage.transform(doc)
                if drops:
                    break

    def every_set() -> dict[str, float]:
        spent: dict[str, float] = {s.name: 0.0 for s in stages}
        for d in docs:
            doc = Document(id=d["id"], text=d["text"], url=d.get("url"))
            for stage in stages:
                t0 = time.process_time()
                stage.check_all(doc) if isinstance(stage, RuleSet) else stage.transform(doc)
                spent[stage.name] += time.process_time() - t0
        return spent

    pipeline_s = timed(pipeline_chain)
    direct_s = timed(direct_chain)
    per_set = every_set()
    n = len(docs)
    return {
        "default_chain_docs_per_s": round(n / pipeline_s, 1),
        "default_chain_direct_calls_docs_per_s": round(n / direct_s, 1),
        "every_set_on_every_doc_docs_per_s": round(n / sum(per_set.values()), 1),
        "ms_per_doc_by_set": {k: round(1000 * v / n, 3) for k, v in per_set.items()},
    }


def peer_numbers(docs: list[dict]) -> dict:
    path = ROOT / "benchmarks" / ".data" / "quality_throughput_docs.jsonl"
    out = ROOT / "benchmarks" / ".data" / "quality_throughput_peers.json"
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    subprocess.run([str(SIDE_PYTHON), str(ROOT / "benchmarks" / "quality_peers.py"), "throughput", str(path), str(out)],
                   check=True)
    raw = json.loads(out.read_text())
    n = raw["documents"]
    per_filter = raw["datatrove_filter_cpu_s"]
    return {
        "datatrove_chain_docs_per_s": round(n / raw["datatrove_chain_cpu_s"], 1),
        "datatrove_every_filter_on_every_doc_docs_per_s": round(n / sum(per_filter.values()), 1),
        "datatrove_ms_per_doc_by_filter": {k: round(1000 * v / n, 3) for k, v in per_filter.items()},
        "websieve_assess_docs_per_s": round(n / raw["websieve_assess_cpu_s"], 1),
    }


def url_list_numbers() -> dict | None:
    tarball = SHARED / "blocklists" / "fineweb-url-blocklist.tar.gz"
    if not tarball.exists():
        return None
    from thresher.quality.urls import UrlFilter, UrlFilterConfig

    words = SHARED / "blocklists" / "fineweb-url-words"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    f = UrlFilter(UrlFilterConfig(
        blocklists=(str(tarball),), banned_words=str(words / "banned_words.txt"),
        soft_banned_words=str(words / "soft_banned_words.txt"), banned_subwords=str(words / "banned_subwords.txt"),
    ))
    load_s = time.perf_counter() - t0
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    urls = [f"https://www.site{i}.example.org/news/2024/article-{i}.html?ref=home" for i in range(20_000)]
    t0 = time.process_time()
    for u in urls:
        f.check_all(Document(id="u", url=u))
    lookup_s = time.process_time() - t0
    return {"domains": len(f.block.domains), "urls": len(f.block.urls), "load_s": round(load_s, 2),
            "peak_rss_growth_mb": round(grown_mb), "checks_per_s": round(len(urls) / lookup_s)}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main(rounds: int = 3) -> int:
    docs = documents()
    mean_chars = sum(len(d["text"]) for d in docs) / len(docs)
    # rounds alternate thresher and the peers, so load from other work on a shared machine hits
    # both alike; the headline is the median round
    per_round = []
    for _ in range(rounds):
        per_round.append({"thresher": thresher_numbers(docs), "peers": peer_numbers(docs)})
    headline = {
        key: _median([r["thresher"][key] for r in per_round])
        for key in ("default_chain_docs_per_s", "default_chain_direct_calls_docs_per_s",
                    "every_set_on_every_doc_docs_per_s")
    }
    headline.update({
        key: _median([r["peers"][key] for r in per_round])
        for key in ("datatrove_chain_docs_per_s", "datatrove_every_filter_on_every_doc_docs_per_s",
                    "websieve_assess_docs_per_s")
    })
    result = {
        "what": "quality documents/s on one core (CPU time), same documents; median of alternating rounds",
        "machine": f"{platform.machine()}, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
                   f" on {os.cpu_count()} CPUs at the end",
        "documents": len(docs),
        "mean_chars": round(mean_chars),
        "median": headline,
        "rounds": per_round,
        "url_blocklist": url_list_numbers(),
        "goal_docs_per_s": 1000,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["median"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
