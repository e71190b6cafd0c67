"""Writes src/thresher/quality/data/fineweb2_word_rules.json.gz: which FineWeb-2 pairs' word tokenizers
depart from spaCy's multilingual (`xx`) rules, for `thresher.quality.fineweb2_words`.

datatrove 0.10.1 assigns each language-script pair a tokenizer (its `tokenizer_assignment.csv`); for
the pairs given a blank spaCy pipeline this script asks each pipeline spaCy builds (spaCy 3.8) how it
splits a few probe strings, and records the pairs whose answer differs from `xx`'s:

- `no_hyphen_split`: `abc-def` stays one token (xx: three);
- `ordinal_period`: `1496.` stays one token (xx: two);
- `no_percent_split`: `60%` stays one token;
- `no_hash_split`: `#Ya` stays one token;
- `elision_split`: `d'un` is two tokens (`d'`, `un`);
- `hyphen_digit_split`: `abc-12` is three tokens (Malay, Indonesian: dates such as `26-Agu-12`);
- `clitic_suffix`: `abc-ku` is two tokens (`abc`, `-ku`; Malay's `-ku`, `-mu`, `-nya`);
- `no_digit_hyphen_split`: `12-34` stays one token (Swedish, Finnish, Danish, Greek);
- `no_letter_colon_split`, `no_digit_colon_split`: `OECD:s`, `1:sta` stay one token (Swedish, Finnish);
- `hyphen_suffix`, `hyphen_prefix`: `abc-`, `-abc` are two tokens (a hyphen is a suffix in Catalan,
  Malay and Indonesian, a prefix in Catalan).

It also records the pairs datatrove gives indic-nlp's trivial tokenizer (`indic_nlp`: `urdu` for
those it runs in Urdu mode, `indic` for the others), and each pipeline's special cases: strings
that stay one token although they hold punctuation (`kept_whole`: `Sra.`, `p.`, `итд.`, the single
letters `a.` of the multilingual rules, Malay's `undang-undang`) and strings split into given
pieces (`split_into`: Catalan `del` -> `d` + `el`, Finnish `ettei` -> `ett` + `ei`); entries of
spaCy's tokenizer exception lists, MIT License) and which pairs use which
pipeline (`xx` for the pairs not listed).
Only facts about behaviour and those word lists are recorded, no code. Runs in the side venv of
`fineweb2_agreement.py` (datatrove, spaCy):

    benchmarks/.venvs/datatrove/bin/python benchmarks/fineweb2_word_rules.py
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "thresher" / "quality" / "data" / "fineweb2_word_rules.json.gz"
PROBES = {  # rule -> (probe, token count meaning the rule holds)
    "no_hyphen_split": ("abc-def", 1),
    "ordinal_period": ("1496.", 1),
    "no_percent_split": ("60%", 1),
    "no_hash_split": ("#Ya", 1),
    "elision_split": ("d'un", 2),
    "hyphen_digit_split": ("abc-12", 3),
    "clitic_suffix": ("abc-ku", 2),
    "no_digit_hyphen_split": ("12-34", 1),
    "no_letter_colon_split": ("OECD:s", 1),
    "no_digit_colon_split": ("1:sta", 1),
    "hyphen_suffix": ("abc-", 2),
    "hyphen_prefix": ("-abc", 2),
}


def main() -> int:
    import spacy
    from datatrove.utils._import_utils import ASSETS_PATH
    from spacy.attrs import ORTH

    with open(os.path.join(ASSETS_PATH, "tokenizer_assignment.csv"), encoding="utf-8") as f:
        assignment = list(csv.DictReader(f))
    rows = [r for r in assignment if r["type"] == "SpaCyTokenizer"]
    indic = [r for r in assignment if r["type"] == "IndicNLPTokenizer"]
    holds: dict[str, dict[str, bool]] = {}
    for code in sorted({r["tok_code"] for r in rows}):
        if code in ("ja", "zh", "ko", "th", "vi"):  # segmenters, not rules
            continue
        nlp = spacy.blank(code)
        holds[code] = {rule: len(nlp(probe)) == n for rule, (probe, n) in PROBES.items()}
    base = holds["xx"]
    out: dict[str, list[str]] = {rule: [] for rule in PROBES}
    for r in rows:
        code = r["tok_code"]
        if code not in holds:
            continue
        for rule in PROBES:
            if holds[code][rule] != base[rule]:
                out[rule].append(f"{r['code_3']}_{r['script']}")
    result: dict[str, object] = {k: sorted(set(v)) for k, v in out.items()}
    def special_cases(code: str) -> tuple[set[str], dict[str, list[str]]]:
        """The pipeline's tokenizer exceptions that matter to a rule-based splitter: strings kept as
        one token although they hold punctuation (`Sra.`, `undang-undang`, `''`), and strings split
        into given pieces (Catalan `del` -> `d`, `el`)."""
        rules = spacy.blank(code).tokenizer.rules or {}
        whole = {k for k, v in rules.items() if len(v) == 1 and not k.isalnum() and " " not in k}
        split = {k: [piece[ORTH] for piece in v] for k, v in rules.items() if len(v) > 1 and " " not in k}
        return whole, split

    base_whole, base_split = special_cases("xx")
    # the multilingual lists once, then each pipeline's own additions
    kept: dict[str, list[str]] = {"xx": sorted(base_whole)}
    splits: dict[str, dict[str, list[str]]] = {"xx": dict(sorted(base_split.items()))}
    for code in sorted(holds):
        if code == "xx":
            continue
        whole, split = special_cases(code)
        if whole - base_whole:
            kept[code] = sorted(whole - base_whole)
        extra = {k: v for k, v in split.items() if base_split.get(k) != v}
        if extra:
            splits[code] = dict(sorted(extra.items()))
    pairs: dict[str, list[str]] = {}
    for r in rows:
        if r["tok_code"] in holds and r["tok_code"] != "xx":
            pairs.setdefault(r["tok_code"], []).append(f"{r['code_3']}_{r['script']}")
    result["kept_whole"] = kept
    result["split_into"] = splits
    result["indic_nlp"] = {mode: sorted({f"{r['code_3']}_{r['script']}" for r in indic
                                         if (r["tok_code"] == "ur") == urdu})
                           for mode, urdu in (("indic", False), ("urdu", True))}
    result["pairs_by_pipeline"] = {k: sorted(set(v)) for k, v in sorted(pairs.items())}
    body = (json.dumps(result, indent=0, ensure_ascii=False) + "\n").encode("utf-8")
    OUT.write_bytes(gzip.compress(body, compresslevel=9, mtime=0))  # no timestamp: the same bytes every run
    print({k: len(v) for k, v in out.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
