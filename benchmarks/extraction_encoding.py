"""Undeclared legacy-charset pages: how often `read.encoding.sniff` decodes them exactly, beside
charset-normalizer (if installed), in one run.

Pages: (a) evaluation pages of ../shared/data/extraction/trafilatura-eval whose `<html lang>` is
served by a legacy charset (de/es/fr/pt/it -> windows-1252, pl/hu -> windows-1250), their
`<meta charset>` removed and re-encoded strictly (pages that the charset cannot hold are skipped);
(b) for the scripts the evaluation sets lack, pages of 20 sentences each from
../shared/data/language/lingua in the charset's languages, inside the first evaluation page's
markup with its text removed. A page counts as correct when the decoded text equals the original.

    python benchmarks/extraction_encoding.py            # writes benchmarks/results/extraction_encoding.json
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from pathlib import Path

from thresher.read.encoding import python_codec, sniff

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "extraction_encoding.json"
PAGES_PER_CHARSET = 40
SENTENCE_CHARSETS = {
    "gbk": ["zh"], "big5": ["zh"], "shift_jis": ["ja"], "euc-jp": ["ja"], "euc-kr": ["ko"],
    "windows-1251": ["ru", "uk", "bg"], "koi8-r": ["ru"], "windows-1250": ["cs", "pl", "hu", "sk", "hr"],
    "windows-1252": ["de", "fr", "es", "pt"], "windows-1253": ["el"], "windows-1254": ["tr"],
    "windows-1255": ["he"], "windows-1256": ["ar"], "windows-1257": ["lt", "lv", "et"],
}
PAGE_CHARSETS = {"de": "windows-1252", "es": "windows-1252", "fr": "windows-1252", "pt": "windows-1252",
                 "it": "windows-1252", "pl": "windows-1250", "hu": "windows-1250"}
_META = re.compile(r"<meta[^>]*charset[^>]*>", re.I)
_LANG = re.compile(r"<html[^>]*\slang\s*=\s*[\"']?([A-Za-z]{2,3})", re.I)
_TEXT = re.compile(r">[^<]+<")


def eval_pages() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted((SHARED / "extraction" / "trafilatura-eval" / "pages").glob("*.gz")):
        html = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
        m = _LANG.search(html[:20000])
        charset = PAGE_CHARSETS.get(m.group(1).lower()) if m else None
        if charset and not html.isascii():
            out.append((f"eval:{path.name}", charset, _META.sub("", html)))
    return out


def sentence_pages(skeleton: str) -> list[tuple[str, str, str]]:
    out = []
    shell = _TEXT.sub("><", _META.sub("", skeleton))
    head, _, tail = shell.partition("<body")
    for charset, langs in SENTENCE_CHARSETS.items():
        made = 0
        for lang in langs:
            path = SHARED / "language" / "lingua" / "sentences" / f"{lang}.txt"
            if not path.exists():
                continue
            lines = [s for s in path.read_text(encoding="utf-8").splitlines() if s.strip()]
            good = []
            for s in lines:
                try:
                    s.encode(python_codec(charset))
                    good.append(s)
                except UnicodeEncodeError:
                    continue
            per_lang = PAGES_PER_CHARSET // len(langs)
            for k in range(per_lang):
                chunk = good[k * 20:(k + 1) * 20]
                if len(chunk) < 20:
                    break
                body = "".join(f"<p>{s}</p>\n" for s in chunk)
                out.append((f"{lang}:{k}", charset, f"{head}<body><h1>{chunk[0][:40]}</h1>{body}</body></html>"))
                made += 1
    return out


def main() -> int:
    pages = eval_pages()
    if not pages:
        print("no evaluation pages found", file=sys.stderr)
        return 1
    pages += sentence_pages(pages[0][2])
    try:
        import charset_normalizer
    except ImportError:
        charset_normalizer = None
    per: dict[str, dict[str, int]] = {}
    cpu = {"thresher": 0.0, "charset_normalizer": 0.0}
    wrong: list[str] = []
    for name, charset, html in pages:
        codec = python_codec(charset)
        try:
            data = html.encode(codec)
        except UnicodeEncodeError:
            continue
        row = per.setdefault(charset, {"pages": 0, "thresher": 0, "charset_normalizer": 0})
        row["pages"] += 1
        t0 = time.process_time()
        enc, _ = sniff(data)
        got = data.decode(python_codec(enc), "replace")
        cpu["thresher"] += time.process_time() - t0
        if got == html:
            row["thresher"] += 1
        else:
            wrong.append(f"{name} {charset} -> {enc}")
        if charset_normalizer is not None:
            t0 = time.process_time()
            best = charset_normalizer.from_bytes(data).best()
            text = str(best) if best is not None else ""
            cpu["charset_normalizer"] += time.process_time() - t0
            row["charset_normalizer"] += text == html
    total = {k: sum(r[k] for r in per.values()) for k in ("pages", "thresher", "charset_normalizer")}
    result = {"per_charset": per, "total": total, "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
              "thresher_accuracy": round(total["thresher"] / total["pages"], 4),
              "charset_normalizer_accuracy": round(total["charset_normalizer"] / total["pages"], 4)
              if charset_normalizer is not None else None,
              "thresher_wrong": wrong[:50]}
    print(json.dumps(result, indent=1))
    if "--no-write" not in sys.argv:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
