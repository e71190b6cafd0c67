"""Generate thresher's shipped FineWeb-2 table from the published per-language configs.

Reads every `configs/<iso639-3>_<Script>.yml` of FineWeb-2 (github.com/huggingface/fineweb-2,
Apache-2.0; a copy in ../shared/data/fineweb2/configs) with thresher's own YAML-subset reader,
checks each file against PyYAML where it is installed, and writes
`src/thresher/quality/data/fineweb2.json.gz`: one row per pair, plus the Unicode Sentence_Terminal
characters (the line-punctuation stop characters of FineWeb's filter), computed with the `regex`
package. The attribution travels beside it in `data/FINEWEB2_NOTICE`.

    python benchmarks/fineweb2_table.py [CONFIG_DIR]
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from thresher.quality.fineweb2_table import SHIPPED, parse_config, read_folder  # noqa: E402

DEFAULT_DIR = ROOT.parent / "shared" / "data" / "fineweb2" / "configs"
SOURCE = "huggingface/fineweb-2 configs/, commit d0defb2 (2025-10-27), Apache-2.0"


def sentence_terminal() -> str:
    import regex  # a build-time tool only: the table carries the result

    pattern = regex.compile(r"\p{Sentence_Terminal}")
    return "".join(chr(c) for c in range(sys.maxunicode + 1)
                   if not 0xD800 <= c <= 0xDFFF and pattern.match(chr(c)))


def check_with_pyyaml(folder: Path) -> int:
    """Files where thresher's reader and PyYAML's safe loader disagree (0 expected)."""
    try:
        import yaml
    except ImportError:
        print("PyYAML not installed: reader not cross-checked")
        return 0
    bad = 0
    for path in sorted(folder.glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        ours = parse_config(text, str(path))
        theirs = yaml.safe_load(text)
        theirs = {k: [list(p) if isinstance(p, list) else p for p in v] if isinstance(v, list) else v
                  for k, v in theirs.items()}
        if ours != theirs:
            bad += 1
            print(f"{path}: differs from PyYAML")
    return bad


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT_DIR
    pairs, problems = read_folder(folder)
    for line in problems:
        print(line)
    if problems:
        return 1
    mismatches = check_with_pyyaml(folder)
    table = {
        "source": SOURCE,
        "license": "Apache-2.0 (see FINEWEB2_NOTICE)",
        "columns": ["dup_line_frac", "top_n_grams", "dup_n_grams", "new_line_ratio", "line_punct_thr",
                    "max_non_alpha_words_ratio", "min_avg_word_length", "max_avg_word_length", "stopwords",
                    "language_score"],
        "sentence_terminal": sentence_terminal(),
        "pairs": {key: pairs[key].to_row() for key in sorted(pairs)},
    }
    raw = json.dumps(table, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as f:  # mtime 0: reproducible bytes
        f.write(raw)
    SHIPPED.write_bytes(buf.getvalue())
    print(f"{len(pairs)} pairs, {len(raw)} bytes of JSON, {len(buf.getvalue())} gzipped -> {SHIPPED}; "
          f"{mismatches} files differ from PyYAML")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
