"""Embeddings: paraphrase detection on MSRP and encoding throughput with thresher's batching.

1. MSRP (../shared/data/reuse/msrp, train + test, 5,801 labelled pairs): ROC AUC and best F1 of
   the cosine of each encoder (WordLlama static, the hashing stub) beside the Jaccard of thresher's
   own near-dedup shingle sets (5-word shingles, what MinHash estimates; 3-word shingles too, as the
   kindest setting for one-sentence texts) on the same pairs.
2. Throughput on CPU (process time, median of interleaved repeats): the same encoder and the same
   texts, batched by `thresher.embed.batched.encode_texts` (length-sorted, 32 per batch) vs naive
   input-order batches of 32; padding efficiency of each. Texts: the 181 human-written article
   bodies of ../shared/data/extraction/aeb mixed with MSRP sentences (4,000 documents, shuffled with
   a fixed seed): short and long, as a crawl is.

Writes benchmarks/results/embed_eval.json. Needs the embed extra.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
DATA = ROOT.parent / "shared" / "data"


def msrp_pairs() -> list[tuple[int, str, str]]:
    pairs = []
    for name in ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt"):
        with open(DATA / "reuse" / "msrp" / name, encoding="utf-8-sig", newline="") as f:
            rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            next(rows)
            pairs += [(int(r[0]), r[3], r[4]) for r in rows if len(r) == 5]
    return pairs


def roc_auc(scores: list[float], labels: list[int]) -> float:
    """Mann-Whitney U / (pos × neg), ties counted half."""
    import numpy as np

    s, y = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos, neg = int(y.sum()), int(len(y) - y.sum())
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))


def best_f1(scores: list[float], labels: list[int]) -> tuple[float, float]:
    """The best F1 over all thresholds (predict paraphrase when score ≥ t) and that t."""
    pairs = sorted(zip(scores, labels, strict=True), reverse=True)
    pos = sum(labels)
    tp = fp = 0
    best, at = 0.0, 1.0
    for k, (score, label) in enumerate(pairs):
        tp += label
        fp += 1 - label
        if k + 1 < len(pairs) and pairs[k + 1][0] == score:
            continue
        f1 = 2 * tp / (tp + fp + pos)
        if f1 > best:
            best, at = f1, score
    return best, at


def at_threshold(scores: list[float], labels: list[int], t: float) -> dict:
    """What a dedup at `t` would do on these pairs: the share of paraphrases it calls duplicates
    (recall) and of non-paraphrases (false-positive rate)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    return {f"recall_at_{t}": round(sum(s >= t for s in pos) / len(pos), 4),
            f"false_positive_rate_at_{t}": round(sum(s >= t for s in neg) / len(neg), 4)}


def paraphrase(encoders: dict) -> dict:
    from thresher.dedup.shingles import shingle_set

    pairs = msrp_pairs()
    labels = [p[0] for p in pairs]
    out = {"pairs": len(pairs), "paraphrases": sum(labels)}
    for name, enc in encoders.items():
        a = enc.encode([p[1] for p in pairs])
        b = enc.encode([p[2] for p in pairs])
        cos = [float(x) for x in (a * b).sum(axis=1)]
        f1, t = best_f1(cos, labels)
        out[f"cosine:{name}"] = {"roc_auc": round(roc_auc(cos, labels), 4), "best_f1": round(f1, 4), "at": round(t, 4),
                                 **at_threshold(cos, labels, 0.9)}
    for size in (5, 3):
        jac = []
        for _, x, y in pairs:
            sx, sy = shingle_set(x, size), shingle_set(y, size)
            jac.append(len(sx & sy) / len(sx | sy) if sx | sy else 0.0)
        f1, t = best_f1(jac, labels)
        out[f"jaccard:{size}-word shingles"] = {
            "roc_auc": round(roc_auc(jac, labels), 4),
            "best_f1": round(f1, 4),
            "at": round(t, 4),
            **at_threshold(jac, labels, 0.8),
        }
    return out


