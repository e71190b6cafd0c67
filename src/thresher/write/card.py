"""The dataset card: a README.md in the output folder that says what the dataset is, how it was
made and how to read it, generated from the manifest and the stats (no clock, no host names)."""

from __future__ import annotations

import json
from typing import Any

from thresher.lang.labels import alias
from thresher.write.tokens import TOKENIZER_FILES, token_counter

# languages listed by name in the card; the rest are summed as "other"
CARD_LANGUAGES = 20


def _inputs_section(manifest: dict[str, Any]) -> list[str]:
    inputs = manifest.get("inputs") or []
    lines = ["## Inputs", ""]
    if not inputs:
        return lines + ["None recorded.", ""]
    lines += ["| input | bytes |", "|---|---:|"]
    for entry in inputs:
        size = entry.get("bytes")
        lines.append(
            f"| `{entry.get('path')}` | {size:,} |" if isinstance(size, int) else f"| `{entry.get('path')}` | - |"
        )
    return lines + [""]


def _detector_note(name: str, manifest: dict[str, Any] | None = None) -> str:
    model = (manifest or {}).get("lang_model") or {}
    if name in ("fasttext", "cld2+fasttext") and model:
        first = "CLD2, and where CLD2 is unsure " if name != "fasttext" else ""
        return (f"{first}the fastText model `{model.get('file')}`, sha256 `{model.get('sha256')}`,"
                f" {model.get('labels')} labels")
    if name.startswith("ngram"):
        return ("thresher's built-in character n-gram model, standard library only; the `lang` extra is the"
                " accurate path: `pip install 'thresher[lang]'`")
    return {"cld2+lingua": "CLD2, and lingua where CLD2 is unsure: the `lang` extra",
            "script": "the writing system alone"}.get(name, "a custom detector")


def _undetermined_line(stats: dict[str, Any], languages: dict[str, int]) -> list[str]:
    """The `und` share and the scripts of those documents (counters `lang.und/<script>`)."""
    und = sum(n for key, n in languages.items() if key == "und" or key.startswith("und_"))
    total = sum(languages.values())
    if not und or not total:
        return []
    scripts = {k.removeprefix("lang.und/"): n for k, n in (stats.get("counters") or {}).items()
               if k.startswith("lang.und/")}
    ranked = ", ".join(f"{s} {n}" for s, n in sorted(scripts.items(), key=lambda kv: (-kv[1], kv[0])))
    return ["", f"`und` (no language decided, or a language the detector does not know): {und} of {total}"
                f" documents ({100 * und / total:.1f}%)" + (f"; their scripts: {ranked}." if ranked else ".")]


def _alias(key: str) -> str:
    """The `lang.code` of a label (`eng_Latn` -> `en`); a key of an older build (`en`) is its own."""
    code, sep, _ = key.partition("_")
    return alias(code) if sep else key


def _languages_section(summary: dict[str, Any] | None, records: int) -> list[str]:
    lines = ["## Languages", ""]
    languages = (summary or {}).get("languages") or {}
    if not languages:
        return lines + ["The documents carry no language annotations (`lang.label`).", ""]
    ranked = sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))
    lines += ["Kept documents per language (`lang.label`: ISO 639-3 and script; `lang.code`: its ISO 639-1"
              " alias where one exists):", "",
              "| language | `lang.code` | documents | share |", "|---|---|---:|---:|"]
    for key, n in ranked[:CARD_LANGUAGES]:
        lines.append(f"| {key} | {_alias(key)} | {n:,} | {100.0 * n / max(1, records):.1f}% |")
    rest = sum(n for _, n in ranked[CARD_LANGUAGES:])
    if rest:
        lines.append(f"| other | | {rest:,} | {100.0 * rest / max(1, records):.1f}% |")
    unlabelled = records - sum(languages.values())
    if unlabelled > 0:
        lines.append(f"| (none) | | {unlabelled:,} | {100.0 * unlabelled / max(1, records):.1f}% |")
    return lines + [""]


def _consent_section(summary: dict[str, Any] | None, records: int) -> list[str]:
    """Kept documents and whitespace tokens per opt-out signal (`thresher.consent`), when any kept
    page carries one; `thresher consent DATASET` prints the full ledger (hosts, enforce's effect)."""
    consent = (summary or {}).get("consent")
    if not consent:
        return []
    lines = ["## Consent", "",
             "Kept documents that carry an opt-out signal (docs/consent.md): `robots:AGENT` means the"
             " robots.txt in force disallows that crawler.", "",
             "| signal | documents | share | whitespace tokens |", "|---|---:|---:|---:|"]
    for name, n in sorted(consent.items(), key=lambda kv: (":" in kv[0], kv[0])):
        docs = n.get("documents", 0)
        share = f"{100.0 * docs / records:.1f}%" if records else "-"
        lines.append(f"| {name} | {docs} | {share} | {n.get('whitespace_tokens', 0):,} |")
    return lines + [""]


