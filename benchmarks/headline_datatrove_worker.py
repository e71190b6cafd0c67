"""datatrove's FineWeb-style pipeline on a folder of WARC files; run inside benchmarks/.venvs/datatrove.

Used by `headline_datatrove.py`, which times this whole process (and its worker processes) with GNU
time. Two modes:

    python headline_datatrove_worker.py pipeline INPUT_DIR WORK_DIR N [TIMEOUT_S]  # prints one JSON line
    python headline_datatrove_worker.py extract-aeb < pages.json           # one JSON line per page

`pipeline`: stage 1 is WarcReader -> URLFilter -> Trafilatura -> GopherRepetitionFilter ->
GopherQualityFilter -> C4QualityFilter -> FineWebQualityFilter -> JsonlWriter, the filter chain of
datatrove's FineWeb example minus its fastText LanguageFilter (the model is a download; every page
here is scored as English, which is what that filter would pass on for English pages). Stages 2-5
are datatrove's four-stage MinHash dedup (signatures, buckets, cluster, filter) with FineWeb's
configuration (5-grams, 14 buckets x 8 hashes, 64-bit xxhash). LocalPipelineExecutor with
tasks=N and workers=N for stages 1, 2 and 5, 14 bucket tasks on N workers, one cluster task.

TIMEOUT_S is the wall-clock guard datatrove's extractor sandbox puts on each page (default 1 s:
a page over it is skipped and the extractor process restarted).

`extract-aeb`: datatrove's Trafilatura extractor step, configured as in the pipeline, on the AEB
pages (`{"id", "path"}` on stdin); the caller scores the texts with extraction_eval's scorer.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _offline_url_filter():
    from datatrove.pipeline.filters import URLFilter
    from tldextract import TLDExtract

    f = URLFilter()
    # TLDExtract() would try to fetch the public suffix list; use the snapshot bundled with tldextract.
    f.tldextractor = TLDExtract(suffix_list_urls=())
    return f


def pipeline(input_dir: str, work_dir: str, n: int, timeout: float = 1.0) -> dict:
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )
    from datatrove.pipeline.readers import JsonlReader, WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    work = Path(work_dir)
    logs = work / "logs"
    cfg = MinhashConfig(hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8, n_grams=5)
    timings: dict[str, float] = {}

    def run(name: str, steps: list, tasks: int, workers: int) -> None:
        t0 = time.perf_counter()
        # start_method="fork" (datatrove's default is forkserver): forkserver's pool workers are children of
        # the fork server, which never reaps them, so their CPU time would be missing from GNU time's total.
        LocalPipelineExecutor(pipeline=steps, tasks=tasks, workers=workers, logging_dir=str(logs / name),
                              skip_completed=False, start_method="fork").run()
        timings[name] = round(time.perf_counter() - t0, 3)

    run("filter", [
        WarcReader(input_dir, glob_pattern="*.warc.gz", default_metadata={"dump": "headline"}),
        _offline_url_filter(),
        Trafilatura(favour_precision=True, timeout=timeout),
        GopherRepetitionFilter(),
        GopherQualityFilter(),
        C4QualityFilter(filter_no_terminal_punct=False),
        FineWebQualityFilter(),
        JsonlWriter(str(work / "filtered")),
    ], n, n)
    run("signatures", [JsonlReader(str(work / "filtered")), MinhashDedupSignature(str(work / "sigs"), config=cfg)],
        n, n)
    run("buckets", [MinhashDedupBuckets(str(work / "sigs"), str(work / "buckets"), config=cfg)],
        cfg.num_buckets, n)
    run("cluster", [MinhashDedupCluster(str(work / "buckets"), str(work / "remove_ids"), config=cfg)], 1, 1)
    run("dedup_filter", [JsonlReader(str(work / "filtered")), MinhashDedupFilter(str(work / "remove_ids")),
                         JsonlWriter(str(work / "deduped"))], n, n)

    def count(folder: str) -> int:
        import gzip

        total = 0
        for p in sorted((work / folder).glob("*.jsonl.gz")):
            with gzip.open(p, "rb") as f:
                total += sum(1 for _ in f)
        return total

    # Per-step counters from the filter stage's merged stats (documents in, dropped per filter).
    steps: dict[str, dict] = {}
    stats_file = logs / "filter" / "stats.json"
    if stats_file.exists():
        for entry in json.loads(stats_file.read_text()):
            name = entry.get("name", "?")
            st = entry.get("stats", {})
            steps[name] = {k: (v["total"] if isinstance(v, dict) and "total" in v else v) for k, v in st.items()
                           if not isinstance(v, dict) or "total" in v}
    return {
        "start_method": "fork",
        "after_filters": count("filtered"),
        "kept": count("deduped"),
        "stage_seconds": timings,
        "steps": steps,
    }


def extract_aeb() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import trafilatura
    from datatrove.pipeline.extractors import Trafilatura
    from extraction_worker import read_page  # the same page decoding extraction_eval uses for everyone

    ex = Trafilatura(favour_precision=True)
    pages = json.load(sys.stdin)
    print(json.dumps({"extractor": "datatrove Trafilatura(favour_precision=True)", "version": trafilatura.__version__}))
    for page in pages:
        html = read_page(page["path"])
        t0 = time.process_time()
        try:
            text, error = ex.extract(html) or "", None
        except Exception as exc:  # a crash on one page is an empty text
            text, error = "", f"{type(exc).__name__}: {exc}"[:200]
        print(json.dumps({"id": page["id"], "text": text, "seconds": time.process_time() - t0, "error": error}))


def main() -> int:
    mode = sys.argv[1]
    if mode == "pipeline":
        t0 = time.perf_counter()
        result = pipeline(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]) if len(sys.argv) > 5 else 1.0)
        result["seconds"] = round(time.perf_counter() - t0, 3)
        from importlib.metadata import version

        import trafilatura

        result["versions"] = {"datatrove": version("datatrove"), "trafilatura": trafilatura.__version__}
        print("RESULT " + json.dumps(result))
        return 0
    if mode == "extract-aeb":
        extract_aeb()
        return 0
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main())
