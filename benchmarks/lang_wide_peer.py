"""heliport (HPLT's detector, 220 languages with a confidence bound each, model in its wheel) alone,
and the cascade with the open-set gate followed by heliport for what the gate leaves `und`: the
figures a wide-coverage extra (issue 38) would start from. Not a shipped detector: the combination
is computed here from both detectors' answers.

heliport runs in the side venv `benchmarks/.venvs/heliport` (`python -m venv ...; pip install
heliport==1.0.1`), in its own process: CPU time per text after loading, the load's CPU time and the
process's peak RSS. Data as `lang_open_set.py`: the held-out (odd) Bible segments and lingua's test
sentences. heliport answers ISO 639-3 codes; they are compared with the Bible file's ISO 639-3 code
and with lingua's 639-3 code of the test language (a macrolanguage answer for an individual language,
`swa` for `swh`, counts as wrong). The cascade's answers are compared as in `lang_open_set.py`.

Usage: python benchmarks/lang_wide_peer.py [--out benchmarks/results/lang_wide_peer.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))

from lang_eval import load_split  # noqa: E402
from lang_open_set import ISO1, bible_segments, bible_split  # noqa: E402

SIDE_PYTHON = ROOT / ".venvs" / "heliport" / "bin" / "python"
RUNNER = """
import json, resource, sys, time
import heliport
t0 = time.process_time()
ident = heliport.Identifier()
load = time.process_time() - t0
texts = json.load(open(sys.argv[1], encoding="utf-8"))
t0 = time.process_time()
answers = [list(ident.identify_with_score(t)) for t in texts]
seconds = time.process_time() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
json.dump({"answers": answers, "load_cpu_s": load, "cpu_s": seconds, "peak_rss_mib": peak},
          open(sys.argv[2], "w", encoding="utf-8"))
"""


def heliport_answers(texts: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "texts.json", Path(tmp) / "answers.json"
        src.write_text(json.dumps(texts), encoding="utf-8")
        subprocess.run([str(SIDE_PYTHON), "-c", RUNNER, str(src), str(dst)], check=True)
        return json.loads(dst.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def figures(golds: list[tuple[str, str]], answers: list[tuple[str, str]]) -> dict:
    """golds: (language key, gold code); answers: (code, the gold code it is compared with)."""
    by_lang: dict[str, list[str]] = defaultdict(list)
    for (lang, _), (code, gold) in zip(golds, answers, strict=True):
        by_lang[lang].append("right" if code == gold else "und" if code == "und" else "wrong")
    flat = [v for vs in by_lang.values() for v in vs]
    n = len(flat)
    return {"n": n, **{k: round(flat.count(k) / n, 4) for k in ("right", "und", "wrong")},
            "languages": len(by_lang),
            "recognised": sum(vs.count("right") / len(vs) >= 0.5 for vs in by_lang.values()),
            "mostly_wrong": sum(vs.count("wrong") / len(vs) > 0.5 for vs in by_lang.values())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "lang_wide_peer.json"))
    args = ap.parse_args(argv)
    if not SIDE_PYTHON.exists():
        print(f"side venv missing: {SIDE_PYTHON} (python -m venv; pip install heliport==1.0.1)", file=sys.stderr)
        return 1
    from lingua import Language

    from thresher.lang.cascade import CascadeDetector

    segments = bible_split(bible_segments(), "report")
    gold3 = {s[0]: _iso1_to_3(s[0]) for s in segments}  # the Bible files' ISO 639-3 codes
    test, _ = load_split("sentences")
    lingua3 = {lang.iso_code_639_1.name.lower(): lang.iso_code_639_3.name.lower() for lang in Language.all()}
    texts = [s[1] for s in segments] + [t for _, t in test]
    heli = heliport_answers(texts)
    answers = [a[0] for a in heli["answers"]]
    cascade = CascadeDetector()
    ours = [cascade.detect(t).code for t in texts]
    nb = len(segments)
    bible_golds = [(s[0], s[0]) for s in segments]
    lingua_golds = [(g, g) for g, _ in test]
    results: dict = {"heliport": {"load_cpu_s": round(heli["load_cpu_s"], 2), "peak_rss_mib": heli["peak_rss_mib"],
                                  "texts_per_cpu_s": round(len(texts) / heli["cpu_s"])}}
    for name, pick in (("heliport", lambda i: (answers[i], "3")),
                       ("thresher+heliport", lambda i: (ours[i], "1") if ours[i] != "und" else (answers[i], "3"))):
        bible_rows = []
        for i, s in enumerate(segments):
            code, space = pick(i)
            bible_rows.append((code, gold3[s[0]] if space == "3" else s[0]))
        lingua_rows = []
        for j, (g, _) in enumerate(test):
            code, space = pick(nb + j)
            lingua_rows.append((code, lingua3.get(g, g) if space == "3" else g))
        results.setdefault(name, {}).update({"bible_report": figures(bible_golds, bible_rows),
                                             "lingua_test": figures(lingua_golds, lingua_rows)})
        print(f"  {name:18s} {results[name]}", flush=True)
    Path(args.out).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _iso1_to_3(code: str) -> str:
    return {v: k for k, v in ISO1.items()}.get(code, code)


if __name__ == "__main__":
    sys.exit(main())
