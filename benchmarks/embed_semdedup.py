"""SemDeDup inside `thresher build` vs MinHash, and each encoder's throughput and padding efficiency.

1. The short-answer plagiarism corpus (../shared/data/reuse/plagiarism-short-answers, Clough &
   Stevenson: 5 Wikipedia source texts, 95 answers graded cut / light / heavy revision of the
   source, or non = written independently). Each task's source and its cut/light/heavy answers are
   one true duplicate group. Built with `thresher build` (local engine, quality filters off) three
   ways: MinHash at 0.8 (the default near dedup), and SemDeDup (`--semantic-dedup`, near dedup off)
   with each encoder at its threshold. A drop is correct when it and the document it names as kept
   are in one group: precision = correct drops / drops; recall = correct drops / the drops that
   would collapse every group to one document (Σ group size − 1); and the share of each grade dropped.
2. Throughput on CPU (process CPU seconds, all threads; median of interleaved repeats) on the same
   N mixed texts (the 100 answers and sources, the AEB article bodies, MSRP sentences; shuffled with
   a fixed seed): thresher's batching (`encode_texts`: sorted by real token length, 32 a batch)
   vs the naive way (input order, 32 a batch), tokens/s and padding efficiency of each.

Usage: python benchmarks/embed_semdedup.py [N] → benchmarks/results/embed_semdedup.json.
Needs the embed extra; the minilm encoders need embed-transformer (and onnx).
"""

from __future__ import annotations

import csv
import gzip
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
DATA = ROOT.parent / "shared" / "data"
PLAG = DATA / "reuse" / "plagiarism-short-answers"


