"""The wide-coverage detector (`--lang-detector wide`: the gated cascade, then heliport gated per
language) against heliport alone and the gated cascade: right / `und` / wrong, languages recognised,
texts per CPU second, peak memory per process.

Data as `lang_open_set.py`: the Bible verses of ../shared/data/language/bible-corpus in three-verse
segments, split by their index in their file (even: calibration, odd: held out), and lingua's test
sentences (the test split of `lang_eval.py`; its dev split is calibration). Codes are compared in
thresher's form (ISO 639-1 where one exists, else 639-3): heliport's 639-3 answers go through
`thresher.lang.wide.thresher_code`, so `swh` and the macrolanguage `swa` both read `sw`.

`--calibrate` first fits src/thresher/lang/wide.json (`thresher.lang.wide.fit_calibration`) from the
calibration splits only: for each calibration text the cascade leaves `und` (reason
`unknown_language`), heliport's best label and its margin over the second.

Each detector runs in its own process (`--worker`), so its load, CPU time (after loading) and peak
RSS are its own. Needs the wide extra (heliport) and the lang extra.

Usage: python benchmarks/lang_wide_peer.py [--calibrate] [--out benchmarks/results/lang_wide_peer.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(ROOT))

from lang_eval import load_split  # noqa: E402
from lang_open_set import bible_segments, bible_split  # noqa: E402

DETECTORS = ("heliport", "cascade", "wide")


def _detector(name: str):  # type: ignore[no-untyped-def]
    """text -> thresher code, for one detector (loaded here: the caller times it)."""
    from thresher.lang.detection import clean_text
    from thresher.lang.wide import thresher_code

    if name == "heliport":
        from thresher.lang.heliport_model import identifier

        ident = identifier()
        return lambda text: thresher_code(ident.identify(clean_text(text, 4096)))
    if name == "cascade":
        from thresher.lang.cascade import CascadeDetector

        cascade = CascadeDetector()
        return lambda text: cascade.detect(text).code
    from thresher.lang.wide import WideDetector

    wide = WideDetector()
    return lambda text: wide.detect(text).code


def worker(name: str, src: Path, dst: Path) -> None:
    texts = json.loads(src.read_text(encoding="utf-8"))
    t0 = time.process_time()
    detect = _detector(name)
    load = time.process_time() - t0
    t0 = time.process_time()
    codes = [detect(t) for t in texts]
    seconds = time.process_time() - t0
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a worker started by a parent that had
    # loaded heliport (--calibrate) would report the parent's peak
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    hwm = [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")]
    peak = int(hwm[0]) // 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    dst.write_text(json.dumps({"codes": codes, "load_cpu_s": load, "cpu_s": seconds, "peak_rss_mib": peak}),
                   encoding="utf-8")


def run_worker(name: str, texts: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "texts.json", Path(tmp) / "codes.json"
        src.write_text(json.dumps(texts), encoding="utf-8")
        subprocess.run([sys.executable, __file__, "--worker", name, str(src), str(dst)], check=True)
        return json.loads(dst.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def heliport_languages() -> set[str]:
    """The languages heliport can name, as thresher codes (read in a child process: ~880 MiB)."""
    code = ("import json, heliport; print(json.dumps(sorted(heliport.Identifier().get_confidence_all())))")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    from thresher.lang.wide import thresher_code

    return {thresher_code(label) for label in json.loads(done.stdout)}


def figures(golds: list[str], codes: list[str]) -> dict:
    by_lang: dict[str, list[str]] = defaultdict(list)
    for gold, code in zip(golds, codes, strict=True):
        by_lang[gold].append("right" if code == gold else "und" if code == "und" else "wrong")
    flat = [v for vs in by_lang.values() for v in vs]
    n = len(flat)
    return {"n": n, **{k: round(flat.count(k) / n, 4) for k in ("right", "und", "wrong")},
            "languages": len(by_lang),
            "recognised": sum(vs.count("right") / len(vs) >= 0.5 for vs in by_lang.values()),
            "recognised_languages": sorted(k for k, vs in by_lang.items() if vs.count("right") / len(vs) >= 0.5),
            "mostly_wrong": sum(vs.count("wrong") / len(vs) > 0.5 for vs in by_lang.values())}


def calibrate(out: Path, max_wrong_share: float) -> dict:
    """Fit wide.json on the calibration splits (module docstring)."""
    from thresher.lang.cascade import CascadeDetector
    from thresher.lang.detection import UNKNOWN_LANGUAGE, clean_text
    from thresher.lang.heliport_model import identifier
    from thresher.lang.wide import fit_calibration, heliport_margin, thresher_code

    _, dev = load_split("sentences")
    texts = [(s[0], s[1]) for s in bible_split(bible_segments(), "calibrate")] + dev
    cascade = CascadeDetector()
    ident = identifier()
    rows = []
    for gold, text in texts:
        if cascade.detect(text).reason != UNKNOWN_LANGUAGE:
            continue
        found = heliport_margin(ident, clean_text(text, 4096))
        if found is not None:
            rows.append((gold, thresher_code(found[0]), found[1]))
    cal = fit_calibration(rows, max_wrong_share)
    out.write_text(cal.to_json(), encoding="utf-8")
    right = sum(g == c for g, c, _ in rows)
    return {"texts": len(texts), "left_und_by_the_cascade": len(rows), "heliport_right_there": right,
            "languages_with_bounds": len(cal.min_margin), "default_min_margin": cal.default_min_margin}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        worker(argv[1], Path(argv[2]), Path(argv[3]))
        return 0
    if argv[:1] == ["--calibrate-only"]:
        print(json.dumps(calibrate(REPO / "src" / "thresher" / "lang" / "wide.json", float(argv[1]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibrate", action="store_true", help="refit src/thresher/lang/wide.json first")
    ap.add_argument("--max-wrong-share", type=float, default=None,
                    help="with --calibrate: the share of wrong answers a label's bound allows (default: the module's)")
    ap.add_argument("--out", default=str(ROOT / "results" / "lang_wide_peer.json"))
    args = ap.parse_args(argv)
    results: dict = {}
    if args.calibrate:
        # in its own process, so that this one never holds heliport's model
        from thresher.lang.wide import MAX_WRONG_SHARE

        share = MAX_WRONG_SHARE if args.max_wrong_share is None else args.max_wrong_share
        done = subprocess.run([sys.executable, __file__, "--calibrate-only", str(share)], check=True,
                              capture_output=True, text=True)
        results["calibration"] = json.loads(done.stdout.strip().splitlines()[-1])
        print("calibration", results["calibration"], flush=True)
    segments = bible_split(bible_segments(), "report")
    test, _ = load_split("sentences")
    covered = heliport_languages()
    results["heliport_covers"] = sorted({s[0] for s in segments} & covered)
    texts = [s[1] for s in segments] + [t for _, t in test]
    nb = len(segments)
    for name in DETECTORS:
        out = run_worker(name, texts)
        codes = out["codes"]
        bible = figures([s[0] for s in segments], codes[:nb])
        # the subset of languages heliport can name, and the rest (where any label is wrong)
        for part, keep in (("bible_heliport_covers", True), ("bible_outside_heliport", False)):
            rows = [(s[0], c) for s, c in zip(segments, codes[:nb], strict=True) if (s[0] in covered) == keep]
            sub = figures([g for g, _ in rows], [c for _, c in rows])
            del sub["recognised_languages"]
            bible[part] = sub
        lingua = figures([g for g, _ in test], codes[nb:])
        del lingua["recognised_languages"]
        results[name] = {"bible_report": bible, "lingua_test": lingua,
                         "load_cpu_s": round(out["load_cpu_s"], 2), "texts_per_cpu_s": round(len(texts) / out["cpu_s"]),
                         "peak_rss_mib": out["peak_rss_mib"]}
        print(f"  {name:9s} {results[name]['bible_report']} lingua {results[name]['lingua_test']['right']} "
              f"{results[name]['texts_per_cpu_s']}/CPU s {results[name]['peak_rss_mib']} MiB", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
