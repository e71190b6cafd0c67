"""The wide-coverage detector (`--lang-detector wide`, the `wide` extra): the cascade first, heliport
for what the cascade leaves `und`, each of heliport's answers kept only above its language's
calibrated bound.

The cascade with its open-set gate (`thresher.lang.cascade`, `thresher.lang.open_set`) is fast and
right where it answers, but it knows ~80 languages and says `und` for the rest. heliport (HPLT's
identifier, 242 languages, its model inside its wheel: `thresher.lang.heliport_model`) knows more,
but run alone it gives a confident wrong label to a third of the Bible segments of languages it
does not know (docs/benchmarks.md): its own confidence bounds were set on its own languages.

So heliport is asked only for a text the cascade found in no language it knows (`und`, reason
`unknown_language`; never for empty text, text without letters or with fewer than four distinct
letters), and its answer is kept only
when the margin between its best and second language (the difference of their raw scores, lower
is better, as heliport's own confidence) is at least that language's `min_margin`:

- a language with calibration texts that heliport named right: the lowest margin at which, among
  the calibration texts heliport gave that label with at least that margin, at most
  `max_wrong_share` were in another language;
- a label heliport only ever gave wrongly there: above the highest such margin (so no calibration
  text would keep it);
- a label not met in calibration: `default_min_margin`, above the most confident wrong answer
  whose label was never right in calibration.

The bounds are in `wide.json`, fitted by `benchmarks/lang_wide_peer.py --calibrate` on the same
calibration split as the open-set gate (even three-verse Bible segments, lingua's dev sentences);
figures are reported on the odd segments (docs/language.md). Labels are heliport's ISO 639-3 codes
written as the cascade writes codes: ISO 639-1 where one exists (`eng` -> `en`, the standard form
of a macrolanguage too: `cmn` -> `zh`, `swh` -> `sw`; `thresher.lang.iso639`), else 639-3
(`quc`); the script is the text's (`lang.script`), so `quc` + `Latn` is the pair `quc_Latn`.
A result is a pure function of the text, heliport's model and this file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.lang.cascade import MAX_CHARS, CascadeDetector
from thresher.lang.detection import UNKNOWN_LANGUAGE, Detection, clean_text, read_paragraphs
from thresher.lang.iso639 import ISO_639_3_TO_1

CALIBRATION_PATH = Path(__file__).with_name("wide.json")
METHOD = "heliport"
MAX_WRONG_SHARE = 0.05  # of a label's calibration answers at or above its bound
MARGIN_STEP = 1e-4  # a bound above a margin: that margin plus this
# heliport names a language for any string, "xxxx" included (Finnish, with a wide margin): a text
# of fewer distinct letters is no language to it, as to the n-gram model (`too_short`)
MIN_DISTINCT_LETTERS = 4


def thresher_code(label: str) -> str:
    """heliport's ISO 639-3 label as the cascade writes codes (639-1 where one exists)."""
    return ISO_639_3_TO_1.get(label, label)


@dataclass(frozen=True, slots=True, kw_only=True)
class WideCalibration:
    min_margin: dict[str, float]  # per language (thresher's code)
    default_min_margin: float  # languages not met in calibration
    max_wrong_share: float  # what the bounds were fitted for
    version: str = ""

    def to_json(self) -> str:
        return json.dumps({"min_margin": self.min_margin, "default_min_margin": self.default_min_margin,
                           "max_wrong_share": self.max_wrong_share}, indent=1, sort_keys=True) + "\n"


def load_calibration(data: bytes) -> WideCalibration:
    raw = json.loads(data)
    return WideCalibration(
        min_margin={str(k): float(v) for k, v in raw["min_margin"].items()},
        default_min_margin=float(raw["default_min_margin"]),
        max_wrong_share=float(raw["max_wrong_share"]),
        version="wide-" + hashlib.sha256(data).hexdigest()[:12],
    )


_shipped: list[WideCalibration] = []


