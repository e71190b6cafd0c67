"""The mix and shuffle properties of `thresher pack` (issue 32), measured on real-sentence documents.

Two datasets are built from the generated corpus of `dedup_scale.py` (~3 KB documents recombined
from real text): A, its first half, and B, its second half. Then:

- **mix**: `A=0.7 B=0.3 --max-tokens N` for N at 25%, 50% and 90% of what the two hold without
  repeating A; each dataset's share of the packed tokens against its weight (goal: within 0.02) and
  the total against N (goal: at most 1% below, never above); and `A=0.2 B=0.8` with a budget that
  needs B twice (`--allow-repeat`): B's epochs and its share;
- **shuffle**: the whole of A packed with seeds 1 and 2: the Spearman rank correlation between a
  document's place in A and its place in the pack (a shuffle: about 0, within ±3/sqrt(n)), the share
  of consecutive packed documents that were also consecutive in A (a shuffle: about 2/n), and the
  share of documents at the same place under both seeds (about 1/n).

    python benchmarks/pack_mix.py [--docs 5000]

Writes benchmarks/results/pack_mix.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results" / "pack_mix.json"


def spearman(xs: list[int], ys: list[int]) -> float:
    n = len(xs)
    rank_x = {v: i for i, v in enumerate(sorted(xs))}
    rank_y = {v: i for i, v in enumerate(sorted(ys))}
    d2 = sum((rank_x[x] - rank_y[y]) ** 2 for x, y in zip(xs, ys, strict=True))
    return 1 - 6 * d2 / (n * (n * n - 1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=5_000)
    args = ap.parse_args()
    import pyarrow.parquet as pq
    from dedup_corpus import OUT_DIR
    from dedup_scale import generate

    from thresher.config import RunConfig
    from thresher.pack.run import PackOptions, pack
    from thresher.run.build import build
    from thresher.write.manifest import read_shards

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    src = OUT_DIR / f"dedup_scale_{args.docs}.jsonl"
    if not src.exists():
        generate(src, args.docs)
    result: dict[str, object] = {"documents": args.docs}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
        half = len(lines) // 2
        config = RunConfig.from_dict({"exec": {"engine": "local"}, "quality": {"preset": None},
                                      "dedup": {"near": {"method": None}, "exact": {"level": None}}})
        datasets = []
        for name, part in (("A", lines[:half]), ("B", lines[half:])):
            (work / f"{name}.jsonl").write_text("".join(part), encoding="utf-8")
            build([str(work / f"{name}.jsonl")], work / name, config)
            datasets.append(work / name)
        a, b = (str(d) for d in datasets)
        whole = pack([a, b], work / "whole", PackOptions(seed=1))
        tokens = [d["tokens"] for d in whole["datasets"]]
        feasible = min(tokens[0] / 0.7, tokens[1] / 0.3)
        mixes = []
        for fraction in (0.25, 0.5, 0.9):
            budget = int(fraction * feasible)
            m = pack([f"{a}=0.7", f"{b}=0.3"], work / f"mix{fraction}", PackOptions(seed=3, max_tokens=budget))
            packed = [d["packed_tokens"] for d in m["datasets"]]
            total = sum(packed)
            mixes.append({"budget": budget, "total": total, "below_budget": round(1 - total / budget, 5),
                          "share_a": round(packed[0] / total, 4), "share_b": round(packed[1] / total, 4),
                          "share_error": round(abs(packed[0] / total - 0.7), 4)})
        budget = int(1.5 * tokens[1] / 0.8)
        r = pack([f"{a}=0.2", f"{b}=0.8"], work / "repeat", PackOptions(seed=3, max_tokens=budget, allow_repeat=True))
        packed = [d["packed_tokens"] for d in r["datasets"]]
        mixes.append({"budget": budget, "total": sum(packed), "below_budget": round(1 - sum(packed) / budget, 5),
                      "share_b": round(packed[1] / sum(packed), 4), "epochs_b": r["datasets"][1]["epochs"],
                      "b_sequences": r["datasets"][1]["packed_sequences"], "b_documents": r["datasets"][1]["documents"],
                      "share_error": round(abs(packed[1] / sum(packed) - 0.8), 4)})
        result["mix"] = mixes
        place = {rec["id"]: i for i, rec in enumerate(read_shards(a))}
        orders = []
        for seed in (1, 2):
            pack([a], work / f"shuffle{seed}", PackOptions(seed=seed))
            rows = pq.read_table(work / f"shuffle{seed}" / "train" / "provenance.parquet").to_pylist()
            orders.append([place[row["id"]] for row in rows])
        n = len(orders[0])
        first = orders[0]
        adjacent = sum(1 for x, y in zip(first, first[1:], strict=False) if abs(x - y) == 1) / (n - 1)
        result["shuffle"] = {"documents": n, "spearman": round(spearman(list(range(n)), first), 4),
                             "spearman_bound": round(3 / math.sqrt(n), 4),
                             "consecutive_share": round(adjacent, 5), "consecutive_expected": round(2 / n, 5),
                             "same_place_both_seeds": sum(x == y for x, y in zip(*orders, strict=True)),
                             "every_document_once": sorted(first) == list(range(n))}
    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                            text=True).stdout.strip()
    result["commit"] = commit
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