def plagiarism_corpus() -> tuple[list[dict], dict[str, str | None]]:
    """Records (url = file name) and each file's group (the task for sources and revisions, None for non)."""
    group: dict[str, str | None] = {}
    grade: dict[str, str] = {}
    with open(PLAG / "file_information.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            grade[row["File"]] = row["Category"]
            group[row["File"]] = None if row["Category"] == "non" else row["Task"]
    for task in "abcde":
        group[f"orig_task{task}.txt"] = task
        grade[f"orig_task{task}.txt"] = "source"
    records = []
    for name in sorted(group):
        text = (PLAG / name).read_bytes().decode("utf-8", "replace")
        records.append({"url": f"https://plag.example/{name}", "text": " ".join(text.split()), "grade": grade[name]})
    return records, group


def evaluate(drops: list[tuple[str, str]], group: dict[str, str | None], grades: dict[str, str]) -> dict:
    sizes: dict[str, int] = {}
    for g in group.values():
        if g is not None:
            sizes[g] = sizes.get(g, 0) + 1
    needed = sum(n - 1 for n in sizes.values())
    correct = sum(1 for doc, kept in drops if group[doc] is not None and group[doc] == group[kept])
    by_grade: dict[str, list[int]] = {}
    dropped = {doc for doc, _ in drops}
    for name, g in grades.items():
        by_grade.setdefault(g, [0, 0])
        by_grade[g][1] += 1
        by_grade[g][0] += name in dropped
    return {
        "drops": len(drops),
        "correct": correct,
        "precision": round(correct / len(drops), 4) if drops else None,
        "recall": round(correct / needed, 4),
        "dropped_share_by_grade": {g: round(a / n, 3) for g, (a, n) in sorted(by_grade.items())},
    }


def build_and_read(records: list[dict], tmp: Path, name: str, config_data: dict, with_section: bool = False) -> tuple:
    """(drops as (document, kept document) names, build CPU s[, the manifest's embeddings section])."""
    from thresher.config import RunConfig
    from thresher.run.build import build

    tmp.mkdir(parents=True, exist_ok=True)
    crawl = tmp / "plag.jsonl"
    if not crawl.exists():
        crawl.write_text("".join(json.dumps({"url": r["url"], "text": r["text"]}) + "\n" for r in records))
    config = RunConfig.from_dict({"exec": {"engine": "local"}, "quality": {"preset": None}, **config_data})
    t = time.process_time()
    result = build([str(crawl)], tmp / name, config, rejects=tmp / f"{name}-rejects")
    cpu = time.process_time() - t
    urls: dict[str, str] = {}
    for path in (tmp / name).glob("shard-*.jsonl.gz"):
        for line in gzip.open(path, "rt"):
            r = json.loads(line)
            urls[r["id"]] = r["url"]
    rejected = [json.loads(line) for line in gzip.open(tmp / f"{name}-rejects" / "rejects.jsonl.gz", "rt")]
    for r in rejected:
        urls[r["id"]] = r["url"]
    out = []
    for r in rejected:
        detail = r["drop"].get("detail") or {}
        if r["drop"]["stage"] in ("dedup.near", "dedup.semantic", "dedup.exact") and "kept_id" in detail:
            out.append((r["url"].rsplit("/", 1)[1], urls[detail["kept_id"]].rsplit("/", 1)[1]))
    if with_section:
        return out, cpu, result.manifest.get("embeddings") or {}
    return out, cpu


def semdedup_vs_minhash(encoders: list[str], thresholds: dict[str, list[float]]) -> dict:
    records, group = plagiarism_corpus()
    grades = {r["url"].rsplit("/", 1)[1]: r["grade"] for r in records}
    out: dict = {"documents": len(records), "true_groups": 5, "drops_needed": sum(1 for g in group.values() if g) - 5}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        drops, cpu = build_and_read(records, tmp, "minhash", {})
        out["minhash_0.8"] = {**evaluate(drops, group, grades), "build_cpu_s": round(cpu, 2)}
        for enc in encoders:
            for t in thresholds[enc]:
                cfg = {
                    "dedup": {"near": {"method": None}},
                    "embed": {"encoder": enc, "semantic_threshold": t, "device": "cpu", "semantic_clusters": 1},
                }
                drops, cpu = build_and_read(records, tmp, f"{enc}-{t}", cfg)
                out[f"semdedup:{enc}@{t}"] = {**evaluate(drops, group, grades), "build_cpu_s": round(cpu, 2)}
    return out


def mixed_texts(n: int) -> list[str]:
    records, _ = plagiarism_corpus()
    articles = [
        v["articleBody"] for v in json.loads((DATA / "extraction" / "aeb" / "ground-truth.json").read_text()).values()
    ]
    sentences = []
    with open(DATA / "reuse" / "msrp" / "msr_paraphrase_train.txt", encoding="utf-8-sig") as f:
        next(f)
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 5:
                sentences += parts[3:5]
    texts = [r["text"] for r in records] + articles
    texts += sentences[: max(0, n - len(texts))]
    random.Random(0).shuffle(texts)
    return texts[:n]


def throughput(encoders: dict, texts: list[str], repeats: int) -> dict:
    from thresher.embed.batched import encode_texts

    out = {}
    for name, enc in encoders.items():
        lengths = enc.tokenize_lengths(texts)
        tokens = sum(min(n, enc.max_len) for n in lengths)
        clipped = [min(max(n, 1), enc.max_len) for n in lengths]
        naive_padded = sum(len(clipped[i : i + 32]) * max(clipped[i : i + 32]) for i in range(0, len(clipped), 32))
        plan = encode_texts(enc, texts[:64], max_batch_size=32)  # warm-up (first calls allocate)
        times: dict[str, list[float]] = {"thresher": [], "naive": []}
        for _ in range(repeats):
            for mode in ("thresher", "naive"):
                t = time.process_time()
                if mode == "thresher":
                    plan = encode_texts(enc, texts, max_batch_size=32)
                else:
                    for i in range(0, len(texts), 32):
                        enc.encode(texts[i : i + 32])
                times[mode].append(time.process_time() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        out[name] = {
            "dimension": enc.dimension,
            "max_len": enc.max_len,
            "tokens_after_truncation": tokens,
            "thresher": {
                "cpu_s": round(med["thresher"], 3),
                "docs_per_cpu_s": round(len(texts) / med["thresher"], 1),
                "tokens_per_cpu_s": round(tokens / med["thresher"]),
                "padding_efficiency": round(plan.plan.padding_efficiency, 4),
            },
            "naive_input_order_32": {
                "cpu_s": round(med["naive"], 3),
                "docs_per_cpu_s": round(len(texts) / med["naive"], 1),
                "tokens_per_cpu_s": round(tokens / med["naive"]),
                "padding_efficiency": round(sum(clipped) / naive_padded, 4),
            },
            "speedup_vs_naive": round(med["naive"] / med["thresher"], 2),
        }
    return out


def main() -> int:
    import warnings

    from thresher.embed.encoder import get_encoder

    warnings.filterwarnings("ignore")
    if not PLAG.is_dir():
        print("the plagiarism corpus is not under ../shared/data/reuse", file=sys.stderr)
        return 1
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    encoders = {}
    loads = {}
    for name in ("wordllama", "minilm", "minilm-onnx"):
        t = time.process_time()
        try:
            encoders[name] = get_encoder(name, "cpu")
        except Exception as exc:  # noqa: BLE001 - an extra not installed: reported, the rest measured
            print(f"{name}: {exc}", file=sys.stderr)
            continue
        loads[name] = round(time.process_time() - t, 2)
    results = {
        "machine": f"{platform.machine()}, 2 shared cores, CPU only; times are process CPU seconds (all threads)",
        "encoder_load_cpu_s": loads,
        "plagiarism": semdedup_vs_minhash([e for e in encoders if e != "minilm-onnx"],
                                          {"wordllama": [0.9, 0.95], "minilm": [0.8, 0.9]}),
        "throughput": throughput(encoders, mixed_texts(n), repeats=3),
    }
    out = ROOT / "benchmarks" / "results" / "embed_semdedup.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