def shipped_calibration() -> WideCalibration:
    """The calibration in the package (read once per process)."""
    if not _shipped:
        _shipped.append(load_calibration(CALIBRATION_PATH.read_bytes()))
    return _shipped[0]


def fit_calibration(rows: Iterable[tuple[str, str, float]],
                    max_wrong_share: float = MAX_WRONG_SHARE) -> WideCalibration:
    """Bounds from calibration answers (gold code, heliport's code, margin) (module docstring)."""
    by_label: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for gold, code, margin in rows:
        by_label[code].append((margin, gold == code))
    bounds: dict[str, float] = {}
    never_right = 0.0
    for code, answers in sorted(by_label.items()):
        answers.sort(reverse=True)
        highest_wrong = max((m for m, right in answers if not right), default=None)
        if not any(right for _, right in answers):
            assert highest_wrong is not None
            bounds[code] = round(highest_wrong + MARGIN_STEP, 4)
            never_right = max(never_right, highest_wrong)
            continue
        # walk down the margins: the lowest one whose kept answers are still precise enough
        bound = math.inf
        kept = wrong = 0
        for margin, right in answers:
            kept += 1
            wrong += not right
            if wrong <= max_wrong_share * kept:
                bound = margin
        bounds[code] = round(bound, 4)
    return WideCalibration(min_margin=bounds, default_min_margin=round(never_right + MARGIN_STEP, 4),
                           max_wrong_share=max_wrong_share)


def heliport_margin(identifier: Any, text: str) -> tuple[str, float] | None:
    """heliport's best label for `text` and its margin over the second (None: no second)."""
    ranked = identifier.identify_topk_with_score(text, 2)
    if len(ranked) < 2:
        return None
    (label, best), (_, second) = ranked[0], ranked[1]
    return str(label), float(second) - float(best)


class WideDetector:
    """`LanguageDetector` of the `wide` extra (see the module docstring)."""

    name = "cld2+lingua+heliport"

    def __init__(self, max_chars: int = MAX_CHARS, top_k: int = 3, calibration: WideCalibration | None = None,
                 cascade: CascadeDetector | None = None, identifier: Any = None) -> None:
        if identifier is None:
            from thresher.lang.heliport_model import identifier as process_identifier

            identifier = process_identifier()  # ImportError here when the extra is missing
        self.cascade = cascade if cascade is not None else CascadeDetector(max_chars, top_k)
        self.max_chars = max_chars
        self.calibration = calibration if calibration is not None else shipped_calibration()
        self._heliport = identifier

    def _widen(self, text: str, refused: Detection) -> Detection:
        """heliport's answer for a text the cascade found in no language it knows, when its margin
        reaches the language's bound; else the cascade's `und`."""
        if len({c for c in text if c.isalpha()}) < MIN_DISTINCT_LETTERS:  # "xxxx", "abab": no language
            return refused
        found = heliport_margin(self._heliport, text)
        if found is None:
            return refused
        code = thresher_code(found[0])
        margin = found[1]
        cal = self.calibration
        if margin < cal.min_margin.get(code, cal.default_min_margin):
            return refused
        # the margin read as a score in [0, 1): 0.5 at a margin of ln 2
        return Detection(code, round(1.0 - math.exp(-margin), 4), refused.script, (), method=METHOD)

    def detect(self, text: str) -> Detection:
        detection = self.cascade.detect(text)
        if detection.reason != UNKNOWN_LANGUAGE:
            return detection
        return self._widen(clean_text(text, self.max_chars), detection)

    def detect_paragraphs(self, paragraphs: Sequence[str]) -> tuple[Detection, list[str]]:
        whole, codes = self.cascade.detect_paragraphs(paragraphs)
        if whole.reason != UNKNOWN_LANGUAGE:
            return whole, codes
        texts = read_paragraphs(paragraphs, self.max_chars)  # past max_chars: not read
        widened = self._widen("\n".join(texts), whole)
        if not widened.decided:
            return whole, codes
        return widened, [widened.code] * len(paragraphs)