def render_card(manifest: dict[str, Any], stats: dict[str, Any], summary: dict[str, Any] | None = None) -> str:
    """The card's Markdown; `summary` (`thresher.run.observe.card_summary`) adds the text size and the language mix."""
    seen = stats.get("seen", 0) or 0

    def pct(n: int) -> str:
        return f"{100.0 * n / seen:.1f}%" if seen else "-"

    lines = [
        "# Dataset card",
        "",
        f"Built by thresher {manifest['thresher_version']} (`thresher build`), config hash "
        f"`{manifest['config_hash']}`.",
        "",
        "## Contents",
        "",
        f"- {manifest['records']:,} documents in {len(manifest['shards'])} shard(s) of format `{manifest['format']}`,"
        f" {manifest['bytes']:,} bytes in all.",
        *(
            [f"- Text: {summary['text_bytes']:,} bytes (UTF-8), {summary['whitespace_tokens']:,} whitespace tokens."]
            if summary
            else []
        ),
        *[
            f"- Tokens: {n:,} in the `{name}` tokenizer ({TOKENIZER_FILES[name][2]}, file sha256 "
            f"`{token_counter(name).sha256[:16]}`)."
            for name, n in ((summary or {}).get("tokens") or {}).items()
            if name in TOKENIZER_FILES
        ],
        f"- Input: {len(manifest['inputs'])} file(s); {seen} records seen.",
        f"- Kept {stats.get('kept', 0)} ({pct(stats.get('kept', 0))}), dropped {stats.get('dropped', 0)}"
        f" ({pct(stats.get('dropped', 0))}), malformed {stats.get('malformed', 0)} ({pct(stats.get('malformed', 0))}).",
        "",
        "## Why documents were dropped",
        "",
    ]
    drops = stats.get("drops", {})
    if drops:
        lines += ["| stage | reason | documents |", "|---|---|---:|"]
        for stage, reasons in drops.items():
            for reason, n in reasons.items():
                lines.append(f"| {stage} | {reason} | {n} |")
    else:
        lines.append("Nothing was dropped.")
    failures = stats.get("rule_failures", {})
    if failures:
        lines += ["", "Rule failures (a document can fail several rules of one set):", "",
                  "| stage | rule | failures |", "|---|---|---:|"]
        for stage, reasons in failures.items():
            for reason, n in reasons.items():
                lines.append(f"| {stage} | {reason} | {n} |")
    languages = {k[5:]: n for k, n in (stats.get("counters") or {}).items() if k.startswith("lang/")}
    if languages:
        lines += [
            "",
            "## Languages detected",
            "",
            "Documents per detected language (`lang.label`, ISO 639-3 and script; `lang.code` its ISO 639-1"
            " alias) among all that reached the language stage, dropped ones included (`und`: undetermined;"
            " the kept documents' mix is under Languages below):",
            "",
            "| language | `lang.code` | documents |",
            "|---|---|---:|",
        ]
        lines += [f"| {key} | {_alias(key)} | {n} |"
                  for key, n in sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))]
        lines += _undetermined_line(stats, languages)
        detectors = sorted(k.removeprefix("lang.detector.") for k in (stats.get("events") or {})
                           if k.startswith("lang.detector."))
        if detectors:
            notes = ", ".join(f"`{d}` ({_detector_note(d, manifest)})" for d in detectors)
            lines += ["", "Language detector: " + notes + "."]
        script_only = (stats.get("events") or {}).get("lang.script_only", 0)
        if script_only:
            lines += ["", f"{script_only} document(s) are `und` because their script is shared by many languages:"
                      " identifying those languages needs the `lang` extra (`pip install 'thresher[lang]'`)."]
    extractor = manifest.get("extractor") or {}
    lines += [""]
    lines += _languages_section(summary, manifest["records"])
    lines += _consent_section(summary, manifest["records"])
    lines += _inputs_section(manifest)
    lines += [
        "## How it was made",
        "",
        f"- Extractor: {extractor.get('name', '?')} {extractor.get('version', '')}".rstrip(),
        "- Stages: read → extract → normalize → lang → quality → exact dedup → near dedup → write.",
        "- Every dropped document is attributed to a rule with the measured value and the bound it crossed;"
        " `stats.json` holds the full breakdown.",
        "",
        "Resolved configuration:",
        "",
        "```json",
        json.dumps(manifest["config"], indent=2, sort_keys=True),
        "```",
        "",
        "## Record schema",
        "",
        "Each line of a shard is one JSON object: `id` (unique per input record: from the input file and the record's "
        "position), `url`, `title`,"
        " `text`, optional `fetched_at`, `source` (provenance: input file and record position), `metadata`"
        " (input fields kept as they were), `annotations` (per-stage keys such as `dedup.duplicates`).",
        "",
        "## Reading it",
        "",
        "```python",
        "from thresher import read_shards   # checks every shard against manifest.json",
        "for record in read_shards('path/to/this/folder'):",
        "    ...",
        "```",
        "",
        "With the `datasets` package (the front matter of this card lists the shards, so nothing else in the"
        " folder is read as data):",
        "",
        "```python",
        "from datasets import load_dataset",
        "ds = load_dataset('path/to/this/folder', split='train')   # or streaming=True",
        "```",
        "",
        "`thresher verify path/to/this/folder` checks the shards' sizes and sha256 against the manifest.",
        "",
        "## Looking at it",
        "",
        "- `thresher report path/to/this/folder` writes [`report.html`](report.html) beside this card: the funnel,"
        " drops per rule with examples, each quality metric's histogram around its bounds, languages, lengths,"
        " duplicate clusters, hosts and timings (one offline page, no script).",
        "- `thresher explain path/to/this/folder URL-or-ID` says where one document went and why (`index/`).",
        "- `thresher check path/to/this/folder` estimates language share, duplicate-paragraph and boilerplate rates"
        " with 95% intervals.",
        "",
    ]
    return "\n".join(lines)
