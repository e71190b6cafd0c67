"""Language identification on text in languages the detector may not know: right, `und` or wrong.

Data: the Bible verses of ../shared/data/language/bible-corpus (CC0; 45 files, 44 languages, most of
them outside what CLD2 and lingua know), three consecutive verses per segment (7,119 segments, as in
issue 38), and lingua's test sentences (../shared/data/language/lingua, the test split of
`lang_eval.py`: 134 per language, 75 languages).

A segment is *right* when the label is its language (ISO 639-1 where one exists, else 639-3), `und`
when the detector abstains, and *wrong* otherwise: for a language the detector does not know, any
label is wrong and `und` is the right behaviour. Segments are split by their index within each file:
even segments form the calibration split (`calibrate`, what `calibrate_open_set` may look at), odd
ones the held-out split (`report`) whose figures the docs quote. A language is *recognised* when at
least half of its segments are right, and *mostly given a wrong label* when more than half are
wrong. The subset a detector *covers* is the segments whose language it can name.

`--calibrate` first rewrites the open-set gate's bounds (src/thresher/lang/open_set.json) from the
calibration splits only: the even Bible segments and lingua's dev sentences (`calibrate_open_set`).

Usage: python benchmarks/lang_open_set.py [--calibrate] [--detectors thresher,cld2,...] [--label after]
       [--out benchmarks/results/lang_open_set.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
BIBLE = REPO.parent / "shared" / "data" / "language" / "bible-corpus"
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(ROOT))

from lang_eval import LINGUA, load_split  # noqa: E402

VERSES_PER_SEGMENT = 3
# ISO 639-3 -> ISO 639-1 for the Bible files whose language has one (the form detection writes)
ISO1 = {"hye": "hy", "eus": "eu", "est": "et", "guj": "gu", "lav": "lv", "swh": "sw", "ukr": "uk", "zul": "zu",
        "ewe": "ee", "glv": "gv", "wol": "wo", "que": "qu", "cha": "ch", "oji": "oj"}

Segment = tuple[str, str, str, int]  # (gold code, text, script by languages.tsv, segment index in its file)


def bible_segments() -> list[Segment]:
    """Every file's verses in consecutive groups of three (a trailing group of one or two is dropped)."""
    out: list[Segment] = []
    with open(BIBLE / "languages.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            lines = (BIBLE / row["file"]).read_text(encoding="utf-8").splitlines()
            verses = [x.strip() for x in lines if x.strip()]
            gold = ISO1.get(row["iso639_3"], row["iso639_3"])
            for k, i in enumerate(range(0, len(verses) - VERSES_PER_SEGMENT + 1, VERSES_PER_SEGMENT)):
                out.append((gold, " ".join(verses[i:i + VERSES_PER_SEGMENT]), row["script"], k))
    return out


def bible_split(segments: list[Segment], part: str) -> list[Segment]:
    if part == "all":
        return segments
    parity = 0 if part == "calibrate" else 1
    return [s for s in segments if s[3] % 2 == parity]


# -- detectors: text -> (code, script) -------------------------------------------------------------

def _cld2_known() -> set[str]:
    import pycld2  # type: ignore[import-untyped]

    from thresher.lang.codes import from_cld2

    names = dict(pycld2.LANGUAGES)
    return {from_cld2(names[n]) for n in pycld2.DETECTED_LANGUAGES if n in names} - {"und"}


def make_detectors(names: list[str]) -> dict[str, tuple[Callable[[str], tuple[str, str]], set[str]]]:
    """name -> (detect, the codes it can answer)."""
    from thresher.lang.codes import SCRIPT_LANGUAGE

    out: dict[str, tuple[Callable[[str], tuple[str, str]], set[str]]] = {}
    for name in names:
        if name == "thresher":
            from thresher.lang.cascade import SCRIPT_DECIDES, CascadeDetector, lingua_languages

            cascade = CascadeDetector()

            def cascade_fn(text: str, det: CascadeDetector = cascade) -> tuple[str, str]:
                d = det.detect(text)
                return d.code, d.script

            out[name] = (cascade_fn, _cld2_known() | set(lingua_languages()) | set(SCRIPT_DECIDES))
        elif name == "thresher-ungated":  # the cascade without the open-set gate (before issue 38)
            from thresher.lang.cascade import SCRIPT_DECIDES, CascadeDetector, CascadePolicy, lingua_languages

            ungated = CascadeDetector(policy=CascadePolicy(open_set=False))

            def ungated_fn(text: str, det: CascadeDetector = ungated) -> tuple[str, str]:
                d = det.detect(text)
                return d.code, d.script

            out[name] = (ungated_fn, _cld2_known() | set(lingua_languages()) | set(SCRIPT_DECIDES))
        elif name == "thresher-ngram":
            from thresher.lang.ngram import NgramDetector

            ngram = NgramDetector()

            def ngram_fn(text: str, det: NgramDetector = ngram) -> tuple[str, str]:
                d = det.detect(text)
                return d.code, d.script

            known = {c for g in ngram.model.groups for c in g.languages} | set(SCRIPT_LANGUAGE.values())
            out[name] = (ngram_fn, known)
        elif name == "cld2":
            import pycld2

            from thresher.lang.codes import from_cld2

            def cld2_fn(text: str) -> tuple[str, str]:
                try:
                    return from_cld2(pycld2.detect(text, bestEffort=True)[2][0][1]), ""
                except pycld2.error:
                    return "und", ""

            out[name] = (cld2_fn, _cld2_known())
        elif name in ("lingua-low", "lingua-high"):
            from lingua import LanguageDetectorBuilder

            builder = LanguageDetectorBuilder.from_all_languages()
            if name == "lingua-low":
                builder = builder.with_low_accuracy_mode()
            lingua = builder.build()

            def lingua_fn(text: str, det: object = lingua) -> tuple[str, str]:
                lang = det.detect_language_of(text)  # type: ignore[attr-defined]
                return (lang.iso_code_639_1.name.lower() if lang else "und"), ""

            from thresher.lang.cascade import lingua_languages

            out[name] = (lingua_fn, set(lingua_languages()))
        else:
            raise SystemExit(f"unknown detector {name!r}")
    return out


# -- measures --------------------------------------------------------------------------------------

def _shares(rows: list[tuple[str, str]]) -> dict[str, float | int]:
    n = len(rows)
    right = sum(p == g for g, p in rows)
    und = sum(p == "und" and g != "und" for g, p in rows)
    return {"n": n, "right": round(right / n, 4) if n else 0.0, "und": round(und / n, 4) if n else 0.0,
            "wrong": round((n - right - und) / n, 4) if n else 0.0}


def open_set_figures(segments: list[Segment], preds: list[tuple[str, str]], known: set[str]) -> dict:
    """right / und / wrong shares overall, on the covered and uncovered subsets, and per language."""
    rows = [(s[0], p[0]) for s, p in zip(segments, preds, strict=True)]
    by_lang: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for g, p in rows:
        by_lang[g].append((g, p))
    per_language = {}
    recognised = mostly_wrong = 0
    for g in sorted(by_lang):
        s = _shares(by_lang[g])
        recognised += s["right"] >= 0.5
        mostly_wrong += s["wrong"] > 0.5
        labels = Counter(p for _, p in by_lang[g]).most_common(3)
        per_language[g] = {**s, "covered": g in known, "labels": [[c, n] for c, n in labels]}
    und_scripts = Counter(p[1] or s[2] for s, p in zip(segments, preds, strict=True) if p[0] == "und")
    covered = [(g, p) for g, p in rows if g in known]
    uncovered = [(g, p) for g, p in rows if g not in known]
    return {
        **_shares(rows),
        "languages": len(by_lang),
        "recognised": recognised,
        "mostly_wrong": mostly_wrong,
        "covered": {**_shares(covered), "languages": sum(g in known for g in by_lang)},
        "uncovered": {**_shares(uncovered), "languages": sum(g not in known for g in by_lang)},
        "und_scripts": dict(und_scripts.most_common()),
        "per_language": per_language,
    }


def run(names: list[str], parts: list[str]) -> dict:
    segments = bible_segments()
    test, _ = load_split("sentences")
    detectors = make_detectors(names)
    results: dict = {"n_segments": len(segments), "n_sentences": len(test), "detectors": {}}
    for name, (fn, known) in detectors.items():
        for _, text in test[:300]:  # warm-up: model loading is not counted
            fn(text)
        row: dict = {"known_languages": len(known)}
        for part in parts:
            data = bible_split(segments, part)
            t0 = time.process_time()
            preds = [fn(s[1]) for s in data]
            elapsed = time.process_time() - t0
            figures = open_set_figures(data, preds, known)
            if part != "report":  # per language only on the held-out split the docs quote
                figures.pop("per_language")
            row[f"bible_{part}"] = {**figures, "segments_per_cpu_s": round(len(data) / elapsed) if elapsed else None}
        t0 = time.process_time()
        sentence_preds = [fn(text)[0] for _, text in test]
        elapsed = time.process_time() - t0
        lingua_rows = [(g, "zh" if p in ("zh-cn", "zh-tw") else p) for (g, _), p in zip(test, sentence_preds,
                                                                                        strict=True)]
        shares = _shares(lingua_rows)
        row["lingua_test"] = {"accuracy": shares["right"], "und": shares["und"], "wrong": shares["wrong"],
                              "n": shares["n"], "sentences_per_cpu_s": round(len(test) / elapsed) if elapsed else None}
        results["detectors"][name] = row
        brief = {p: {k: row[f"bible_{p}"][k] for k in ("right", "und", "wrong", "recognised", "mostly_wrong")}
                 for p in parts}
        print(f"  {name:16s} {json.dumps(brief)} lingua {row['lingua_test']}", flush=True)
    return results


# -- calibration of the open-set gate (thresher.lang.open_set) --------------------------------------

MIN_POSITIVES = 20  # calibration texts a language needs for a bound of its own
# CLD2 scores at which a language of the n-gram model is kept unchecked; finite, so that most texts
# cost no n-gram scoring (~78% of lingua's dev sentences score 700 or more)
TRUST_GRID = (500.0, 700.0, 1000.0)
SLACK_GRID = (0.0, 0.5, 1.0, 2.0)
DEFAULT_GRID = (400.0, 700.0, 1025.0, 2000.0)
MARGIN_GRID = (0.0, 0.5, 1.0, 2.0)


def _recorded(texts: list[str]) -> list[tuple[object, str, int]]:
    """What the gate sees for each text, from the cascade with the gate recording, not judging."""
    from thresher.lang.cascade import CascadeDetector
    from thresher.lang.detection import Detection
    from thresher.lang.open_set import OpenSetGate

    seen: list[tuple[object, str, int]] = []

    class Recorder(OpenSetGate):
        def judge(self, detection: Detection, text: str, cld2_score: int) -> Detection:
            seen.append((detection, text, cld2_score))
            return detection

    detector = CascadeDetector()
    detector._gate = Recorder()
    out: list[tuple[object, str, int]] = []
    for text in texts:
        seen.clear()
        d = detector.detect(text)
        out.append(seen[0] if seen else (d, text, -1))
    return out


def calibrate_open_set(out_path: Path) -> dict:
    """Bounds from the calibration splits only (even Bible segments, lingua's dev sentences).

    Each language's bound is the highest mean n-gram cost (or lowest CLD2 score) among its texts the
    cascade named right, plus a shared slack. The calibration texts are halved: bounds from one half,
    then the shared settings (slack, trust, default, margin) chosen on the other half, as the fewest
    wrong labels on its Bible segments among the settings that keep its lingua dev accuracy at least
    as high as without the gate, ties going to the setting that changes fewest answers (bounds taken
    from the texts they are judged on would always pass those texts). The shipped bounds are then
    taken from both halves with the chosen settings."""
    from thresher.lang.ngram import NgramDetector
    from thresher.lang.open_set import SCRIPT_NAMES, OpenSetCalibration, OpenSetGate

    bible = [(s[0], s[1], s[3]) for s in bible_split(bible_segments(), "calibrate")]
    _, dev = load_split("sentences")
    texts = {"bible": [(g, t) for g, t, _ in bible], "dev": dev}
    recorded = {k: _recorded([t for _, t in v]) for k, v in texts.items()}
    # the halves: every other calibration segment of each file, every other dev sentence
    half_of = {"bible": [(k // 2) % 2 for _, _, k in bible], "dev": [i % 2 for i in range(len(dev))]}
    ngram = NgramDetector()
    probe = OpenSetGate(OpenSetCalibration(max_mean_cost={}, min_cld2_score={}, default_min_cld2_score=0.0,
                                           trust_cld2_score=0.0, min_margin=0.0, model_version=ngram.version),
                        ngram)
    costs_memo: dict[tuple[str, str], dict[str, float] | None] = {}

    def mean_costs(text: str, script: str) -> dict[str, float] | None:
        key = (text, script)
        if key not in costs_memo:
            costs_memo[key] = OpenSetGate._mean_costs(probe, text, script)
        return costs_memo[key]

    model_languages = {c for g in ngram.model.groups for c in g.languages}

    def bounds(halves: set[int], slack: float) -> tuple[dict[str, float], dict[str, float]]:
        by_cost: dict[str, list[float]] = defaultdict(list)
        by_score: dict[str, list[int]] = defaultdict(list)
        for key, rows in texts.items():
            for (gold, _), (d, text, score), h in zip(rows, recorded[key], half_of[key], strict=True):
                if h not in halves or score < 0 or d.code != gold:  # type: ignore[attr-defined]
                    continue
                if gold in SCRIPT_NAMES:  # never checked: the script names them
                    continue
                costs = mean_costs(text, d.script)  # type: ignore[attr-defined]
                if costs and gold in costs:
                    by_cost[gold].append(costs[gold])
                elif gold not in model_languages or not costs or len(costs) < 2:
                    # outside the n-gram model, or alone in its script group (Bengali): CLD2's score
                    by_score[gold].append(score)
        return ({c: round(max(v) + slack, 4) for c, v in sorted(by_cost.items()) if len(v) >= MIN_POSITIVES // 2},
                {c: float(min(v)) for c, v in sorted(by_score.items()) if len(v) >= MIN_POSITIVES // 2})

    class Memo(OpenSetGate):
        def _mean_costs(self, text: str, script: str) -> dict[str, float] | None:
            return mean_costs(text, script)

    def shares(gate: OpenSetGate | None, key: str, half: int) -> tuple[float, float, int]:
        """(right share, wrong share, answers the gate changed) on one half."""
        right = wrong = n = changed = 0
        for (gold, _), (d, text, score), h in zip(texts[key], recorded[key], half_of[key], strict=True):
            if h != half:
                continue
            if gate is not None and score >= 0:
                judged = gate.judge(d, text, score)  # type: ignore[arg-type]
                changed += judged.code != d.code  # type: ignore[attr-defined]
                d = judged
            code = d.code  # type: ignore[attr-defined]
            n += 1
            right += code == gold
            wrong += code not in (gold, "und")
        return right / n, wrong / n, changed

    dev_floor = shares(None, "dev", 1)[0]
    grid = []
    for slack in SLACK_GRID:
        by_cost, by_score = bounds({0}, slack)
        for trust in TRUST_GRID:
            for default in DEFAULT_GRID:
                for margin in MARGIN_GRID:
                    cal = OpenSetCalibration(max_mean_cost=by_cost, min_cld2_score=by_score,
                                             default_min_cld2_score=default, trust_cld2_score=trust,
                                             min_margin=margin, model_version=ngram.version)
                    gate = Memo(cal, ngram)
                    dev_acc, _, dev_changed = shares(gate, "dev", 1)
                    bible_right, bible_wrong, bible_changed = shares(gate, "bible", 1)
                    grid.append({"slack": slack, "trust_cld2_score": trust, "default_min_cld2_score": default,
                                 "min_margin": margin, "dev_accuracy": round(dev_acc, 4),
                                 "bible_right": round(bible_right, 4), "bible_wrong": round(bible_wrong, 4),
                                 "changed": dev_changed + bible_changed})
    eligible = [g for g in grid if g["dev_accuracy"] >= dev_floor] or grid
    # the fewest wrong labels; among equals, the setting that overrules the cascade least often
    best = min(eligible, key=lambda g: (g["bible_wrong"], g["changed"]))
    by_cost, by_score = bounds({0, 1}, best["slack"])
    chosen = OpenSetCalibration(max_mean_cost=by_cost, min_cld2_score=by_score,
                                default_min_cld2_score=best["default_min_cld2_score"],
                                trust_cld2_score=best["trust_cld2_score"], min_margin=best["min_margin"],
                                model_version=ngram.version)
    out_path.write_text(chosen.to_json(), encoding="utf-8")
    print(f"  calibration: {best} (dev accuracy without the gate {dev_floor:.4f}) -> {out_path}", flush=True)
    return {"split": "calibrate (even Bible segments) + lingua dev sentences, halved: bounds from one half, "
                     "settings chosen on the other", "n_bible": len(bible), "n_dev": len(dev),
            "dev_accuracy_ungated_selection_half": round(dev_floor, 4), "chosen": best,
            "languages_by_cost": len(by_cost), "languages_by_cld2_score": sorted(by_score), "grid": grid}

def stage_cost(rounds: int = 3) -> dict:
    """CPU seconds of the language stage (prose selection, cascade) over the 1,301 real pages of
    ../shared/data/extraction as the default extractor gives them, with the gate and without,
    interleaved rounds after a warm-up; and how many documents had their n-gram costs read."""
    from lang_eval import _pages

    from thresher.core.document import Document
    from thresher.extract.config import ExtractConfig
    from thresher.extract.registry import get_extractor
    from thresher.lang import open_set
    from thresher.lang.cascade import CascadeDetector, CascadePolicy
    from thresher.lang.config import LangConfig
    from thresher.lang.stage import LanguageAnnotator

    extractor = get_extractor(ExtractConfig())
    texts = []
    for _, page in _pages():
        try:
            text = extractor.extract(page).text
        except Exception:  # a page the extractor refuses is not a language case
            continue
        if text.strip():
            texts.append(text)
    gated = LanguageAnnotator(LangConfig(detector="cascade"))
    ungated = LanguageAnnotator(LangConfig(detector="cascade"))
    ungated.detector = CascadeDetector(policy=CascadePolicy(open_set=False))
    reads = Counter()
    original = open_set.OpenSetGate._mean_costs

    def counted(self: open_set.OpenSetGate, text: str, script: str) -> dict[str, float] | None:
        reads["n"] += 1
        return original(self, text, script)

    open_set.OpenSetGate._mean_costs = counted  # type: ignore[method-assign]
    try:
        for annotator in (gated, ungated):
            for text in texts[:200]:
                annotator.annotate(Document(id="x", text=text))
        reads.clear()
        seconds: dict[str, list[float]] = {"with_gate": [], "without_gate": []}
        codes: dict[str, list[str]] = {}
        for _ in range(rounds):
            for name, annotator in (("without_gate", ungated), ("with_gate", gated)):
                docs = [Document(id="x", text=t) for t in texts]
                t0 = time.process_time()
                for doc in docs:
                    annotator.annotate(doc)
                seconds[name].append(round(time.process_time() - t0, 4))
                codes[name] = [d.annotations["lang.code"] for d in docs]
    finally:
        open_set.OpenSetGate._mean_costs = original  # type: ignore[method-assign]
    changed = Counter(f"{a}->{b}" for a, b in zip(codes["without_gate"], codes["with_gate"], strict=True) if a != b)
    return {"documents": len(texts), "cpu_s": seconds, "ngram_reads_per_round": reads["n"] / rounds,
            "changed": dict(changed)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--detectors", default="thresher,thresher-ngram,cld2,lingua-low")
    ap.add_argument("--parts", default="all,calibrate,report", help="Bible splits: all, calibrate, report")
    ap.add_argument("--label", default="current", help="the key the results are stored under (e.g. before, after)")
    ap.add_argument("--out", default=str(ROOT / "results" / "lang_open_set.json"))
    ap.add_argument("--stage-cost", action="store_true", help="also time the language stage on real pages")
    ap.add_argument("--calibrate", action="store_true",
                    help="first rewrite src/thresher/lang/open_set.json from the calibration splits")
    args = ap.parse_args(argv)
    if not BIBLE.is_dir() or not LINGUA.is_dir():
        print(f"language data not found under {BIBLE.parent}", file=sys.stderr)
        return 1
    out_path = Path(args.out)
    results = json.loads(out_path.read_text()) if out_path.exists() else {}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    if args.calibrate:
        results["calibration"] = calibrate_open_set(REPO / "src" / "thresher" / "lang" / "open_set.json")
        from thresher.lang import open_set

        open_set._shipped.clear()
    if args.stage_cost:
        results["stage_cost"] = stage_cost()
        print(f"  stage cost: {results['stage_cost']}", flush=True)
    results[args.label] = run(args.detectors.split(","), args.parts.split(","))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
