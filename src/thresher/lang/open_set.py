"""`und` for text in a language the cascade does not know: per-language calibrated confidence.

CLD2 always names one of the languages it knows, so a text in any other language (most of the
world's) gets a neighbour's label: Achuar comes out Danish, K'iche' Venda. This gate checks the
cascade's answer against how well that language explains the text, with a bound calibrated for each
language, and answers `und` (reason `unknown_language`, the text's script kept) where the answer
does not fit:

1. Languages whose script is theirs alone (`SCRIPT_LANGUAGE`: Greek, Thai, Gujarati, ...) are not
   checked: the script names them.
2. A language of the shipped n-gram model (`thresher.lang.ngram`, the 75 languages of lingua's data)
   is kept when CLD2's normalized score for it is at least `trust_cld2_score`, or when its mean
   n-gram cost on the text (quantized negative log-probability per n-gram, as the n-gram model
   reads it) is at most that language's `max_mean_cost`: the highest mean cost of any calibration
   text truly in that language that the cascade named right.
3. Another language with calibration texts (the Bible languages CLD2 knows: Quechua, Wolof, Manx,
   Syriac, ...) is kept when CLD2's normalized score is at least its `min_cld2_score`, the lowest
   of its calibration texts.
4. Any other language (CLD2 knows ~165; no calibration text here) is kept only when CLD2's
   normalized score is at least `default_min_cld2_score`.
5. Where the answer is refused, the n-gram model's own best language is taken instead when it fits
   (its mean cost within its bound) and leads the next language by at least `min_margin` steps per
   n-gram; else `und`.

The bounds are in `open_set.json`, written by `benchmarks/lang_open_set.py --calibrate` from the
even-numbered three-verse segments of the Bible corpus and the dev split of lingua's sentences;
figures are reported on the odd segments and the test split (docs/language.md). A result is a pure
function of the text, the shipped model and this file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from thresher.lang.codes import SCRIPT_LANGUAGE
from thresher.lang.detection import UNKNOWN_LANGUAGE, Detection, undetermined
from thresher.lang.ngram import NgramDetector, ngrams, normalize

CALIBRATION_PATH = Path(__file__).with_name("open_set.json")
SCRIPT_NAMES = frozenset(SCRIPT_LANGUAGE.values())
METHOD = "ngram"


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenSetCalibration:
    max_mean_cost: dict[str, float]  # per n-gram model language
    min_cld2_score: dict[str, float]  # per language calibrated on CLD2's score alone
    default_min_cld2_score: float  # languages without calibration texts
    trust_cld2_score: float  # at or above, a language of the n-gram model is kept unchecked
    min_margin: float  # n-gram steps per n-gram between the model's best and next language
    model_version: str  # the n-gram model the costs were measured with
    version: str = ""

    def to_json(self) -> str:
        return json.dumps({"max_mean_cost": self.max_mean_cost, "min_cld2_score": self.min_cld2_score,
                           "default_min_cld2_score": self.default_min_cld2_score,
                           "trust_cld2_score": self.trust_cld2_score, "min_margin": self.min_margin,
                           "model_version": self.model_version}, indent=1, sort_keys=True) + "\n"


def load_calibration(data: bytes) -> OpenSetCalibration:
    raw = json.loads(data)
    return OpenSetCalibration(
        max_mean_cost={k: float(v) for k, v in raw["max_mean_cost"].items()},
        min_cld2_score={k: float(v) for k, v in raw["min_cld2_score"].items()},
        default_min_cld2_score=float(raw["default_min_cld2_score"]),
        trust_cld2_score=float(raw["trust_cld2_score"]),
        min_margin=float(raw["min_margin"]),
        model_version=str(raw["model_version"]),
        version="open-set-" + hashlib.sha256(data).hexdigest()[:12],
    )


_shipped: list[OpenSetCalibration] = []


def shipped_calibration() -> OpenSetCalibration:
    """The calibration in the package (read once per process)."""
    if not _shipped:
        _shipped.append(load_calibration(CALIBRATION_PATH.read_bytes()))
    return _shipped[0]


def label_score(code: str, details: tuple[tuple[str, int, int], ...]) -> int:
    """CLD2's normalized score for `code` among its three best (code, percent, score); 0 if absent."""
    for c, _, score in details:
        if c == code:
            return score
    return 0


class OpenSetGate:
    """Refuses the cascade's answer where the language does not explain the text (module docstring)."""

    def __init__(self, calibration: OpenSetCalibration | None = None, ngram: NgramDetector | None = None) -> None:
        self.calibration = calibration if calibration is not None else shipped_calibration()
        # flat tables: the gate reads them rarely, and their pages stay shared between the pool's workers
        self.ngram = ngram if ngram is not None else NgramDetector(flat=True)

    def needs_check(self, code: str, cld2_score: int) -> bool:
        """Whether the answer must be checked (cheap: no n-gram is read)."""
        cal = self.calibration
        if code in SCRIPT_NAMES:
            return False
        if code in cal.max_mean_cost:
            return cld2_score < cal.trust_cld2_score
        return True

    def judge(self, detection: Detection, text: str, cld2_score: int) -> Detection:
        """`detection` when its language fits `text`, else the n-gram model's fitting answer, else `und`."""
        code = detection.code
        if not self.needs_check(code, cld2_score):
            return detection
        cal = self.calibration
        if code not in cal.max_mean_cost:
            bound = cal.min_cld2_score.get(code, cal.default_min_cld2_score)
            if cld2_score >= bound:
                return detection
            return self._second_opinion(detection, text)
        costs = self._mean_costs(text, detection.script)
        if costs is None or code not in costs:  # the language is not in the text's script group
            return detection
        if costs[code] <= cal.max_mean_cost[code]:
            return detection
        return self._second_opinion(detection, text, costs)

    def _mean_costs(self, text: str, script: str) -> dict[str, float] | None:
        scorer = self.ngram._scorer(script)
        if scorer is None or len(scorer.languages) < 2:
            return None
        evidence, found = scorer.evidence(ngrams(normalize(text), self.ngram.model.max_n))
        if not found:
            return None
        return {c: total / found for c, total in zip(scorer.languages, scorer.costs(evidence), strict=True)}

    def _second_opinion(self, detection: Detection, text: str, costs: dict[str, float] | None = None) -> Detection:
        if costs is None:
            costs = self._mean_costs(text, detection.script)
        refused = undetermined(UNKNOWN_LANGUAGE, detection.script, detection.method)
        if not costs or len(costs) < 2:
            return refused
        (best_cost, best), (next_cost, _) = sorted((v, c) for c, v in costs.items())[:2]
        bound = self.calibration.max_mean_cost.get(best)
        if bound is None or best_cost > bound or next_cost - best_cost < self.calibration.min_margin:
            return refused
        return Detection(best, detection.score, detection.script, (), method=METHOD)
