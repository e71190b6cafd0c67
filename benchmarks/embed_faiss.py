"""thresher's NumPy spherical k-means vs faiss-cpu's (`faiss.Kmeans(spherical=True)`), side by side.

1. Cost: the same sample of wordllama vectors (N generated texts of benchmarks/embed_scale.py, the
   build's sample size) clustered by each, k as the build picks it and 10x that, 25 Lloyd rounds,
   each run in a fresh child process: CPU seconds (user + sys, all threads), peak RSS (ru_maxrss,
   less the same child's RSS before the k-means), and the objective (mean cosine of a row to its
   centroid; higher is tighter). faiss with 1 thread and with its default (all cores); NumPy's
   BLAS as installed. Median of interleaved repeats.
2. Result: the mixed corpus of benchmarks/embed_boundary.py (AEB bodies with shuffled, templated
   and abridged variants among MSRP sentences) embedded once, clustered by each (k = one per ~1,000
   documents, seed 0), then deduplicated within clusters exactly as the build's semantic task does
   (keep first, cosine 0.9; nearest centroid only, and with the 0.05 boundary margin); pair
   precision / recall against the true groups.

Usage: python benchmarks/embed_faiss.py [N] → benchmarks/results/embed_faiss.json. Needs faiss-cpu
(not a thresher dependency) and the embed extra.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

CHILD = r"""
import json, resource, sys, time
import numpy as np
sample = np.load(sys.argv[1])
kind, k, threads = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
if kind == "faiss":
    import faiss
    if threads:
        faiss.omp_set_num_threads(threads)
before = rss()
u0 = resource.getrusage(resource.RUSAGE_SELF)
if kind == "numpy":
    from thresher.embed.semantic import kmeans
    centroids = kmeans(sample, k, iterations=25, seed=0)
else:
    km = faiss.Kmeans(
        sample.shape[1], k, niter=25, seed=0, spherical=True, max_points_per_centroid=10**9, verbose=False
    )
    km.train(sample)
    centroids = km.centroids
u1 = resource.getrusage(resource.RUSAGE_SELF)
from thresher.embed.semantic import nearest
assign = nearest(sample, centroids)
objective = float(np.mean(np.sum(sample * centroids[assign], axis=1)))
print(json.dumps({"cpu_s": (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime),
                  "peak_rss_over_start_mib": u1.ru_maxrss / 1024 - before, "objective": objective,
                  "largest_cluster": int(np.bincount(assign).max())}))
"""


def cost(sample_path: Path, k: int, repeats: int) -> dict:
    runs = {"numpy": ("numpy", 0), "faiss_1_thread": ("faiss", 1), "faiss_default_threads": ("faiss", 0)}
    got: dict[str, list[dict]] = {name: [] for name in runs}
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    for _ in range(repeats):
        for name, (kind, threads) in runs.items():
            out = subprocess.run([sys.executable, "-c", CHILD, str(sample_path), kind, str(k), str(threads)],
                                 capture_output=True, text=True, env=env, check=True)
            got[name].append(json.loads(out.stdout))
    table = {}
    for name, rows in got.items():
        table[name] = {"cpu_s_median": round(statistics.median(r["cpu_s"] for r in rows), 3),
                       "cpu_s_all": [round(r["cpu_s"], 3) for r in rows],
                       "peak_rss_over_start_mib": round(max(r["peak_rss_over_start_mib"] for r in rows), 1),
                       "objective": round(rows[0]["objective"], 5), "largest_cluster": rows[0]["largest_cluster"]}
    table["faiss_1_thread_cpu_ratio_vs_numpy"] = round(
        table["faiss_1_thread"]["cpu_s_median"] / table["numpy"]["cpu_s_median"], 3
    )
    return table


def dedup_quality() -> dict:
    import faiss
    import numpy as np
    from embed_boundary import mixed_corpus
    from embed_semdedup import evaluate

    from thresher.embed.batched import encode_texts
    from thresher.embed.encoder import get_encoder
    from thresher.embed.semantic import cluster_neighbours, kmeans, nearest_two

    records, group = mixed_corpus()
    names = [r["url"].rsplit("/", 1)[1] for r in records]
    kinds = {name: name.rsplit("-", 1)[1] if group[name] else "distractor" for name in group}
    vectors = encode_texts(get_encoder("wordllama"), [r["text"] for r in records]).vectors
    k = math.ceil(len(records) / 1000)
    faiss.omp_set_num_threads(1)
    km = faiss.Kmeans(
        vectors.shape[1], k, niter=25, seed=0, spherical=True, max_points_per_centroid=10**9, verbose=False
    )
    km.train(vectors)
    fitted = {"numpy": kmeans(vectors, k, iterations=25, seed=0), "faiss": km.centroids}
    out = {"documents": len(records), "clusters": k}
    for name, centroids in fitted.items():
        for margin in (0.0, 0.05):
            first, second = nearest_two(vectors, centroids, margin)
            drops = []
            dropped: set[int] = set()
            for j in range(len(centroids)):
                rows = np.flatnonzero(first == j)  # input order = keep first
                for row, kept, _ in cluster_neighbours(vectors[rows], 0.9):
                    drops.append((names[rows[row]], names[rows[kept]]))
                    dropped.add(int(rows[row]))
            boundary = 0
            # the boundary as the build decides it: pairs of survivors, the later one dropped
            for j in range(len(centroids)):
                own = [r for r in np.flatnonzero(first == j) if r not in dropped]
                visitors = [r for r in np.flatnonzero(second == j) if r not in dropped]
                if not own or not visitors:
                    continue
                sims = vectors[own] @ vectors[visitors].T
                for a, b in zip(*np.nonzero(sims >= 0.9), strict=True):
                    x, y = own[a], visitors[b]
                    later, earlier = max(x, y), min(x, y)
                    if later not in dropped and earlier not in dropped:
                        dropped.add(later)
                        drops.append((names[later], names[earlier]))
                        boundary += 1
            out[f"{name},margin={margin}"] = {**evaluate(drops, group, kinds), "boundary_duplicates": boundary,
                                               "largest_cluster": int(np.bincount(first).max())}
    return out


def main() -> int:
    import numpy as np
    from embed_scale import generated_texts

    from thresher.embed.batched import encode_texts
    from thresher.embed.encoder import get_encoder

    try:
        import faiss
    except ImportError:
        print("faiss-cpu is not installed (pip install faiss-cpu): nothing to compare", file=sys.stderr)
        return 1
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    texts = list(generated_texts(n, random.Random(0)))
    encoder = get_encoder("wordllama")
    sample = np.concatenate([encode_texts(encoder, texts[i : i + 4096]).vectors for i in range(0, n, 4096)])
    results: dict = {
        "machine": "2 shared cores, CPU only; CPU s = user + sys of a fresh child process (all threads)",
        "faiss_version": faiss.__version__,
        "numpy_version": np.__version__,
        "sample_rows": n,
        "dimension": 256,
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sample.npy"
        np.save(path, sample)
        for k in (math.ceil(n / 1000), 10 * math.ceil(n / 1000)):
            results[f"k={k}"] = cost(path, k, repeats=3)
    results["mixed_corpus_dedup"] = dedup_quality()
    out = ROOT / "benchmarks" / "results" / "embed_faiss.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
