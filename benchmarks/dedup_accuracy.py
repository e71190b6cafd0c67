"""Near-dedup accuracy: thresher (MinHash, SimHash, variants) against datasketch, rensa and websieve on
the labelled corpus of `dedup_corpus.py`, plus the graded reuse levels of the Clough & Stevenson
short-answer corpus. Writes benchmarks/results/dedup_accuracy.json.

    python benchmarks/dedup_accuracy.py [--quick]

Metrics, at each threshold t in (0.7, 0.8, 0.9):
- **pairs**: predicted duplicate pairs against the pairs whose exact Jaccard is >= t.
- **documents**: the documents a tool would drop (all but the first member of each connected
  component of its duplicate pairs; websieve's own first-wins decisions) against the documents the
  ground truth drops (the same rule over the true pairs).

thresher's stages are driven by an in-benchmark group/verify driver (keys grouped in memory, exactly
the group phase's contract: buckets of keys seen more than once, `candidate_pairs`, `similarity`).
Peers run in the side venv through `dedup_peers.py`.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from dedup_corpus import OUT_DIR, SHARED, load_or_build  # noqa: E402

from thresher.core.document import Document  # noqa: E402
from thresher.core.stages import CorpusStage  # noqa: E402
from thresher.dedup.near import MinHashDedup, SimHashDedup  # noqa: E402
from thresher.dedup.near_config import NearDedupConfig  # noqa: E402
from thresher.dedup.shingles import shingle_set  # noqa: E402

PEER_PYTHON = HERE / ".venvs" / "dedup" / "bin" / "python"
RESULTS = HERE / "results" / "dedup_accuracy.json"
THRESHOLDS = (0.7, 0.8, 0.9)


def drive(stage: CorpusStage, texts: list[str]) -> tuple[dict[tuple[int, int], float], dict[str, float]]:
    """Scan, group keys in memory, verify candidate pairs: the verified edges and some counts."""
    start = time.perf_counter()
    buckets: dict[bytes, list[int]] = defaultdict(list)
    payloads: dict[int, bytes] = {}
    for i, text in enumerate(texts):
        ck = stage.scan(Document(id=str(i), text=text, ordinal=i))
        if ck is None:
            continue
        payloads[i] = ck.payload
        for key in set(ck.keys):
            buckets[key].append(i)
    scanned = time.perf_counter()
    edges: dict[tuple[int, int], float] = {}
    candidates: set[tuple[int, int]] = set()
    for members in buckets.values():
        if len(members) < 2:
            continue
        for a, b in stage.candidate_pairs(len(members)):
            pair = (members[a], members[b])
            if pair in candidates:
                continue
            candidates.add(pair)
            sim = stage.similarity(payloads[pair[0]], payloads[pair[1]])
            if sim is not None:
                edges[pair] = sim
    done = time.perf_counter()
    return edges, {
        "candidates": len(candidates),
        "scan_s": round(scanned - start, 3),
        "verify_s": round(done - scanned, 3),
        "not_scanned": len(texts) - len(payloads),
    }


def dropped_documents(pairs: set[tuple[int, int]] | list, n: int) -> set[int]:
    """All but the lowest id of every connected component."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in pairs:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    return {i for i in range(n) if find(i) != i}


def prf(predicted: set, truth: set) -> dict[str, float]:
    tp = len(predicted & truth)
    p = tp / len(predicted) if predicted else 1.0
    r = tp / len(truth) if truth else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(f, 4),
        "predicted": len(predicted),
        "true": len(truth),
    }


def thresher_variants(t: float) -> dict[str, CorpusStage]:
    return {
        "thresher minhash (defaults)": MinHashDedup(NearDedupConfig(threshold=t)),
        "thresher minhash, signature check only": MinHashDedup(NearDedupConfig(threshold=t, verify_max_shingles=None)),
        "thresher minhash k_permutation": MinHashDedup(NearDedupConfig(threshold=t, scheme="k_permutation")),
        "thresher minhash k_permutation, signature check only": MinHashDedup(
            NearDedupConfig(threshold=t, scheme="k_permutation", verify_max_shingles=None)
        ),
        "thresher simhash (hamming <= 3)": SimHashDedup(NearDedupConfig(method="simhash")),
    }


