"""Run one extractor over a list of pages, one core, and print one JSON line per page.

Used by `extraction_eval.py`, which runs peers in their own virtual environment
(`benchmarks/.venvs/peers`). Input (stdin): a JSON list of `{"id", "path"}` (plus `"want_title": true` where the
title is scored; an extractor whose text call gives none then reads it outside the timing); every page is read and
decoded the same way for every extractor, and only the extraction call is timed.

    python benchmarks/extraction_worker.py EXTRACTOR < pages.json
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from collections.abc import Callable

# An extractor whose text call does not give the title names a separate, untimed title reader here.
TITLE_OUTSIDE_TIMING: dict[str, Callable[[str], str | None]] = {}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)


def decode(raw: bytes) -> str:
    """UTF-8, else the declared meta charset, else cp1252: the same string for every extractor."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = _META_CHARSET.search(raw[:4096])
    if m:
        try:
            return raw.decode(m.group(1).decode("ascii"), errors="replace")
        except LookupError:
            pass
    return raw.decode("cp1252", errors="replace")


def read_page(path: str) -> str:
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return decode(raw)


def make_extractor(name: str) -> tuple[Callable[[str], tuple[str, str | None]], str]:
    if name.startswith("thresher"):
        import thresher
        from thresher.extract.builtin import BuiltinExtractor

        ex = BuiltinExtractor(text_format="markdown" if name.endswith("markdown") else "text")

        def run(html: str) -> tuple[str, str | None]:
            r = ex.extract(html)
            return r.text, r.title

        return run, thresher.__version__
    if name.startswith("trafilatura"):
        import trafilatura

        precision = name.endswith("precision")
        comments = not name.endswith("nocomments")

        def run(html: str) -> tuple[str, str | None]:
            text = trafilatura.extract(html, favor_precision=precision, include_comments=comments,
                                       with_metadata=False) or ""
            return text, None

        def title(html: str) -> str | None:
            meta = trafilatura.extract_metadata(html)
            return meta.title if meta is not None else None

        TITLE_OUTSIDE_TIMING["fn"] = title
        return run, trafilatura.__version__
    if name == "resiliparse":
        import resiliparse
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        def run(html: str) -> tuple[str, str | None]:
            tree = HTMLTree.parse(html)
            text = extract_plain_text(tree, main_content=True)
            return text, tree.title

        from importlib.metadata import version

        return run, getattr(resiliparse, "__version__", None) or version("resiliparse")
    if name == "websieve":
        from importlib.metadata import version

        from websieve.clean.boilerplate import extract

        def run(html: str) -> tuple[str, str | None]:
            text, title = extract(html)
            return text or "", title

        return run, version("websieve")
    raise SystemExit(f"unknown extractor {name!r}")


def main() -> int:
    name = sys.argv[1]
    pages = json.load(sys.stdin)
    run, version = make_extractor(name)
    out = sys.stdout
    out.write(json.dumps({"extractor": name, "version": version}) + "\n")
    for page in pages:
        html = read_page(page["path"])
        t0 = time.process_time()
        try:
            text, title = run(html)
            error = None
        except Exception as exc:  # a crash on one page is a result (empty text), not the end of the run
            text, title, error = "", None, f"{type(exc).__name__}: {exc}"[:200]
        seconds = time.process_time() - t0
        if title is None and page.get("want_title") and "fn" in TITLE_OUTSIDE_TIMING:
            try:
                title = TITLE_OUTSIDE_TIMING["fn"](html)
            except Exception:
                title = None
        out.write(
            json.dumps({"id": page["id"], "text": text, "title": title, "seconds": seconds, "error": error}) + "\n"
        )
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
