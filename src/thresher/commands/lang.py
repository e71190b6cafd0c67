"""`thresher lang FILE`: the language of a text file (one document), or of each record of a JSONL
file (its `text` field), with per-paragraph spans for mixed documents; `--json` prints one JSON
object per document. `-` reads a text document from stdin."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from thresher.core.config import from_dict
from thresher.core.document import Document
from thresher.core.errors import InputError
from thresher.lang.config import LangConfig
from thresher.lang.stage import LanguageAnnotator


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "lang", help="identify the language of a text or of each JSONL record", description=__doc__
    )
    p.add_argument("file", help="text file, JSONL(.gz) file with a text field, or - for stdin")
    p.add_argument("--json", action="store_true", help="one JSON object per document")
    p.add_argument("--detector", choices=["auto", "cascade", "ngram", "script", "fasttext", "wide"], default="auto",
                   help="auto: CLD2 + lingua when the lang extra is installed, else the built-in n-gram model; "
                        "fasttext: the fastText model --model names; wide: the cascade, then heliport for what it "
                        "leaves und (the wide extra)")
    p.add_argument("--model", default=None, help="a fastText language-ID model (.bin/.ftz: lid.176, GlotLID, "
                                                 "OpenLID) for --detector fasttext; given alone, it selects it")
    p.add_argument("--field", default="text", help="the JSONL field holding the text (default: text)")
    p.set_defaults(handler=run)


def _read(path: str) -> bytes:
    from thresher.commands.inputs import read_bytes

    return read_bytes(path)


def documents(path: str, field: str) -> Iterator[tuple[str, str]]:
    """(name, text) per document: JSONL records by line number, else the whole file."""
    data = _read(path)
    text = data.decode("utf-8", "replace")
    name = path.removesuffix(".gz")
    if name.endswith((".jsonl", ".ndjson")):
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{i}: not a JSON object: {exc.msg}") from exc
            value = record.get(field) if isinstance(record, dict) else None
            yield (
                str(record.get("id", i)) if isinstance(record, dict) else str(i),
                value if isinstance(value, str) else "",
            )
    else:
        yield path, text


def run(args: argparse.Namespace) -> int:
    settings: dict[str, Any] = {"detector": args.detector}
    if args.model is not None:
        settings["model"] = args.model
    annotator = LanguageAnnotator(from_dict(LangConfig, settings, "lang"))
    for name, text in documents(args.file, args.field):
        doc = Document(id=name, text=text)
        annotator.annotate(doc)
        a = {k.removeprefix("lang."): v for k, v in doc.annotations.items()}
        a["detector"] = annotator.detector.name
        if args.json:
            sys.stdout.write(json.dumps({"document": name, **a}, ensure_ascii=False) + "\n")
            continue
        line = f"{name}\t{a['code']}\t{a['score']:.2f}\t{a['script']}"
        if a.get("reason"):
            line += f"\t({a['reason']})"
        if a.get("alternatives"):
            line += "\talso " + ", ".join(f"{c} {s:.2f}" for c, s in a["alternatives"])
        sys.stdout.write(line + "\n")
        for start, end, code in a.get("spans", ()):
            snippet = text[start:end].replace("\n", " ")
            sys.stdout.write(f"  {start}-{end}\t{code}\t{snippet[:60]}{'…' if len(snippet) > 60 else ''}\n")
    return 0
