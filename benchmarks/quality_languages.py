"""Per-language keep rate of the quality presets on ordinary prose (issue 3's must-show).

300-word documents built from the lingua `sentences` files of all 75 languages (seeded shuffle, four
sentences to a line; see `documents` in tests/unit/quality/test_quality_languages.py, which asserts
the default preset keeps >= 97% in every language). Documents carry `lang.code`, so stop words and
bad words apply where a list exists.

    python benchmarks/quality_languages.py     # writes benchmarks/results/quality_languages.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "unit" / "quality"))

from test_quality_languages import keep_rates  # noqa: E402

from thresher.quality.config import QualityConfig  # noqa: E402

SENTENCES = ROOT.parent / "shared" / "data" / "language" / "lingua" / "sentences"
LDNOOBW = ROOT.parent / "shared" / "data" / "blocklists" / "ldnoobw"
RESULTS = ROOT / "benchmarks" / "results" / "quality_languages.json"


def main() -> int:
    from thresher.quality.badwords import BadWordsConfig

    configs = {
        "default": QualityConfig(),
        "default+bad_words": QualityConfig(bad_words=BadWordsConfig(directory=str(LDNOOBW))),
        "gopher": QualityConfig(preset="gopher"),
        "c4": QualityConfig(preset="c4", bad_words=BadWordsConfig(directory=str(LDNOOBW))),
        "all": QualityConfig(preset="all", bad_words=BadWordsConfig(directory=str(LDNOOBW))),
    }
    out: dict[str, dict] = {}
    for name, cfg in configs.items():
        rates = keep_rates(SENTENCES, cfg)
        out[name] = {
            "min_keep_rate": round(min(k / n for k, n in rates.values()), 4),
            "mean_keep_rate": round(sum(k / n for k, n in rates.values()) / len(rates), 4),
            "languages": {
                lang: {"kept": k, "documents": n, "keep_rate": round(k / n, 4)} for lang, (k, n) in rates.items()
            },
        }
        print(name, out[name]["min_keep_rate"], out[name]["mean_keep_rate"])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
