"""Agreement of thresher's `fineweb2` rule set with datatrove 0.10.1's filters as FineWeb-2 runs them.

Corpus (real text, nobody on this project wrote it): the lingua test sentences of the 74 languages
that have a FineWeb-2 config (English has none) and the Bible verses of the 45 languages of
../shared/data/language/bible-corpus that have one, joined into documents of 3 to 60 sentences,
1 to 8 to a line; a seeded share of them damaged the ways web pages are (repeated lines, lines
without final punctuation, bullet lists, one-word menu lines, hashtags, ellipsis teasers), with the
amount spread so that each rule is tested near its bound.

datatrove side (its side venv, via subprocess): FineWeb-2's pipeline arguments, thresholds read with
PyYAML from the published configs, the pair's own word tokenizer (`language=<pair>`); each rule is
run alone (every other bound off) and the three filters as a chain. thresher side: the
`quality.fineweb2` rule set on the same text, `lang.code`/`lang.script` set to the pair (lingua
files are named by ISO 639-1 code, so their pair goes through thresher's code mapping).
Languages whose datatrove tokenizer is not installed in the side venv are reported and skipped.

    python benchmarks/fineweb2_agreement.py         # writes benchmarks/results/fineweb2_agreement.json
    python benchmarks/fineweb2_agreement.py --fixture   # also rewrites the unit test's fixture
    python benchmarks/fineweb2_agreement.py --docs 40   # documents per source and language (default 200)

200 documents per pair measure a pair's agreement to 0.5% (one disagreement is 99.5%), so a pair
below 99% has at least three; with 40 a single document decided 97.5%. Every rule and pair below 99%
is listed in the results with its disagreeing documents (id, both decisions, the text's start), and
`benchmarks/.data/fineweb2_disagreements.jsonl` keeps their whole texts for reading.

Side venv: python -m venv benchmarks/.venvs/datatrove && benchmarks/.venvs/datatrove/bin/pip install
datatrove==0.10.1 spacy nltk pyyaml jieba pythainlp pyvi indic-nlp-library kiwipiepy sudachipy sudachidict_core
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

SHARED = ROOT.parent / "shared" / "data"
CONFIGS = SHARED / "fineweb2" / "configs"
LINGUA = SHARED / "language" / "lingua" / "sentences"
BIBLE = SHARED / "language" / "bible-corpus"
SIDE_PYTHON = ROOT / "benchmarks" / ".venvs" / "datatrove" / "bin" / "python"
DATA = ROOT / "benchmarks" / ".data"
RESULTS = ROOT / "benchmarks" / "results" / "fineweb2_agreement.json"
FIXTURE = ROOT / "tests" / "unit" / "quality" / "data" / "fineweb2_datatrove_decisions.json"
TARGET = 0.99
DOCS_PER_LANGUAGE = 200
SEED = 20261205

SCRIPT_NAMES = {"Latin": "Latn", "Cyrillic": "Cyrl", "Arabic": "Arab", "Armenian": "Armn", "Cherokee": "Cher",
                "Coptic": "Copt", "Ethiopic": "Ethi", "Gujarati": "Gujr", "Syriac": "Syrc",
                "Aboriginal Syllabics": "Cans"}

RULES = ["rep_dup_line", *(f"rep_top_{n}" for n in (2, 3, 4)), *(f"rep_dup_{n}" for n in range(5, 11)),
         "fw_punct", "fw_char_dup", "fw_newline", "gq_words", "gq_avg_len", "gq_symbols", "gq_bullets",
         "gq_end_ellipsis", "gq_alpha", "gq_stop_words"]

# thresher's Drop reasons -> the rule ids above
REASONS = {
    "duplicate_lines": "rep_dup_line", "too_few_punctuated_lines": "fw_punct", "duplicate_line_chars": "fw_char_dup",
    "too_many_newlines": "fw_newline", "too_few_words": "gq_words", "too_many_words": "gq_words",
    "mean_word_too_short": "gq_avg_len", "mean_word_too_long": "gq_avg_len", "too_many_hashes": "gq_symbols",
    "too_many_ellipses": "gq_symbols", "too_many_bullet_lines": "gq_bullets",
    "too_many_ellipsis_lines": "gq_end_ellipsis", "too_few_alphabetic_words": "gq_alpha",
    "too_few_stop_words": "gq_stop_words",
    **{f"top_{n}_gram_too_frequent": f"rep_top_{n}" for n in (2, 3, 4)},
    **{f"duplicate_{n}_grams": f"rep_dup_{n}" for n in range(5, 11)},
}


# -- corpus ------------------------------------------------------------------------------------


def _damage(lines: list[str], rng: random.Random, joiner: str) -> tuple[str, list[str]]:
    kind = rng.choice(["none", "none", "repeat", "unpunctuated", "bullets", "menu", "hashtags", "ellipsis",
                       "short_lines"])
    share = rng.uniform(0.0, 0.8)
    out = list(lines)
    if kind == "repeat" and out:
        for _ in range(max(1, int(len(out) * share))):
            out.insert(rng.randrange(len(out) + 1), rng.choice(lines))
    elif kind == "unpunctuated":
        out = [ln.rstrip(".!?。।؟") if rng.random() < share else ln for ln in out]
    elif kind == "bullets":
        out = [("- " if rng.random() < 0.5 else "• ") + ln if rng.random() < share + 0.2 else ln for ln in out]
    elif kind == "menu":
        words = joiner.join(lines).split() or ["x"]
        for _ in range(int(len(out) * share * 4) + 1):
            out.insert(rng.randrange(len(out) + 1), " ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))))
    elif kind == "hashtags":
        out = [ln + " #" + " #".join(ln.split()[:rng.randint(1, 4)]) if rng.random() < share else ln for ln in out]
    elif kind == "ellipsis":
        out = [ln[: max(1, len(ln) // 2)] + rng.choice(["...", "…"]) if rng.random() < share else ln for ln in out]
    elif kind == "short_lines":
        out = [w for ln in out for w in (ln.split() if rng.random() < share else [ln])]
    return kind, out


def _documents(sentences: list[str], name: str, joiner: str, count: int) -> list[tuple[str, str]]:
    rng = random.Random(f"{SEED}-{name}")
    docs = []
    for _ in range(count):
        n = rng.choice([3, 5, 8, 12, 16, 20, 30, 45, 60])
        start = rng.randrange(max(1, len(sentences) - n))
        chosen = sentences[start:start + n]
        per_line = rng.choice([1, 1, 2, 3, 4, 8])
        lines = [joiner.join(chosen[i:i + per_line]) for i in range(0, len(chosen), per_line)]
        kind, lines = _damage(lines, rng, joiner)
        sep = "\n\n" if rng.random() < 0.2 else "\n"
        docs.append((kind, sep.join(lines)))
    return docs


def corpus(per_language: int = DOCS_PER_LANGUAGE) -> list[dict]:
    from thresher.quality.fineweb2_codes import config_key
    from thresher.quality.fineweb2_table import load_table
    from thresher.quality.text import TextAnalysis

    pairs = load_table(None).pairs
    out: list[dict] = []
    sources: list[tuple[str, str, str, str, list[str]]] = []  # (source, code, script, key, sentences)
    for path in sorted(LINGUA.glob("*.txt")):
        sentences = [s.strip() for s in path.read_text(encoding="utf-8").splitlines() if s.strip()]
        random.Random(path.stem).shuffle(sentences)
        script = TextAnalysis(" ".join(sentences[:50])).script.code
        key = config_key(path.stem, script, pairs)
        if key:
            sources.append(("lingua", path.stem, script, key, sentences))
    for row in (BIBLE / "languages.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        file, code3, _, script_name, _ = row.split("\t")
        script = SCRIPT_NAMES.get(script_name, "")
        key = f"{code3}_{script}"
        if key in pairs:
            sentences = [s.strip() for s in (BIBLE / file).read_text(encoding="utf-8").splitlines() if s.strip()]
            sources.append(("bible", code3, script, key, sentences))
    seen: Counter[str] = Counter()
    for source, code, script, key, sentences in sources:
        joiner = "" if not TextAnalysis(" ".join(sentences[:50])).traits.space_delimited else " "
        # two translations of one language (K'iche' has two files) get distinct names, so ids stay unique
        seen[f"{source}-{code}"] += 1
        name = f"{source}-{code}" + (f".{seen[f'{source}-{code}']}" if seen[f"{source}-{code}"] > 1 else "")
        for i, (kind, text) in enumerate(_documents(sentences, name, joiner, per_language)):
            out.append({"id": f"{name}-{i}", "source": source, "code": code, "script": script, "key": key,
                        "damage": kind, "text": text})
    assert len({d["id"] for d in out}) == len(out), "document ids must be unique"

    return out


# -- thresher side -----------------------------------------------------------------------------


def thresher_decisions(docs: list[dict]) -> tuple[dict[str, dict], float]:
    from thresher.core import Document
    from thresher.quality.fineweb2 import Fineweb2Quality

    stage = Fineweb2Quality()
    out: dict[str, dict] = {}
    t0 = time.process_time()
    for d in docs:
        doc = Document(id=d["id"], text=d["text"], annotations={"lang.code": d["code"], "lang.script": d["script"]})
        ev = stage.evaluate(doc)
        out[d["id"]] = {"config": ev.annotations["quality.fineweb2.config"],
                        "drops": [dr.reason for dr in ev.drops]}
    return out, time.process_time() - t0


def rule_failures(drops: list[str]) -> set[str]:
    failed = {REASONS[r] for r in drops if r in REASONS}
    if "no_text" in drops:  # datatrove's repetition and FineWeb filters fail an empty text
        failed |= {r for r in RULES if r.startswith(("rep_", "fw_"))}
    return failed


# -- datatrove side (runs in the side venv) ----------------------------------------------------


def datatrove_worker(src: Path, dst: Path) -> None:
    import yaml
    from datatrove.data import Document
    from datatrove.pipeline.filters import FineWebQualityFilter, GopherQualityFilter, GopherRepetitionFilter
    from datatrove.utils.word_tokenizers import load_word_tokenizer

    off_rep = {"dup_para_frac": 0, "dup_line_char_frac": 0, "dup_para_char_frac": 0, "dup_line_frac": 0,
               "top_n_grams": (), "dup_n_grams": ()}
    off_fw = {"short_line_thr": 999, "line_punct_thr": 0, "char_duplicates_ratio": 1e9, "new_line_ratio": 1e9}
    off_gq = {"min_doc_words": None, "max_doc_words": None, "min_avg_word_length": None, "max_avg_word_length": None,
              "max_symbol_word_ratio": None, "max_bullet_lines_ratio": None, "max_ellipsis_lines_ratio": None,
              "max_non_alpha_words_ratio": None, "min_stop_words": None}

    def filters(key: str) -> dict[str, object]:
        c = yaml.safe_load((CONFIGS / f"{key}.yml").read_text(encoding="utf-8"))
        top, dup = dict(c["top_n_grams"]), dict(c["dup_n_grams"])
        rep = lambda **kw: GopherRepetitionFilter(language=key, **{**off_rep, **kw})  # noqa: E731
        fw = lambda **kw: FineWebQualityFilter(language=key, **{**off_fw, **kw})  # noqa: E731
        gq = lambda **kw: GopherQualityFilter(language=key, stop_words=c["stopwords"], **{**off_gq, **kw})  # noqa: E731
        single = {
            "rep_dup_line": rep(dup_line_frac=c["dup_line_frac"]),
            **{f"rep_top_{n}": rep(top_n_grams=((n, top[n]),)) for n in (2, 3, 4)},
            **{f"rep_dup_{n}": rep(dup_n_grams=((n, dup[n]),)) for n in range(5, 11)},
            "fw_punct": fw(line_punct_thr=c["line_punct_thr"]),
            "fw_char_dup": fw(char_duplicates_ratio=0.1),
            "fw_newline": fw(new_line_ratio=c["new_line_ratio"]),
            "gq_words": gq(min_doc_words=50, max_doc_words=100000),
            "gq_avg_len": gq(min_avg_word_length=c["min_avg_word_length"],
                             max_avg_word_length=c["max_avg_word_length"]),
            "gq_symbols": gq(max_symbol_word_ratio=0.1),
            "gq_bullets": gq(max_bullet_lines_ratio=0.9),
            "gq_end_ellipsis": gq(max_ellipsis_lines_ratio=0.3),
            "gq_alpha": gq(max_non_alpha_words_ratio=c["max_non_alpha_words_ratio"]),
            "gq_stop_words": gq(min_stop_words=2),
        }
        chain = [  # FineWeb-2's pipeline, step 5
            GopherRepetitionFilter(language=key, dup_para_frac=0, dup_line_char_frac=0, dup_para_char_frac=0,
                                   dup_line_frac=c["dup_line_frac"], top_n_grams=c["top_n_grams"],
                                   dup_n_grams=c["dup_n_grams"]),
            FineWebQualityFilter(language=key, short_line_thr=999, char_duplicates_ratio=0.1,
                                 line_punct_thr=c["line_punct_thr"], new_line_ratio=c["new_line_ratio"]),
            GopherQualityFilter(language=key, max_avg_word_length=c["max_avg_word_length"],
                                min_avg_word_length=c["min_avg_word_length"], stop_words=c["stopwords"],
                                max_non_alpha_words_ratio=c["max_non_alpha_words_ratio"], min_stop_words=2),
        ]
        return {"single": single, "chain": chain}

    built: dict[str, dict | None] = {}
    seconds = 0.0
    with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as out:
        for line in f:
            d = json.loads(line)
            key = d["key"]
            if key not in built:
                try:
                    load_word_tokenizer(key).word_tokenize("a b")
                    built[key] = filters(key)
                except Exception as exc:  # a tokenizer that is not installed here
                    built[key] = None
                    print(f"{key}: no tokenizer ({type(exc).__name__}: {str(exc)[:80]})", file=sys.stderr)
            fs = built[key]
            if fs is None:
                out.write(json.dumps({"id": d["id"], "skipped": True}) + "\n")
                continue
            doc = Document(text=d["text"], id=d["id"])
            failed = []
            for rule, flt in fs["single"].items():
                try:
                    ok = flt.filter(doc)
                except ZeroDivisionError:
                    ok = False
                if ok is not True:
                    failed.append(rule)
            t0 = time.process_time()
            chain_reason = None
            for flt in fs["chain"]:
                ok = flt.filter(doc)
                if ok is not True:
                    chain_reason = ok[1] if isinstance(ok, tuple) else "dropped"
                    break
            seconds += time.process_time() - t0
            out.write(json.dumps({"id": d["id"], "failed": failed, "chain": chain_reason}) + "\n")
    print(json.dumps({"chain_cpu_seconds": seconds}))


# -- comparison --------------------------------------------------------------------------------


def compare(docs: list[dict], ours: dict[str, dict], theirs: dict[str, dict]) -> dict:
    per_rule: dict[str, Counter] = defaultdict(Counter)
    per_lang: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    differing: dict[tuple[str, str], list[dict]] = defaultdict(list)  # (rule, pair) -> documents
    for d in docs:
        t = theirs.get(d["id"])
        if not t or t.get("skipped"):
            continue
        mine = rule_failures(ours[d["id"]]["drops"])
        dt = set(t["failed"])
        for rule in [*RULES, "chain"]:
            if rule == "chain":
                a, b = bool(ours[d["id"]]["drops"]), t["chain"] is not None
            else:
                a, b = rule in mine, rule in dt
            c = per_rule[rule]
            c["n"] += 1
            c["agree"] += a == b
            c["datatrove_fails"] += b
            c["thresher_fails"] += a
            lang = per_lang[d["key"]][rule]
            lang["n"] += 1
            lang["agree"] += a == b
            if a != b:
                differing[rule, d["key"]].append({"id": d["id"], "thresher_fails": a, "datatrove_fails": b,
                                                  "text_start": d["text"][:100]})
    rules = {}
    for rule, c in per_rule.items():
        rates = {k: v["agree"] / v["n"] for k, v in ((k, per_lang[k][rule]) for k in per_lang) if v["n"]}
        worst = min(rates, key=lambda k: rates[k])
        rules[rule] = {"documents": c["n"], "agreement": round(c["agree"] / c["n"], 4),
                       "datatrove_fails": c["datatrove_fails"], "thresher_fails": c["thresher_fails"],
                       "languages_below_target": sorted(k for k, r in rates.items() if r < TARGET),
                       "worst_language": worst, "worst_language_agreement": round(rates[worst], 4),
                       "disagreeing_documents": sum(len(v) for (r, _), v in differing.items() if r == rule)}
    languages = {k: {"documents": v["chain"]["n"],
                     "min_rule_agreement": round(min(x["agree"] / x["n"] for x in v.values()), 4),
                     "rules_below_target": sorted(r for r, x in v.items() if x["agree"] / x["n"] < TARGET)}
                 for k, v in sorted(per_lang.items())}
    below = [{"rule": rule, "pair": key, "documents": per_lang[key][rule]["n"],
              "agreement": round(per_lang[key][rule]["agree"] / per_lang[key][rule]["n"], 4),
              "disagreements": differing[rule, key]}
             for (rule, key) in sorted(differing)
             if per_lang[key][rule]["agree"] / per_lang[key][rule]["n"] < TARGET]
    return {"rules": rules, "languages": languages, "below_target": below,
            "disagreements_per_rule_and_pair": {f"{rule} {key}": len(v)
                                                for (rule, key), v in sorted(differing.items())}}


def write_fixture(docs: list[dict], theirs: dict[str, dict], ours: dict[str, dict]) -> None:
    """A small committed sample of datatrove's decisions for tests/unit/quality/test_quality_fineweb2.py."""
    rng = random.Random(SEED)
    short = [d for d in docs if len(d["text"]) <= 1200 and d["id"] in theirs and not theirs[d["id"]].get("skipped")]
    failing = [d for d in short if theirs[d["id"]]["failed"]]
    passing = [d for d in short if not theirs[d["id"]]["failed"]]
    chosen = rng.sample(failing, min(45, len(failing))) + rng.sample(passing, min(15, len(passing)))
    rows = []
    for d in sorted(chosen, key=lambda d: d["id"]):
        mine = rule_failures(ours[d["id"]]["drops"])
        rows.append({"id": d["id"], "code": d["code"], "script": d["script"], "key": d["key"], "text": d["text"],
                     "datatrove_failed": theirs[d["id"]]["failed"],
                     "known_difference": sorted(mine.symmetric_difference(theirs[d["id"]]["failed"]))})
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps({
        "note": "Generated by benchmarks/fineweb2_agreement.py --fixture: datatrove 0.10.1's per-rule decisions "
                "(FineWeb-2 pipeline arguments, each rule alone) on a seeded sample of the benchmark corpus; "
                "known_difference lists the rules where thresher decided otherwise when it was generated.",
        "documents": rows}, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


def _option(argv: list[str], name: str, default: int) -> int:
    return int(argv[argv.index(name) + 1]) if name in argv else default


def _datatrove_decisions(src: Path, dst: Path, reuse: bool) -> tuple[dict[str, dict], list[str], float]:
    """datatrove's decisions on the corpus in `src` (run in the side venv; with `reuse`, read from the last
    run when it was on the same corpus: thresher's fixes do not change them)."""
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    meta = dst.with_suffix(".meta.json")
    if not (reuse and dst.exists() and meta.exists() and json.loads(meta.read_text())["corpus_sha256"] == digest):
        proc = subprocess.run([str(SIDE_PYTHON), __file__, "--datatrove", str(src), str(dst)],
                              capture_output=True, text=True, check=True)
        meta.write_text(json.dumps({
            "corpus_sha256": digest,
            "skipped": [ln for ln in proc.stderr.splitlines() if "no tokenizer" in ln],
            "chain_cpu_seconds": json.loads(proc.stdout.strip().splitlines()[-1])["chain_cpu_seconds"]}))
    m = json.loads(meta.read_text())
    theirs = {t["id"]: t for t in map(json.loads, dst.read_text(encoding="utf-8").splitlines())}
    return theirs, m["skipped"], m["chain_cpu_seconds"]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--datatrove"]:
        datatrove_worker(Path(argv[1]), Path(argv[2]))
        return 0
    per_language = _option(argv, "--docs", DOCS_PER_LANGUAGE)
    docs = corpus(per_language)
    DATA.mkdir(parents=True, exist_ok=True)
    src, dst = DATA / "fineweb2_docs.jsonl", DATA / "fineweb2_datatrove.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    ours, seconds = thresher_decisions(docs)
    wrong_key = [d["id"] for d in docs if ours[d["id"]]["config"] != d["key"]]
    theirs, skipped_lines, dt_seconds = _datatrove_decisions(src, dst, "--reuse" in argv)
    result = compare(docs, ours, theirs)
    compared = sum(1 for t in theirs.values() if not t.get("skipped"))
    result["corpus"] = {"documents": len(docs), "documents_per_source_and_language": per_language,
                        "compared": compared, "pairs": len({d["key"] for d in docs}),
                        "pairs_compared": len(result["languages"]),
                        "damage": dict(Counter(d["damage"] for d in docs)),
                        "routed_to_another_pair": wrong_key[:10],
                        "skipped_no_datatrove_tokenizer": skipped_lines}
    result["cost"] = {"thresher_ms_per_document": round(1000 * seconds / len(docs), 3),
                      "datatrove_chain_ms_per_document": round(1000 * dt_seconds / max(1, compared), 3)}
    by_id = {d["id"]: d for d in docs}
    with open(DATA / "fineweb2_disagreements.jsonl", "w", encoding="utf-8") as f:
        for row in result["below_target"]:
            for x in row["disagreements"]:
                f.write(json.dumps({"rule": row["rule"], "pair": row["pair"], **x,
                                    "text": by_id[x["id"]]["text"]}, ensure_ascii=False) + "\n")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for rule, r in result["rules"].items():
        print(f"{rule:16} {r['agreement']:.4f}  dt {r['datatrove_fails']:5}  th {r['thresher_fails']:5}  "
              f"worst {r['worst_language']} {r['worst_language_agreement']:.3f}  "
              f"below: {len(r['languages_below_target'])}")
    for row in result["below_target"]:
        print(f"  below: {row['rule']:16} {row['pair']:10} {row['agreement']:.3f} "
              f"({len(row['disagreements'])} of {row['documents']})")
    print(result["corpus"]["documents"], "documents,", compared, "compared;", result["cost"])
    if "--fixture" in argv:
        write_fixture(docs, theirs, ours)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
