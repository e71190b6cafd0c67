"""Agreement of thresher's Gopher, C4 and FineWeb rules with datatrove's, rule by rule.

Builds the benchmark corpus (`quality_corpus.py`: real extracted pages and generated junk), runs
datatrove 0.10.1 in its side venv (`quality_peers.py agreement`, via subprocess), runs each thresher
rule alone with the same threshold, and counts the documents on which both say the same thing
(pass or fail). For the C4 line cleanup it compares the cleaned text itself.

Two thresher settings are compared: `datatrove-compatible` uses the options that reproduce
datatrove's definitions where thresher deliberately differs by default (alpha ratio over all
tokens, stop words in lowercase only, a top n-gram counted even when it occurs once), and `default`
is thresher as shipped. Differences are explained in docs/quality.md.

    python benchmarks/quality_agreement.py          # writes benchmarks/results/quality_agreement.json

Needs the side venv: python -m venv benchmarks/.venvs/datatrove &&
benchmarks/.venvs/datatrove/bin/pip install datatrove==0.10.1 websieve==0.1.2 nltk
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality_corpus import CORPUS, ROOT, build, load  # noqa: E402

from thresher.core import Document  # noqa: E402
from thresher.lang.script import detect_script  # noqa: E402
from thresher.quality.c4 import C4Config, C4LineFilter, C4Quality  # noqa: E402
from thresher.quality.fineweb import FineWebConfig, FineWebQuality  # noqa: E402
from thresher.quality.gopher import GopherQuality, GopherQualityConfig  # noqa: E402
from thresher.quality.repetition import GopherRepetition, GopherRepetitionConfig  # noqa: E402

SIDE_PYTHON = ROOT / "benchmarks" / ".venvs" / "datatrove" / "bin" / "python"
RESULTS = ROOT / "benchmarks" / "results" / "quality_agreement.json"
TARGET = 0.99


def only(cls: type, **enabled: object) -> object:
    off = {f.name: None for f in dataclasses.fields(cls)
           if isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
           and "None" in str(f.type) and f.name not in enabled}
    return cls(**off, **enabled)


def thresher_checks(compatible: bool) -> list[tuple[str, object]]:
    """(rule, function doc -> passes) for each rule compared."""
    alpha = "tokens" if compatible else "words"

    def ruleset(stage_cls, cfg_cls, **kw):  # noqa: ANN001, ANN003, ANN202
        rs = stage_cls(only(cfg_cls, **kw))
        return lambda d: not rs.check_all(d)

    def gopher(**kw):  # noqa: ANN003, ANN202
        return ruleset(GopherQuality, GopherQualityConfig, alpha_ratio_denominator=alpha,
                       stop_words_match_case=compatible, **kw)

    def rep(**kw):  # noqa: ANN003, ANN202
        return ruleset(GopherRepetition, GopherRepetitionConfig, min_top_ngram_count=1 if compatible else 2, **kw)

    def fw(**kw):  # noqa: ANN003, ANN202
        rs = FineWebQuality(only(FineWebConfig, **kw))
        return lambda d: not rs.check_all(d)

    def c4(punct: bool, **kw):  # noqa: ANN003, ANN202
        lines = C4LineFilter(C4Config(), require_terminal_punctuation=punct)
        doc_rules = C4Quality(only(C4Config, **kw)) if kw else None

        def run(d: Document) -> object:
            dropped = lines.transform(d) is not None
            if doc_rules is None:
                return d.text  # compared as text
            if dropped:  # nothing left: datatrove counts 0 sentences; lorem/curly find nothing
                return "min_sentences" not in kw
            return not doc_rules.check_all(d)

        return run

    g = GopherQualityConfig()
    out: list[tuple[str, object]] = [
        ("gopher.word_count", gopher(min_words=g.min_words, max_words=g.max_words)),
        ("gopher.mean_word_length", gopher(min_mean_word_length=3.0, max_mean_word_length=10.0)),
        ("gopher.hash_ratio", gopher(max_hash_ratio=0.1)),
        ("gopher.ellipsis_ratio", gopher(max_ellipsis_ratio=0.1)),
        ("gopher.bullet_line_ratio", gopher(max_bullet_line_ratio=0.9)),
        ("gopher.ellipsis_line_ratio", gopher(max_ellipsis_line_ratio=0.3)),
        ("gopher.alpha_word_ratio", gopher(min_alpha_word_ratio=0.8)),
        ("gopher.stop_word_count", gopher(min_stop_words=2)),
        ("repetition.duplicate_paragraph_fraction", rep(max_duplicate_paragraph_fraction=0.3)),
        ("repetition.duplicate_paragraph_char_fraction", rep(max_duplicate_paragraph_char_fraction=0.2)),
        ("repetition.duplicate_line_fraction", rep(max_duplicate_line_fraction=0.3)),
        ("repetition.duplicate_line_char_fraction", rep(max_duplicate_line_char_fraction=0.2)),
    ]
    r = GopherRepetitionConfig()
    for n in (2, 3, 4):
        name = f"max_top_{n}_gram_char_fraction"
        out.append((f"repetition.top_{n}_gram_char_fraction", rep(**{name: getattr(r, name)})))
    for n in range(5, 11):
        name = f"max_duplicate_{n}_gram_char_fraction"
        out.append((f"repetition.duplicate_{n}_gram_char_fraction", rep(**{name: getattr(r, name)})))
    for punct, tag in ((True, "c4"), (False, "fineweb")):
        out += [
            (f"c4[{tag}].lorem_ipsum", c4(punct, max_lorem_ipsum=0)),
            (f"c4[{tag}].curly_bracket", c4(punct, max_curly_brackets=0)),
            (f"c4[{tag}].sentence_count", c4(punct, min_sentences=5)),
            (f"c4[{tag}].lines", c4(punct)),
        ]

    def fw_rule(metric_kw: dict, metric: str):  # noqa: ANN202
        rs = FineWebQuality(only(FineWebConfig, **metric_kw))
        return lambda d: not rs.check_all(d)

    out += [
        ("fineweb.line_punct_ratio", fw_rule({"min_line_punct_ratio": 0.12}, "line_punct_ratio")),
        ("fineweb.short_line_ratio", fw_rule({"max_short_line_ratio": 0.67}, "short_line_ratio")),
        ("fineweb.duplicate_line_char_ratio", fw_rule({"max_duplicate_line_char_ratio": 0.01}, "dup")),
        ("fineweb.newline_ratio", fw_rule({"max_newline_ratio": 0.3}, "newline")),
    ]
    del fw
    return out


def run_side(corpus: Path) -> dict:
    out = ROOT / "benchmarks" / ".data" / "datatrove_agreement.json"
    if not SIDE_PYTHON.exists():
        sys.exit(f"side venv missing: {SIDE_PYTHON} (see this script's docstring)")
    subprocess.run(
        [str(SIDE_PYTHON), str(ROOT / "benchmarks" / "quality_peers.py"), "agreement", str(corpus), str(out)],
        check=True,
    )
    return json.loads(out.read_text())


def coinciding(text: str) -> bool:
    """Definitions coincide for text written with spaces between words. In Han, Japanese, Thai and
    the like, datatrove's English tokenizer takes a whole line for one word, where thresher counts
    characters (docs/quality.md)."""
    profile = detect_script(text)
    return profile.traits.space_delimited and not profile.has_character_words


def compare(docs: list[dict], peer: dict, compatible: bool) -> dict[str, dict]:
    results: dict[str, dict] = {}
    docs = [d for d in docs if coinciding(d["text"])]
    for name, check in thresher_checks(compatible):
        verdicts = peer[name]
        agree = total = excluded = 0
        only_peer: list[str] = []
        only_ours: list[str] = []
        fails_peer = fails_ours = 0
        for d in docs:
            v = verdicts.get(d["id"])
            if v is None or "error" in v:
                excluded += 1
                continue
            doc = Document(id=d["id"], text=d["text"], url=d.get("url"), annotations={"lang.code": "en"})
            ours = check(doc)
            if name.endswith(".lines"):
                theirs = v["text"]
                same = (ours or None) == (theirs or None)
                ours_fail, theirs_fail = False, False
            else:
                theirs_fail, ours_fail = not v["pass"], not ours
                same = theirs_fail == ours_fail
            total += 1
            fails_peer += theirs_fail
            fails_ours += ours_fail
            if same:
                agree += 1
            elif theirs_fail or (name.endswith(".lines") and len(only_peer) <= len(only_ours)):
                only_peer.append(d["id"])
            else:
                only_ours.append(d["id"])
        results[name] = {
            "documents": total,
            "excluded": excluded,
            "agreement": round(agree / total, 4) if total else None,
            "datatrove_fails": fails_peer,
            "thresher_fails": fails_ours,
            "disagreements": total - agree,
            "examples_datatrove_only": only_peer[:5],
            "examples_thresher_only": only_ours[:5],
        }
    return results


def main() -> int:
    t0 = time.time()
    docs = build() if not CORPUS.exists() or "--rebuild" in sys.argv else load()
    peer = run_side(CORPUS) if "--reuse-peer" not in sys.argv else json.loads(
        (ROOT / "benchmarks" / ".data" / "datatrove_agreement.json").read_text())
    report = {
        "what": "per-rule agreement (same pass/fail verdict) of thresher with datatrove 0.10.1",
        "corpus": {"documents": len(docs), "kinds": _kinds(docs),
                   "compared": sum(coinciding(d["text"]) for d in docs),
                   "left_out": "documents in scripts without spaces between words (definitions differ by design)"},
        "target": TARGET,
        "datatrove_compatible": compare(docs, peer, True),
        "default": compare(docs, peer, False),
        "seconds": round(time.time() - t0, 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    width = max(map(len, report["default"]))
    print(f"{'rule':<{width}}  compatible  default  (dt fails / ours)")
    for name in report["default"]:
        a, b = report["datatrove_compatible"][name], report["default"][name]
        print(f"{name:<{width}}  {a['agreement']!s:>10}  {b['agreement']!s:>7}  "
              f"({a['datatrove_fails']}/{a['thresher_fails']}, {b['thresher_fails']})")
    return 0


def _kinds(docs: list[dict]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for d in docs:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    return kinds


if __name__ == "__main__":
    sys.exit(main())
