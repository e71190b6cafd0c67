"""MSRP paraphrase detection with all-MiniLM-L6-v2 (minilm-onnx; its rows equal minilm's): ROC AUC,
best F1 and the rates at cosine 0.9, beside benchmarks/embed_eval.py's wordllama and shingle
Jaccard rows on the same 5,805 pairs. Writes benchmarks/results/embed_msrp_minilm.json."""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main() -> int:
    import embed_eval as e

    from thresher.embed.batched import encode_texts
    from thresher.embed.encoder import get_encoder

    warnings.filterwarnings("ignore")
    pairs = e.msrp_pairs()
    labels = [p[0] for p in pairs]
    out: dict = {"pairs": len(pairs), "paraphrases": sum(labels)}
    enc = get_encoder("minilm-onnx", "cpu")
    t = time.process_time()
    a = encode_texts(enc, [p[1] for p in pairs], max_batch_size=64).vectors
    b = encode_texts(enc, [p[2] for p in pairs], max_batch_size=64).vectors
    cpu = time.process_time() - t
    cos = [float(x) for x in (a * b).sum(axis=1)]
    f1, th = e.best_f1(cos, labels)
    out["cosine:minilm-onnx (= minilm)"] = {
        "roc_auc": round(e.roc_auc(cos, labels), 4),
        "best_f1": round(f1, 4),
        "at": round(th, 4),
        **e.at_threshold(cos, labels, 0.9),
        "encode_cpu_s": round(cpu, 1),
    }
    (ROOT / "benchmarks" / "results" / "embed_msrp_minilm.json").write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