def library_pairs(texts: list[str], threshold: float) -> tuple[set[tuple[int, int]], float]:
    """Pairs found by the library's own phases (`thresher dedup`: scan and group tasks, edge
    files), exact dedup off so that only near dedup decides; the default normalization applies."""
    import tempfile

    from thresher.commands.dedup import find_clusters
    from thresher.config import RunConfig

    config = RunConfig.from_dict(
        {
            "quality": {"preset": None},
            "dedup": {"exact": {"level": None}, "near": {"threshold": threshold}},
            "exec": {"engine": "local"},
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "corpus.jsonl"
        with src.open("w", encoding="utf-8") as fh:
            for i, t in enumerate(texts):
                fh.write(json.dumps({"url": f"doc:{i}", "text": t}, ensure_ascii=False) + "\n")
        start = time.perf_counter()
        report = find_clusters([str(src)], config, Path(tmp) / "work")
        elapsed = time.perf_counter() - start
    pairs: set[tuple[int, int]] = set()
    for cluster in report["cluster_list"]:
        index = {m["id"]: int(m["url"].split(":")[1]) for m in cluster["members"]}
        for pr in cluster["pairs"]:
            a, b = index[pr["a"]], index[pr["b"]]
            pairs.add((min(a, b), max(a, b)))
    return pairs, elapsed


def estimator_error(texts: list[str], truth_pairs: list) -> dict[str, object]:
    """RMSE and mean error of the 128-value signature estimate against the exact Jaccard, over
    every true pair with J >= 0.3, for both MinHash schemes and three seeds."""
    import math

    from thresher.dedup.minhash import MinHasher, estimate_jaccard

    sizes = [len(shingle_set(t, 5)) for t in texts]
    out: dict[str, object] = {}
    for scheme in ("one_permutation", "k_permutation"):
        rows = []
        for seed in (0, 1, 2):
            h = MinHasher(128, scheme=scheme, sample_size=0, seed=seed)  # type: ignore[arg-type]
            sigs = [h.signature(t) for t in texts]
            errs: dict[str, list[float]] = {"under_128_shingles": [], "128_or_more": []}
            for i, j, jac in truth_pairs:
                if sigs[i] is None or sigs[j] is None:
                    continue
                e = estimate_jaccard(sigs[i], sigs[j]) - jac
                errs["under_128_shingles" if min(sizes[i], sizes[j]) < 128 else "128_or_more"].append(e)
            rows.append(
                {
                    k: {
                        "pairs": len(v),
                        "rmse": round(math.sqrt(sum(x * x for x in v) / len(v)), 4),
                        "mean": round(sum(v) / len(v), 4),
                    }
                    for k, v in errs.items()
                    if v
                }
            )
        out[scheme] = rows
    return out


def reuse_levels() -> dict[str, object]:
    """How thresher's similarity sees the graded reuse levels (cut / light / heavy / non)."""
    folder = SHARED / "reuse" / "plagiarism-short-answers"
    rows = list(csv.DictReader((folder / "file_information.csv").open(encoding="utf-8", errors="replace")))
    sources = {t: (folder / f"orig_task{t}.txt").read_text(encoding="utf-8", errors="replace") for t in "abcde"}
    per_level: dict[str, list[float]] = defaultdict(list)
    detected: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    simhash_d: dict[str, list[int]] = defaultdict(list)
    stages = {t: MinHashDedup(NearDedupConfig(threshold=t)) for t in (0.3, 0.5, 0.8)}
    sim = SimHashDedup(NearDedupConfig(method="simhash", simhash_max_hamming=31))
    for row in rows:
        text = (folder / row["File"]).read_text(encoding="utf-8", errors="replace")
        src = sources[row["Task"]]
        a, b = shingle_set(text, 5), shingle_set(src, 5)
        level = row["Category"]
        per_level[level].append(len(a & b) / len(a | b) if a | b else 0.0)
        for t, stage in stages.items():
            edges, _ = drive(stage, [src, text])
            detected[level][f"detected at {t}"] += bool(edges)
        fa, fb = sim.hasher.fingerprint(text), sim.hasher.fingerprint(src)
        if fa and fb and not fa.short and not fb.short:
            simhash_d[level].append((fa.value ^ fb.value).bit_count())
    out: dict[str, object] = {}
    for level in ("cut", "light", "heavy", "non"):
        js = sorted(per_level[level])
        out[level] = {
            "answers": len(js),
            "jaccard_5word_median": round(js[len(js) // 2], 3) if js else None,
            "jaccard_5word_max": round(js[-1], 3) if js else None,
            **{k: v for k, v in detected[level].items()},
            "simhash_hamming_median": sorted(simhash_d[level])[len(simhash_d[level]) // 2]
            if simhash_d[level]
            else None,
        }
    return out


def main(quick: bool = False) -> None:
    docs, truth = load_or_build()
    texts = [str(d["text"]) for d in docs]
    n = len(texts)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    shingle_file = OUT_DIR / "dedup_shingles.jsonl"
    if not shingle_file.exists():
        with shingle_file.open("w", encoding="utf-8") as fh:
            for d in docs:
                sh = sorted(" ".join(s) for s in shingle_set(str(d["text"]), 5))
                fh.write(json.dumps({"id": d["id"], "text": d["text"], "shingles": sh}, ensure_ascii=False) + "\n")
    results: dict[str, object] = {
        "corpus": {
            "documents": n,
            "pairs_sharing_a_shingle": truth["pairs_sharing_a_shingle"],
            "true_pairs": {str(t): sum(1 for p in truth["pairs"] if p[2] >= t) for t in THRESHOLDS},
            "built_by": "benchmarks/dedup_corpus.py",
        },
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "thresholds": {},
    }
    for t in THRESHOLDS if not quick else (0.8,):
        true_pairs = {(p[0], p[1]) for p in truth["pairs"] if p[2] >= t}
        true_dropped = dropped_documents(true_pairs, n)
        rows: dict[str, object] = {}
        for name, stage in thresher_variants(t).items():
            edges, counts = drive(stage, texts)
            pairs = set(edges)
            extra = {"bands_rows": [stage.bands, stage.rows]} if isinstance(stage, MinHashDedup) else {}
            rows[name] = {
                "pairs": prf(pairs, true_pairs),
                "documents": prf(dropped_documents(pairs, n), true_dropped),
                **counts,
                **extra,
            }
        lib_pairs, lib_s = library_pairs(texts, t)
        rows["thresher minhash via the library's scan/group phases"] = {
            "pairs": prf(lib_pairs, true_pairs),
            "documents": prf(dropped_documents(lib_pairs, n), true_dropped),
            "seconds": round(lib_s, 2),
        }
        if PEER_PYTHON.exists():
            proc = subprocess.run(
                [str(PEER_PYTHON), str(HERE / "dedup_peers.py"), "accuracy", str(shingle_file), str(t)],
                capture_output=True,
                text=True,
                check=True,
            )
            for name, res in json.loads(proc.stdout).items():
                pairs = {tuple(p) for p in res.get("pairs", [])}
                row: dict[str, object] = {}
                if not res.get("pairs_partial"):
                    row["pairs"] = prf(pairs, true_pairs)
                dropped = set(res["dropped"]) if "dropped" in res else dropped_documents(pairs, n)
                row["documents"] = prf(dropped, true_dropped)
                if "params" in res:
                    row["bands_rows"] = res["params"]
                rows[name] = row
        else:
            rows["peers"] = f"side venv missing: {PEER_PYTHON}"
        results["thresholds"][str(t)] = rows  # type: ignore[index]
        for name, row in rows.items():
            if isinstance(row, dict):
                pr, dr = row.get("pairs", {}), row["documents"]
                print(
                    f"t={t} {name:58s} pairs P {pr.get('precision', '-')!s:6} R {pr.get('recall', '-')!s:6} "
                    f"| docs P {dr['precision']!s:6} R {dr['recall']!s:6}"
                )
    if not quick:
        results["estimator_error"] = estimator_error(texts, truth["pairs"])
    if (SHARED / "reuse" / "plagiarism-short-answers").is_dir():
        results["reuse_levels"] = reuse_levels()
        print(json.dumps(results["reuse_levels"], indent=1))
    if not quick:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
