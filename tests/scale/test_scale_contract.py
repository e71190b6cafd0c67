"""The scale contract, guarded (issue 29): a build's memory does not grow with the corpus.

Two corpora of different sizes, built by the CLI with the pool engine (2 workers) and every
default stage, the `lang` extra's detector included, each in its own process tree sampled from
/proc (`benchmarks/tree_memory.py`). Memory is measured, not timed, so the bounds hold on a busy
machine. What it catches: pycld2's per-call leak, detectors or lists built per task, any stage that
keeps something per document (each of those grew a build by ~1.5 MiB per 1,000 documents).

Both builds use the same partition size: a scan task's working memory follows its partition (at
most `input.partition_bytes`), and the planner gives a small input smaller partitions, so without
this the small build would look lighter for a reason that has nothing to do with the corpus size.
The driver's bounded buffers (the explain index's 4 MiB) fill by ~20k documents, hence the sizes.

A third build adds the optional stages that need no model (URL block list, PII, decontamination):
what they add to the small build's peak is bounded too.

Measures: the tree's PSS (each shared page divided among the processes that map it: the fork
server's preloaded lingua models count once, not once per worker as a sum of RSS would) and the
largest process's own peak RSS (the kernel's VmHWM). The sum of RSS is reported, not bounded: it
counts the shared models three times and jumps when one phase's workers overlap the next's.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from benchmarks.tree_memory import run_sampled
from tests.conftest import shared_path
from tests.engines.mixed_language import documents, load_sentences

SMALL, LARGE = 20_000, 80_000
PARTITION_BYTES = 2 << 20  # the planner's smallest partition: both builds get it
GROWTH_MIB_PER_1000 = 0.25  # the contract's bound on peak growth
PEAK_PSS_MIB = 256  # the whole tree, fork server and workers included


def write_pages(path: Path, texts: list[str], seed: int = 7) -> Path:
    """HTML pages (so extraction runs) around the texts, 10% of them lightly edited copies of an
    earlier page (so near dedup has work)."""
    rnd = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i, text in enumerate(texts):
            if i > 100 and rnd.random() < 0.1:
                text = texts[rnd.randrange(i)] + " Updated."
            body = "".join(f"<p>{p}</p>" for p in text.split("\n\n"))
            html = (
                f"<html><head><title>Page {i}</title></head><body><nav><a href='/'>Home</a> <a "
                f"href='/a'>About</a></nav>"
                f"<article><h1>Page {i}</h1>{body}</article><footer>Copyright. Privacy.</footer></body></html>"
            )
            fh.write(
                json.dumps({"url": f"https://scale.example/{i % 997}/{i}", "html": html}, ensure_ascii=False) + "\n"
            )
    return path


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> dict[int, Path]:
    sentences = load_sentences(shared_path("language", "lingua"))
    texts = documents(sentences, LARGE, seed=2929)
    tmp = tmp_path_factory.mktemp("scale")
    return {n: write_pages(tmp / f"pages-{n}.jsonl", texts[:n]) for n in (SMALL, LARGE)}


MEASURES = ("peak_tree_pss_mib", "largest_process_peak_mib", "peak_tree_rss_mib", "peak_driver_mib")


def build_peaks(corpus: Path, out: Path, n: int, extra: tuple[str, ...] = ()) -> dict[str, float]:
    """One CLI build of `corpus` (pool of 2, every default stage, `extra` settings), sampled."""
    command = [sys.executable, "-m", "thresher.cli", "build", str(corpus), "-o", str(out), "-q",
               "--engine", "pool", "--workers", "2", "--input-partition-bytes", str(PARTITION_BYTES), *extra]
    sampled = run_sampled(command, out / ".work", interval=0.05)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["seen"] == n and stats["kept"] > n // 3
    assert json.loads((out / "manifest.json").read_text())["config"]["lang"]["detector"] == "cascade"
    return sampled


def higher(a: dict[str, float] | None, b: dict[str, float]) -> dict[str, float]:
    return {k: max(v, a[k]) if isinstance(v, (int, float)) and a else v for k, v in b.items()}


@pytest.fixture(scope="module")
def small_default(corpora, tmp_path_factory) -> dict[str, float]:
    """The small default build twice, its peak the larger of the two: a peak sampled every 50 ms over
    a short build can miss its top (one run in four read ~10 MiB low, which inflated the growth by
    0.1-0.15 MiB per 1,000 documents); the large build runs long enough at its peak to be sampled
    there."""
    pytest.importorskip("pycld2")
    pytest.importorskip("lingua")
    peaks: dict[str, float] | None = None
    for run in range(2):
        out = tmp_path_factory.mktemp(f"small-default-{run}") / "out"
        peaks = higher(peaks, build_peaks(corpora[SMALL], out, SMALL))
    assert peaks is not None
    return peaks


def test_peak_memory_does_not_grow_with_the_corpus(corpora, small_default, tmp_path):
    peaks = {SMALL: small_default, LARGE: build_peaks(corpora[LARGE], tmp_path / "out-large", LARGE)}
    report = {n: {k: round(p[k], 1) for k in MEASURES} for n, p in peaks.items()}
    print(report)  # shown with -s or -rP: the figures behind the bounds
    added = (LARGE - SMALL) / 1000
    for measure in ("peak_tree_pss_mib", "largest_process_peak_mib"):
        growth = (peaks[LARGE][measure] - peaks[SMALL][measure]) / added
        assert growth <= GROWTH_MIB_PER_1000, f"{measure} grew {growth:.3f} MiB per 1,000 documents: {report}"
    assert peaks[LARGE]["peak_tree_pss_mib"] <= PEAK_PSS_MIB, report


# What the optional stages that need no model (the FineWeb URL block list, PII redaction,
# decontamination against GSM8K) may add to the small build's peak tree PSS. Measured: +11 MiB here,
# +9 MiB at 50k documents, most of it the driver's (it compiles the list and the n-gram index before
# the scan); each worker reads the list a block per lookup and maps the 1.5 MiB index, so neither is
# copied per worker. Mapping the list's 36 MB (as before) added ~21 MiB; loading it into every
# worker (as before issue 29) ~380 MiB.
OPTIONAL_ADDS_MIB = 20


def test_the_optional_stages_add_little_and_stay_under_the_bound(corpora, small_default, tmp_path):
    # The list compiled beforehand, as a recipe's `--quality-urls-compiled-dir` keeps it: a cold
    # compile is a one-time transient at the build's start (in a child of the fork server,
    # `tests/engines/test_pool_run_apart.py`; ~100 MiB before a big list's digests were held once, 61
    # since), which on a build this short can be its peak and says nothing about what the stages cost
    # while they run, which is what this bounds.
    from thresher.quality import list_store

    tarball = str(shared_path("blocklists", "fineweb-url-blocklist.tar.gz"))
    compiled = tmp_path / "lists"
    list_store.shared_url_lists((tarball,), compiled)
    extra = ("--quality-urls-blocklists", tarball, "--quality-urls-compiled-dir", str(compiled),
             "--pii", "email,ip,phone,card,iban",
             "--decontaminate", str(shared_path("benchmarks-for-decontamination", "gsm8k", "test.jsonl")),
             "--decontaminate-field", "question,answer")
    optional = build_peaks(corpora[SMALL], tmp_path / "out-optional", SMALL, extra)
    report = {name: {k: round(p[k], 1) for k in MEASURES} for name, p in
              (("default", small_default), ("optional", optional))}
    print(report)
    added = optional["peak_tree_pss_mib"] - small_default["peak_tree_pss_mib"]
    assert added <= OPTIONAL_ADDS_MIB, f"the optional stages added {added:.1f} MiB of PSS: {report}"
    assert optional["peak_tree_pss_mib"] <= PEAK_PSS_MIB, report
