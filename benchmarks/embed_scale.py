"""Peak memory of `thresher embed` and of semantic dedup at scale, each in a fresh process.

A dataset of N generated documents (templated sentences of mixed length, 1 in 10 a reworded copy
of an earlier one) is written directly as shards + manifest (`write.manifest.build_manifest`);
then `thresher.embed.dataset.embed_dataset` (wordllama) and `semantic_duplicates` run each in a
child process whose peak RSS (ru_maxrss) and CPU time are recorded. Usage:
`python benchmarks/embed_scale.py 100000` → benchmarks/results/embed_scale_<N>.json.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

WORDS = ("river mountain market library harbour orchard factory theatre station garden council school "
         "bridge museum festival railway hospital forest island village").split()


def document(i: int, rng: random.Random) -> str:
    n = rng.choice((1, 2, 3, 5, 8, 20))
    return " ".join(
        f"The {rng.choice(WORDS)} of town {i} opened item{rng.randrange(10**6)} in year {rng.randrange(1900, 2024)}."
        for _ in range(n)
    )


def generated_texts(n: int, rng: random.Random):  # noqa: ANN201 - an iterator of str
    """`n` generated documents; every tenth is an earlier one with its words shuffled (a near
    paraphrase that shares every word)."""
    texts: list[str] = []
    for i in range(n):
        if texts and i % 10 == 9:
            words = texts[rng.randrange(len(texts))].split()
            rng.shuffle(words)
            yield " ".join(words)
        else:
            text = document(i, rng)
            if len(texts) < 20_000:
                texts.append(text)
            yield text


def write_dataset(folder: Path, n: int, shard_size: int = 10_000) -> None:
    from thresher.write.atomic import write_json_atomic
    from thresher.write.manifest import build_manifest

    stream = generated_texts(n, random.Random(0))
    shards = []
    folder.mkdir(parents=True)
    for s in range(0, n, shard_size):
        rel = f"shard-{s // shard_size:05d}.jsonl.gz"
        with gzip.open(folder / rel, "wt", encoding="utf-8") as f:
            for i in range(s, min(n, s + shard_size)):
                f.write(json.dumps({"id": str(i), "text": next(stream)}) + "\n")
        data = (folder / rel).read_bytes()
        shards.append(
            {
                "path": rel,
                "records": min(n, s + shard_size) - s,
                "bytes": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
    manifest = build_manifest(
        fmt="jsonl.gz",
        shards=shards,
        config_hash="generated",
        config={},
        extractor={},
        inputs=[],
        stats={"seen": n, "kept": n, "dropped": 0, "malformed": 0},
    )
    write_json_atomic(folder / "manifest.json", manifest)


CHILD = {
    "embed": (
        "from thresher.embed.dataset import embed_dataset; from thresher.embed.encoder import get_encoder; "
        "r = embed_dataset(sys.argv[1], get_encoder('wordllama')); "
        "print(json.dumps({'padding_efficiency': r.padding_efficiency}))"
    ),
    "semantic": (
        "from thresher.embed.semantic import SemanticDedupConfig, SemanticStats, semantic_duplicates; "
        "s = SemanticStats(); "
        "n = sum(1 for _ in semantic_duplicates(sys.argv[1], SemanticDedupConfig(threshold=0.9), s)); "
        "print(json.dumps({'duplicates': n, 'clusters': s.clusters, 'largest_cluster': s.largest_cluster}))"
    ),
}


def child(step: str, dataset: Path) -> dict:
    code = (
        f"import sys, json, time, resource; sys.path.insert(0, {str(ROOT / 'src')!r}); t = time.process_time(); "
        f"{CHILD[step]}; "
        "print(json.dumps({'cpu_s': time.process_time() - t, 'peak_rss_mib': "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(dataset)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    result = {}
    for line in out:
        result.update(json.loads(line))
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        t = time.process_time()
        write_dataset(Path(tmp) / "ds", n)
        results = {"documents": n, "reworded_copies": n // 10, "generate_cpu_s": round(time.process_time() - t, 2),
                   "embed": child("embed", Path(tmp) / "ds"), "semantic_dedup": child("semantic", Path(tmp) / "ds")}
    results["peak_rss_note"] = "each step in its own process (ru_maxrss, includes Python + NumPy + the model)"
    out = ROOT / "benchmarks" / "results" / f"embed_scale_{n}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
