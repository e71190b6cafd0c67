"""Benchmark decontamination: recall of planted GSM8K items and false drops of clean documents, by
n-gram length, and the throughput and memory of the lookup against an index of 1M n-grams.

Data (all real, from ../shared/data): the 1,319 GSM8K test problems (benchmarks-for-decontamination/
gsm8k/test.jsonl, fields `question` and `answer` indexed), and unrelated real documents: the AEB
article bodies, dolma's Common Crawl text sample, the Clough & Stevenson short answers, MSRP
sentences (10 per document) and lingua sentences in en/de/fr/es (10 per document).

Each GSM8K problem is planted into a copy of one real document (hosts taken in turn), at a sentence
boundary, in one of three ways (a third each, seeded):
- verbatim: the question as it is (a scraped worksheet);
- lightly edited: the question with its case and punctuation changed and one word in ten
  replaced by another (a paraphrasing copy);
- partially quoted: a contiguous slice of 40-60% of the question's words (a forum quote).
Only the odd-numbered half of GSM8K is indexed (ids kept): documents planted with an
even-numbered problem are *same-domain negatives* -- grade-school word problems with GSM8K's
phrasing ("how much money does she make", "how many ... in total") that are not in the index, the
hard case for common n-grams. The clean documents are every real document, unmodified. A planted
document of an indexed item counts as found when it is dropped; a clean or same-domain document
dropped is a false drop.

Throughput: `DecontamFilter.check` over all documents (CPU seconds, median of interleaved repeats),
against the GSM8K index and against a 1M-n-gram index (GSM8K plus lingua sentences of the 71
languages whose sentences are not among the clean documents, three lines per item: recombined real
text, to reach the size);
its memory is the index's own bytes and the process RSS growth while it is built.

    python benchmarks/decontam_eval.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "src"))
DATA = ROOT.parent / "shared" / "data"
GSM8K = DATA / "benchmarks-for-decontamination" / "gsm8k" / "test.jsonl"
RESULTS = BENCH / "results" / "decontam_eval.json"

from thresher.core.document import Document  # noqa: E402
from thresher.decontam import index as index_module  # noqa: E402
from thresher.decontam.config import DecontamConfig  # noqa: E402
from thresher.decontam.stage import DecontamFilter  # noqa: E402


def real_documents() -> list[str]:
    docs: list[str] = []
    aeb = json.loads((DATA / "extraction" / "aeb" / "ground-truth.json").read_text(encoding="utf-8"))
    docs += [aeb[k]["articleBody"] for k in sorted(aeb)]
    for path in sorted((DATA / "warc" / "dolma").glob("cc_en_head-*.jsonl")):
        docs += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for path in sorted((DATA / "reuse" / "plagiarism-short-answers").glob("*.txt")):
        docs.append(path.read_text(encoding="utf-8", errors="replace"))
    sentences = []
    for name in ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt"):
        for line in (DATA / "reuse" / "msrp" / name).read_text(encoding="utf-8-sig").splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) == 5:
                sentences += [parts[3], parts[4]]
    docs += [" ".join(sentences[i : i + 10]) for i in range(0, len(sentences), 10)]
    for lang in ("en", "de", "fr", "es"):
        lines = (DATA / "language" / "lingua" / "sentences" / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        docs += [" ".join(lines[i : i + 10]) for i in range(0, len(lines), 10)]
    return [d for d in docs if len(d.split()) >= 30]


def gsm8k() -> list[dict[str, str]]:
    return [json.loads(line) for line in GSM8K.read_text(encoding="utf-8").splitlines() if line.strip()]


def light_edit(text: str, rng: random.Random, vocabulary: list[str]) -> str:
    words = text.split()
    for i in range(len(words)):
        if rng.random() < 0.1:
            words[i] = rng.choice(vocabulary)
    out = " ".join(words)
    out = out.lower() if rng.random() < 0.5 else out.upper()
    return out.replace(",", " ,").replace("?", "??")


def partial_quote(text: str, rng: random.Random) -> str:
    words = text.split()
    k = max(1, round(len(words) * rng.uniform(0.4, 0.6)))
    start = rng.randint(0, len(words) - k)
    return " ".join(words[start : start + k])


def plant(host: str, snippet: str, rng: random.Random) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", host)
    at = rng.randint(0, len(sentences))
    return " ".join([*sentences[:at], snippet, *sentences[at:]])


def planted_corpus(seed: int = 13) -> tuple[list[tuple[str, str, int]], list[str]]:
    """(mode, text, item line number) for each planted document, and the clean documents."""
    rng = random.Random(seed)
    clean = real_documents()
    items = gsm8k()
    vocabulary = sorted({w for d in clean[:200] for w in d.split() if w.isalpha() and len(w) > 3})
    modes = ["verbatim", "edited", "partial"]
    planted = []
    for i, item in enumerate(items):
        mode = modes[i % 3]
        q = item["question"]
        snippet = (
            q if mode == "verbatim" else light_edit(q, rng, vocabulary) if mode == "edited" else partial_quote(q, rng)
        )
        planted.append((mode, plant(clean[i % len(clean)], snippet, rng), i + 1))
    return planted, clean


def indexed_half(tmpdir: Path) -> Path:
    path = tmpdir / "gsm8k-odd.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for line, item in enumerate(gsm8k(), 1):
            if line % 2:
                out.write(json.dumps({"id": str(line), **item}) + "\n")
    return path


def evaluate(planted: list[tuple[str, str, int]], clean: list[str], config: DecontamConfig) -> dict[str, Any]:
    f = DecontamFilter(config)
    found: dict[str, list[int]] = {"verbatim": [0, 0], "edited": [0, 0], "partial": [0, 0]}
    same_domain: dict[str, list[int]] = {"verbatim": [0, 0], "edited": [0, 0], "partial": [0, 0]}
    right_item = 0
    for mode, text, line in planted:
        drop = f.check(Document(id="p", text=text))
        if line % 2 == 0:  # not indexed: a same-domain negative
            same_domain[mode][1] += 1
            same_domain[mode][0] += drop is not None
            continue
        found[mode][1] += 1
        if drop is not None:
            found[mode][0] += 1
            right_item += drop.detail["item"] == str(line)
    false_drops = [text[:100] for text in clean if f.check(Document(id="c", text=text)) is not None]
    total_found = sum(v[0] for v in found.values())
    indexed = sum(v[1] for v in found.values())
    return {
        "ngram": config.ngram,
        "max_items_per_ngram": config.max_items_per_ngram,
        "min_overlap": config.min_overlap,
        "index_ngrams": len(f.index),
        "exempt_ngrams": f.index.exempt,
        "recall": {m: round(v[0] / v[1], 4) for m, v in found.items()},
        "recall_all": round(total_found / indexed, 4),
        "attributed_to_the_planted_item": round(right_item / max(total_found, 1), 4),
        "false_drops": len(false_drops),
        "clean_documents": len(clean),
        "false_drop_rate": round(len(false_drops) / len(clean), 5),
        "false_drop_examples": false_drops[:5],
        "same_domain_false_drop_rate": {m: round(v[0] / v[1], 4) for m, v in same_domain.items()},
        "same_domain_false_drops": sum(v[0] for v in same_domain.values()),
        "same_domain_documents": sum(v[1] for v in same_domain.values()),
    }


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def large_benchmark(tmpdir: Path) -> Path:
    """GSM8K plus lingua sentences of 71 languages, three lines per item (module doc)."""
    path = tmpdir / "large.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for item in gsm8k():
            out.write(json.dumps({"text": item["question"] + "\n" + item["answer"]}) + "\n")
        for src in sorted((DATA / "language" / "lingua" / "sentences").glob("*.txt")):
            if src.stem in ("en", "de", "fr", "es"):  # these are clean documents of the corpus
                continue
            lines = src.read_text(encoding="utf-8").splitlines()
            for i in range(0, len(lines), 3):
                out.write(json.dumps({"text": " ".join(lines[i : i + 3]), "id": f"{src.stem}-{i}"}) + "\n")
    return path


def throughput(texts: list[str], f: DecontamFilter, repeats: int, pure: bool) -> float:
    f.index.use_numpy = not pure and index_module.numpy_available()
    docs = [Document(id="t", text=t) for t in texts]
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        for d in docs:
            f.check(d)
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    planted, clean = planted_corpus()
    accuracy = []
    with tempfile.TemporaryDirectory() as tmp:
        half = indexed_half(Path(tmp))
        for n in (8, 13, 20):
            for cut, min_overlap in ((10, 1), (None, 1), (10, 2)):
                cfg = DecontamConfig(benchmarks=(str(half),), fields=("question", "answer"), ngram=n,
                                     max_items_per_ngram=cut, min_overlap=min_overlap)
                row = evaluate(planted, clean, cfg)
                accuracy.append(row)
                print(
                    f"n={n:<2} cut={cut!s:<4} min_overlap={min_overlap} recall {row['recall']} all "
                    f"{row['recall_all']}  "
                    f"false drops {row['false_drops']}/{row['clean_documents']} same-domain "
                    f"{row['same_domain_false_drops']}/{row['same_domain_documents']} "
                    f"{row['same_domain_false_drop_rate']}"
                )
    texts = [t for _, t, _ in planted] + clean
    chars = sum(len(t) for t in texts)
    with tempfile.TemporaryDirectory() as tmp:
        big = large_benchmark(Path(tmp))
        rss0 = rss_bytes()
        t0 = time.process_time()
        big_cfg = DecontamConfig(benchmarks=(str(big),), ngram=13)
        big_filter = DecontamFilter(big_cfg)
        build_s = time.process_time() - t0
        rss_growth = rss_bytes() - rss0
        small = DecontamFilter(DecontamConfig(benchmarks=(str(GSM8K),), fields=("question", "answer"), ngram=13))
        speed = {}
        for name, f in (("gsm8k_index", small), ("1M_index", big_filter)):
            for kernel in ("numpy", "pure"):
                seconds = throughput(texts, f, args.repeats, pure=kernel == "pure")
                speed[f"{name}/{kernel}"] = {"cpu_s": round(seconds, 3), "docs_per_cpu_s": round(len(texts) / seconds),
                                             "mb_per_cpu_s": round(chars / 1e6 / seconds, 2)}
        index_info = {"ngrams": len(big_filter.index), "items": len(big_filter.index.items),
                      "index_bytes": big_filter.index.nbytes, "bytes_per_ngram": 12,
                      "build_cpu_s": round(build_s, 2), "rss_growth_bytes": rss_growth,
                      "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    out = {
        "benchmark": "decontam_eval", "gsm8k_items": len(planted), "indexed_items": (len(planted) + 1) // 2,
        "planted": len(planted), "clean": len(clean),
        "documents": len(texts), "chars": chars, "accuracy": accuracy, "throughput": speed, "large_index": index_info,
        "repeats": args.repeats, "python": platform.python_version(), "machine": platform.machine(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"throughput": speed, "large_index": index_info}, indent=1))


if __name__ == "__main__":
    main()