def corpus(n: int) -> list[str]:
    articles = [
        v["articleBody"] for v in json.loads((DATA / "extraction" / "aeb" / "ground-truth.json").read_text()).values()
    ]
    sentences = [s for _, x, y in msrp_pairs() for s in (x, y)]
    texts = articles + sentences[: n - len(articles)]
    random.Random(0).shuffle(texts)
    return texts


def naive_efficiency(lengths: list[int], max_len: int, size: int) -> float:
    clipped = [min(max(n, 1), max_len) for n in lengths]
    padded = sum(len(clipped[i : i + size]) * max(clipped[i : i + size]) for i in range(0, len(clipped), size))
    return sum(clipped) / padded


def throughput(enc, texts: list[str], repeats: int) -> dict:
    from thresher.embed.batched import encode_texts

    def planned() -> object:
        return encode_texts(enc, texts, max_batch_size=32)

    def naive() -> object:
        return [enc.encode(texts[i : i + 32]) for i in range(0, len(texts), 32)]

    # the package's own API, the naive way (input order, 32 a batch, no truncation: each batch is
    # padded to its longest text); importing it configures the root logger, fine in a benchmark.
    # WordLlama.load(disable_download=True) cannot find its own shipped tokenizer (it looks in
    # tokenizer/, the file is in tokenizers/), so its inference class is built from the same files.
    from tokenizers import Tokenizer  # type: ignore[import-not-found]
    from wordllama.inference import WordLlamaInference  # type: ignore[import-not-found]

    from thresher.embed.static import _TOKENIZER, package_folder

    model = WordLlamaInference(enc._table, Tokenizer.from_file(str(package_folder() / _TOKENIZER)))

    def package() -> object:
        return model.embed(texts, norm=True, batch_size=32)

    ours = encode_texts(enc, texts, max_batch_size=32).vectors
    theirs = package()
    short = [i for i, n in enumerate(enc.tokenize_lengths(texts)) if 0 < n <= enc.max_len]
    agreement = float((ours[short] * theirs[short]).sum(axis=1).min())

    times: dict[str, list[float]] = {"thresher": [], "naive": [], "package": []}
    for _ in range(repeats):  # interleaved: all see the same machine load
        for name, fn in (("thresher", planned), ("naive", naive), ("package", package)):
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
    lengths = enc.tokenize_lengths(texts)
    result = encode_texts(enc, texts, max_batch_size=32)
    med = {k: statistics.median(v) for k, v in times.items()}
    tokens = sum(min(n, enc.max_len) for n in lengths)
    return {
        "documents": len(texts),
        "tokens_after_truncation": tokens,
        "truncated": result.truncated,
        "repeats": repeats,
        "thresher": {
            "cpu_s": round(med["thresher"], 3),
            "docs_per_s": round(len(texts) / med["thresher"]),
            "tokens_per_s": round(tokens / med["thresher"]),
            "padding_efficiency": round(result.plan.padding_efficiency, 4),
            "batches": len(result.plan.batches),
        },
        "naive_input_order_32": {
            "cpu_s": round(med["naive"], 3),
            "docs_per_s": round(len(texts) / med["naive"]),
            "tokens_per_s": round(tokens / med["naive"]),
            "padding_efficiency": round(naive_efficiency(lengths, enc.max_len, 32), 4),
            "batches": -(-len(texts) // 32),
        },
        "wordllama_package_embed_batch_size_32": {
            "cpu_s": round(med["package"], 3),
            "docs_per_s": round(len(texts) / med["package"]),
            "note": "WordLlama.embed in input order; reads every token (no 512 truncation)",
            "min_cosine_to_thresher_vectors_untruncated_docs": round(agreement, 6),
        },
        "speedup_vs_naive": round(med["naive"] / med["thresher"], 2),
        "speedup_vs_package": round(med["package"] / med["thresher"], 2),
    }


def msrp_sentences() -> tuple[dict[str, str], list[tuple[int, str, str]]]:
    sentences: dict[str, str] = {}
    labelled = []
    for name in ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt"):
        with open(DATA / "reuse" / "msrp" / name, encoding="utf-8-sig", newline="") as f:
            rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            next(rows)
            for r in rows:
                if len(r) == 5:
                    sentences[r[1]], sentences[r[2]] = r[3], r[4]
                    labelled.append((int(r[0]), r[1], r[2]))
    return sentences, labelled


def semantic(threshold: float) -> dict:
    """SemDeDup end to end on MSRP's sentences as a corpus (build, embed, dedup): which found pairs
    MSRP labels, and how many of its paraphrase pairs are found; CPU time and peak RSS."""
    import resource
    import tempfile

    from thresher.config import RunConfig
    from thresher.embed.dataset import embed_dataset
    from thresher.embed.encoder import get_encoder
    from thresher.embed.semantic import SemanticDedupConfig, SemanticStats, semantic_duplicates
    from thresher.run.build import build
    from thresher.write.manifest import read_shards

    sentences, labelled = msrp_sentences()
    with tempfile.TemporaryDirectory() as tmp:
        crawl = Path(tmp) / "msrp.jsonl"
        with open(crawl, "w", encoding="utf-8") as f:
            for sid, text in sentences.items():
                f.write(json.dumps({"url": f"https://msrp.example/{sid}", "text": text}) + "\n")
        config = RunConfig.from_dict(
            {"exec": {"engine": "local"}, "quality": {"preset": None}, "dedup": {"near": {"method": "none"}}}
        )
        build([str(crawl)], Path(tmp) / "ds", config)
        t = time.process_time()
        report = embed_dataset(Path(tmp) / "ds", get_encoder("wordllama"), dtype="float16")
        embed_s = time.process_time() - t
        ids = {r["id"]: r["url"].rsplit("/", 1)[1] for r in read_shards(Path(tmp) / "ds")}
        stats = SemanticStats()
        t = time.process_time()
        found = {
            frozenset((ids[d.id], ids[d.kept_id]))
            for d in semantic_duplicates(Path(tmp) / "ds", SemanticDedupConfig(threshold=threshold), stats)
        }
        dedup_s = time.process_time() - t
    label = {frozenset((a, b)): y for y, a, b in labelled}
    known = [label[p] for p in found if p in label]
    positives = sum(1 for y in label.values() if y)
    return {
        "documents": report.records,
        "threshold": threshold,
        "clusters": stats.clusters,
        "largest_cluster": stats.largest_cluster,
        "duplicates": stats.duplicates,
        "found_pairs_msrp_labels": len(known),
        "of_those_labelled_paraphrase": round(sum(known) / len(known), 4) if known else None,
        "msrp_paraphrase_pairs_found": round(sum(known) / positives, 4),
        "embed_cpu_s": round(embed_s, 3),
        "dedup_cpu_s": round(dedup_s, 3),
        "peak_rss_mib_process_so_far": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> int:
    from thresher.embed.encoder import get_encoder

    if not (DATA / "reuse" / "msrp").is_dir():
        print("MSRP not found under ../shared/data/reuse/msrp", file=sys.stderr)
        return 1
    t = time.process_time()
    static = get_encoder("wordllama")
    load_s = time.process_time() - t
    encoders = {"wordllama": static, "stub": get_encoder("stub")}
    results = {
        "machine": "2 shared cores, CPU only; times are process CPU seconds",
        "wordllama_load_cpu_s": round(load_s, 3),
        "msrp": paraphrase(encoders),
        # first, so that its peak RSS is not WordLlama's own padded batches below
        "semantic_dedup_msrp_sentences": semantic(0.9),
        "throughput_wordllama": throughput(static, corpus(4000), repeats=3),
    }
    out = ROOT / "benchmarks" / "results" / "embed_eval.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
