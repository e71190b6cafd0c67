"""Trains the zero-dependency language model (`thresher.lang.ngram`) and measures it against the
`lang` extra's cascade, in the same run.

Data: lingua's test data in ../shared/data/language/lingua (Apache-2.0; 75 languages). Each
language's lines are shuffled and split exactly as `benchmarks/lang_eval.py` does: the first 134
are the test split (reported here and in lang_eval.json), the next 150 the dev split, the rest
(about 716 per language) the training split. The model is trained on the training split of
`sentences/`, `single-words/` and `word-pairs/`; the temperature and the abstention bounds are
chosen on the dev split, on the even-numbered Bible verses of ../shared/data/language/bible-corpus
(CC0) in languages the model does not know, and on strings of random letters (the right answer for
both is `und`); figures are reported on the test split, the odd-numbered verses and other random
strings only.

Usage: python benchmarks/train_lang_fallback.py [--out-model src/thresher/lang/ngram_model.bin]
       [--results benchmarks/results/lang_fallback.json] [--no-train]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
DATA = REPO.parent / "shared" / "data" / "language"
LINGUA = DATA / "lingua"
BIBLE = DATA / "bible-corpus"
sys.path.insert(0, str(REPO / "src"))

from thresher.lang.codes import SCRIPT_LANGUAGE  # noqa: E402
from thresher.lang.ngram import MODEL_PATH, Group, NgramDetector, NgramModel, load_model, ngrams, normalize  # noqa: E402
from thresher.lang.script import detect_script  # noqa: E402

TEST_PER_LANGUAGE = 134  # as benchmarks/lang_eval.py
DEV_PER_LANGUAGE = 150
KINDS = ("sentences", "single-words", "word-pairs")
MAX_N = 4
STEP = 0.06  # nats per quantization step: 255 steps reach e^-15.3, below any smoothed probability here
ALPHA = 0.5  # additive smoothing of the n-gram counts
# n-grams kept per language and order (the union over a group's languages is its vocabulary)
TOP_PER_ORDER = {1: 400, 2: 700, 3: 900, 4: 900}
ISO3 = {"hye": "hy", "eus": "eu", "est": "et", "guj": "gu", "lav": "lv", "swh": "sw", "ukr": "uk", "zul": "zu",
        "chr": "chr"}


def split(kind: str) -> dict[str, tuple[list[str], list[str], list[str]]]:
    """language -> (test, dev, train) lines, shuffled as benchmarks/lang_eval.py shuffles them."""
    out = {}
    for name in sorted(os.listdir(LINGUA / kind)):
        code = name.removesuffix(".txt")
        lines = [x.strip() for x in (LINGUA / kind / name).read_text(encoding="utf-8").splitlines() if x.strip()]
        random.Random(f"thresher-lang-{code}").shuffle(lines)
        a, b = TEST_PER_LANGUAGE, TEST_PER_LANGUAGE + DEV_PER_LANGUAGE
        out[code] = (lines[:a], lines[a:b], lines[b:])
    return out


def bible() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(calibration, report) verses as (expected code, text): even and odd verses of each file."""
    calib: list[tuple[str, str]] = []
    report: list[tuple[str, str]] = []
    with open(BIBLE / "languages.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            expected = ISO3.get(row["iso639_3"], "und")
            verses = [x.strip() for x in (BIBLE / row["file"]).read_text(encoding="utf-8").splitlines() if x.strip()]
            calib += [(expected, v) for v in verses[0::2]]
            report += [(expected, v) for v in verses[1::2]]
    return calib, report


def noise(n: int = 1000, seed: str = "thresher-lang-noise") -> list[tuple[str, str]]:
    """Strings of random Latin letters (keyboard mash, identifiers): no language, so `und`."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [("und", " ".join("".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))
                             for _ in range(rng.randint(1, 12)))) for _ in range(n)]


# -- training -------------------------------------------------------------------------------------

def train(data: dict[str, dict[str, tuple[list[str], list[str], list[str]]]]) -> NgramModel:
    by_script: dict[str, list[str]] = defaultdict(list)
    for code, (_, _, lines) in sorted(data["sentences"].items()):
        script = Counter(detect_script(x).code for x in lines).most_common(1)[0][0]
        if SCRIPT_LANGUAGE.get(script) == code:
            continue  # the script decides
        by_script[script].append(code)
    groups = []
    for script, codes in sorted(by_script.items()):
        counts: dict[str, list[Counter[str]]] = {}
        for code in codes:
            per_order: list[Counter[str]] = [Counter() for _ in range(MAX_N + 1)]
            for kind in KINDS:
                for line in data[kind][code][2]:
                    for g in ngrams(normalize(line), MAX_N):
                        per_order[len(g)][g] += 1
            counts[code] = per_order
        vocabulary = sorted({g for code in codes for n in range(1, MAX_N + 1)
                             for g, _ in counts[code][n].most_common(TOP_PER_ORDER[n])} - {" "})
        if len(codes) == 1:
            vocabulary = []
        totals = {code: [sum(c.values()) + ALPHA * len(c) for c in counts[code]] for code in codes}
        weights = bytearray()
        for g in vocabulary:
            n = len(g)
            for code in codes:
                p = (counts[code][n].get(g, 0) + ALPHA) / totals[code][n]
                weights.append(min(255, round(-math.log(p) / STEP)))
        groups.append(Group((script,), tuple(codes), tuple(vocabulary), bytes(weights)))
        print(f"  {script}: {len(codes)} languages, {len(vocabulary)} n-grams", flush=True)
    return NgramModel(tuple(groups), STEP, MAX_N, 1.0, 0.0, 256.0, 1, "")


def with_bounds(model: NgramModel, temperature: float, min_probability: float, max_mean_cost: float,
                min_letters: int) -> NgramModel:
    return NgramModel(model.groups, model.step, model.max_n, temperature, min_probability, max_mean_cost, min_letters,
                      model.version)


def calibrate(model: NgramModel, dev_sets: list[list[tuple[str, str]]], unknown: list[tuple[str, str]]) -> NgramModel:
    """The temperature minimizing the log loss on the dev splits (sentences, single words, word
    pairs), then the abstention bounds: of the pairs (min_probability, max_mean_cost) that keep the
    mean of the three dev accuracies within a point of the best, the one that leaves the most verses
    of unknown languages and random strings `und`."""
    dev = [x for d in dev_sets for x in d]
    min_letters = 3  # two letters are a word in many languages at once
    raw = NgramDetector(model=with_bounds(model, 1.0, 0.0, 256.0, min_letters))
    rows = []  # (gold, gold's index or -1, log-likelihoods in nats, mean cost per n-gram, code without a model)
    for gold, text in dev + unknown:
        scorer = raw._scorer(detect_script(text).code)
        decided = raw.detect(text)
        if scorer is None or len(scorer.languages) == 1 or not decided.decided:
            rows.append((gold, -1, [], 0.0, decided.code))
            continue
        evidence, found = scorer.evidence(ngrams(normalize(text), model.max_n))
        costs = scorer.costs(evidence)
        index = scorer.languages.index(gold) if gold in scorer.languages else -1
        rows.append((gold, index, [-c * model.step for c in costs], min(costs) / found, scorer.languages))
    best_t, best_loss = 1.0, math.inf
    for t in (1, 2, 3, 5, 8, 12, 16, 20, 25, 30, 40, 50):
        loss = 0.0
        known = [(i, lls) for _, i, lls, _, _ in rows if i >= 0]
        for gold_index, lls in known:
            top = max(lls)
            z = math.log(sum(math.exp((v - top) / t) for v in lls))
            loss -= (lls[gold_index] - top) / t - z
        loss /= max(1, len(known))
        print(f"  temperature {t}: dev log loss {loss:.4f}", flush=True)
        if loss < best_loss:
            best_t, best_loss = float(t), loss
    decided = []  # (gold, code, probability, mean cost)
    for gold, _, lls, mean, languages in rows:
        if not lls:
            decided.append((gold, str(languages), 1.0, 0.0))
            continue
        top = max(lls)
        weights = [math.exp((v - top) / best_t) for v in lls]
        i = max(range(len(lls)), key=lls.__getitem__)
        decided.append((gold, languages[i], weights[i] / sum(weights), mean))
    n_dev = len(dev)
    bounds = [0]
    for d in dev_sets:
        bounds.append(bounds[-1] + len(d))
    grid = []
    for bound in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        for max_cost in (98.0, 100.0, 102.0, 104.0, 106.0, 108.0, 110.0, 256.0):
            labels = [c if p >= bound and m <= max_cost else "und" for _, c, p, m in decided]
            hits = [lab == g for lab, (g, _, _, _) in zip(labels[:n_dev], decided, strict=False)]
            dev_acc = sum(sum(hits[a:b]) / (b - a) for a, b in zip(bounds, bounds[1:], strict=False)) / len(dev_sets)
            unk = labels[n_dev:]
            und_share = unk.count("und") / max(1, len(unk))
            grid.append((bound, max_cost, dev_acc, und_share))
            print(f"  min_probability {bound}, max_mean_cost {max_cost}: dev accuracy {dev_acc:.4f}, "
                  f"unknown languages left und {und_share:.3f}", flush=True)
    top_acc = max(row[2] for row in grid)
    bound, max_cost, _, _ = max((row for row in grid if row[2] >= top_acc - 0.01), key=lambda r: (r[3], -r[0], r[1]))
    return with_bounds(model, best_t, bound, max_cost, min_letters)


# -- evaluation -----------------------------------------------------------------------------------

def evaluate(fn: Callable[[str], str], data: list[tuple[str, str]]) -> tuple[float, float, dict[str, float], float]:
    """(accuracy, texts per CPU second, per-language accuracy, share labelled und)."""
    t0 = time.process_time()
    preds = [fn(text) for _, text in data]
    elapsed = time.process_time() - t0
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for (gold, _), p in zip(data, preds, strict=True):
        totals[gold] += 1
        hits[gold] += p == gold
    return (sum(hits.values()) / len(data), len(data) / elapsed if elapsed else math.inf,
            {k: round(hits[k] / totals[k], 4) for k in sorted(totals)}, preds.count("und") / len(data))


def detectors() -> dict[str, Callable[[str], str]]:
    from thresher.lang.script_only import ScriptDetector

    out: dict[str, Callable[[str], str]] = {}
    ng = NgramDetector()
    out["ngram (fallback)"] = lambda t: ng.detect(t).code
    sd = ScriptDetector()
    out["script only"] = lambda t: sd.detect(t).code
    try:
        from thresher.lang.cascade import CascadeDetector, cld2_available

        if cld2_available():
            cd = CascadeDetector()
            out["cld2+lingua (lang extra)"] = lambda t: cd.detect(t).code
    except ImportError:
        pass
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-model", default=str(MODEL_PATH))
    ap.add_argument("--results", default=str(ROOT / "results" / "lang_fallback.json"))
    ap.add_argument("--no-train", action="store_true", help="evaluate the model already at --out-model")
    args = ap.parse_args(argv)
    data = {kind: split(kind) for kind in KINDS}
    calib, report = bible()
    if not args.no_train:
        t0 = time.time()
        model = train(data)
        dev_sets = [[(code, x) for code, (_, d, _) in sorted(data[kind].items()) for x in d] for kind in KINDS]
        model = calibrate(model, dev_sets, calib + noise())
        blob = model.to_bytes()
        Path(args.out_model).write_bytes(blob)
        print(f"model: {len(blob):,} bytes, temperature {model.temperature}, min_probability "
              f"{model.min_probability}, max_mean_cost {model.max_mean_cost}, trained in {time.time() - t0:.0f} s",
              flush=True)
    model = load_model(Path(args.out_model).read_bytes())
    import thresher.lang.ngram as ngram_module

    ngram_module._shipped[:] = [model]
    tests = {kind: [(code, x) for code, (t, _, _) in sorted(parts.items()) for x in t] for kind, parts in data.items()}
    results: dict[str, dict[str, object]] = {}
    for name, fn in detectors().items():
        for _, text in tests["sentences"][:300]:  # warm-up: loading is not counted
            fn(text)
        acc, rate, per_lang, und = evaluate(fn, tests["sentences"])
        row: dict[str, object] = {"sentences_accuracy": round(acc, 4), "sentences_per_s": round(rate),
                                  "sentences_und_share": round(und, 4), "per_language": per_lang}
        row["single_words_accuracy"] = round(evaluate(fn, tests["single-words"])[0], 4)
        row["word_pairs_accuracy"] = round(evaluate(fn, tests["word-pairs"])[0], 4)
        unknown = [(g, t) for g, t in report if g == "und"]
        row["bible_unknown_language_und_share"] = round(evaluate(fn, unknown)[0], 4)
        known = [(g, t) for g, t in report if g != "und"]
        row["bible_known_language_accuracy"] = round(evaluate(fn, known)[0], 4)
        row["random_letters_und_share"] = round(evaluate(fn, noise(seed="thresher-lang-noise-report"))[0], 4)
        results[name] = row
        print(f"  {name:26s} sentences {acc:.4f} ({rate:,.0f}/s, und {und:.3f}) words "
              f"{row['single_words_accuracy']} pairs {row['word_pairs_accuracy']} bible-unknown und "
              f"{row['bible_unknown_language_und_share']} bible-known {row['bible_known_language_accuracy']} "
              f"noise und {row['random_letters_und_share']}",
              flush=True)
    out = {
        "what": "thresher's zero-dependency n-gram language model (no lang extra) against the lang extra's "
                "cascade: lingua test split (134 sentences, single words and word pairs per language, 75 "
                "languages; accuracy counts und as wrong), odd-numbered Bible verses (unknown languages: "
                "share left und; known ones: accuracy); CPU time per detector after a warm-up",
        "model": {"version": model.version, "bytes": Path(args.out_model).stat().st_size,
                  "languages": sorted({c for g in model.groups for c in g.languages} | set(SCRIPT_LANGUAGE.values())
                                      & set(data["sentences"])),
                  "groups": {"+".join(g.scripts): {"languages": len(g.languages), "ngrams": len(g.vocabulary)}
                             for g in model.groups},
                  "temperature": model.temperature, "min_probability": model.min_probability,
                  "max_mean_cost": model.max_mean_cost,
                  "min_letters": model.min_letters},
        "n_sentences": len(tests["sentences"]),
        "detectors": results,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    Path(args.results).write_text(json.dumps(out, indent=1) + "\n")
    print("wrote", args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
