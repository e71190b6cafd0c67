"""CLD2 first, lingua where CLD2 is known to be unsure: the detector of the `lang` extra.

1. The script decides when it can (`SCRIPT_DECIDES`: nearly all letters in Thai, Georgian, Greek,
   Armenian, Hangul, ...): no model is asked.
2. CLD2 (pycld2, best effort) gives a language, its share of the text and a normalized score.
3. lingua (low-accuracy mode: character trigrams) re-decides among a few candidates where CLD2 is
   known to be wrong: when CLD2 answers one of `CascadePolicy.suspects` (`en`, `sr`: CLD2's answer
   for short texts of many languages) with a normalized score below `ask_below_score`. The
   candidates are CLD2's answer, its three-best list and the languages it is confused with
   (`CONFUSED_WITH`), so a lingua call costs ~100 µs instead of ~2 ms over all 75 languages.
4. The open-set gate (`thresher.lang.open_set`, `CascadePolicy.open_set`) answers `und` where the
   language does not explain the text by that language's calibrated bound: a text in a language
   neither CLD2 nor lingua knows no longer gets a neighbour's label.

Calibrated on a dev split of lingua's test sentences (150 per language, disjoint from the reported
test split; `benchmarks/lang_eval.py --parts calibrate` reruns the grid): CLD2 alone 0.955; the
default policy 0.963 at 41k sentences/s, the best accuracy among the policies that keep 40% of
CLD2's throughput (high-accuracy lingua: 0.9635 but ~30% of CLD2's throughput).

Scores: the top language's share of the text's bytes (CLD2's percent), halved when CLD2 marks the
result unreliable; where lingua decided, its confidence among the candidates times that share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from thresher.lang.codes import (
    CLD2_CODES,
    LANGUAGE_SCRIPT,
    MULTI_SCRIPT_LANGUAGES,
    SCRIPT_LANGUAGE,
    from_cld2,
)
from thresher.lang.detection import (
    DETECTOR_ERROR,
    EMPTY,
    NO_LETTERS,
    UNKNOWN_LANGUAGE,
    Detection,
    clean_text,
    read_paragraphs,
    undetermined,
)
from thresher.lang.script import ScriptProfile, detect_script, first_non_ascii_script

if TYPE_CHECKING:
    from thresher.lang.open_set import OpenSetGate

MAX_CHARS = 4096
LINGUA_MAX_CHARS = 600  # lingua's cost grows with length; a few sentences decide between close languages
SCRIPT_DECIDES_SHARE = 0.9  # of the letters, for the script alone to decide
# Languages the script decides before CLD2 is asked (CLD2 knows them too; this skips its cost)
SCRIPT_DECIDES = frozenset({"th", "ka", "el", "hy", "ko", "lo", "km", "my", "si", "bo", "dv", "gu", "or", "ta", "te",
                            "kn", "ml", "chr"})
_DECIDING_SCRIPTS = frozenset(s for s, lang in SCRIPT_LANGUAGE.items() if lang in SCRIPT_DECIDES)

# Calibrated on the dev split (see the module docstring): for each language CLD2 answers, the
# languages that were in truth behind that answer at least twice in 75 x 75 sentences.
CONFUSED_WITH: dict[str, tuple[str, ...]] = {
    "sr": ("bg", "bs", "hr", "mk", "ru"),
    "en": ("bs", "ca", "da", "es", "ga", "hr", "la", "ms", "nl", "pt", "sl", "tl", "tn", "yo"),
    "hr": ("bs",),
    "bs": ("hr",),
    "id": ("ms",),
    "ms": ("id",),
    "es": ("ca",),
    "nb": ("sv", "nn", "da"),
    "nn": ("nb",),
    "sk": ("sl", "cs"),
    "xh": ("zu",),
    "zu": ("xh",),
    "ss": ("zu",),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CascadePolicy:
    """When lingua is asked, and how (defaults: the choice measured best on the dev split)."""

    # CLD2 answers that lingua re-checks when CLD2's normalized score is below `ask_below_score`
    suspects: frozenset[str] = frozenset({"en", "sr"})
    ask_below_score: float = 800.0
    # any CLD2 answer in CONFUSED_WITH is re-checked below this normalized score
    ask_any_below_score: float = 0.0
    accurate: bool = False  # lingua's high-accuracy mode (n-grams up to 5); else trigrams only
    # `und` where the answer's language does not explain the text (`thresher.lang.open_set`)
    open_set: bool = True


DEFAULT_POLICY = CascadePolicy()


def _script_of(text: str, profile: ScriptProfile | None) -> str:
    return (profile or detect_script(text)).code


def _script_for(code: str, text: str, profile: ScriptProfile | None, ascii_text: bool) -> str:
    if ascii_text:
        return "Latn"
    if profile is not None:
        return profile.code
    if code in MULTI_SCRIPT_LANGUAGES:  # Serbian in Cyrillic or Latin, ...: the first non-ASCII letter says
        hint = first_non_ascii_script(text)
        return "Latn" if hint == "Zyyy" else hint
    if code not in LANGUAGE_SCRIPT:
        # Latin, unless the text says otherwise (Syriac, Inuktitut, Coptic letters, ...): then its
        # dominant script, counted only for such text
        hint = first_non_ascii_script(text)
        return "Latn" if hint in ("Zyyy", "Latn") else detect_script(text).code
    return LANGUAGE_SCRIPT[code]


def cld2_available() -> bool:
    try:
        import lingua  # noqa: F401
        import pycld2  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


# lingua detectors, one per candidate set and mode, shared by every cascade of the process. A
# detector is a small object over lingua's process-wide language models (~1 MiB each, loaded on
# first use and kept: all 75 low-accuracy models are ~77 MiB), so building detectors per task cost
# time and never returned memory; the bound only guards against a pathological stream of sets (a
# 10k-document mixed corpus needs ~60).
LINGUA_DETECTORS_MAX = 1024
_lingua_detectors: dict[tuple[tuple[str, ...], bool], Any] = {}
_lingua_codes: dict[str, Any] = {}


def lingua_languages() -> dict[str, Any]:
    """lingua's languages by ISO 639-1 code."""
    if not _lingua_codes:
        from lingua import Language

        _lingua_codes.update({lang.iso_code_639_1.name.lower(): lang for lang in Language.all()})
    return _lingua_codes


def lingua_detector(codes: tuple[str, ...], accurate: bool) -> Any:
    """The process's lingua detector over `codes` (sorted ISO 639-1 codes)."""
    key = (codes, accurate)
    detector = _lingua_detectors.get(key)
    if detector is None:
        from lingua import LanguageDetectorBuilder

        languages = lingua_languages()
        builder = LanguageDetectorBuilder.from_languages(*(languages[c] for c in codes))
        if not accurate:
            builder = builder.with_low_accuracy_mode()
        if len(_lingua_detectors) >= LINGUA_DETECTORS_MAX:
            del _lingua_detectors[next(iter(_lingua_detectors))]  # the oldest; it is rebuilt if asked again
        detector = _lingua_detectors[key] = builder.build()
    return detector


class CascadeDetector:
    """`LanguageDetector` of the `lang` extra (see the module docstring)."""

    name = "cld2+lingua"

    def __init__(self, max_chars: int = MAX_CHARS, top_k: int = 3, use_lingua: bool = True,
                 policy: CascadePolicy = DEFAULT_POLICY) -> None:
        from thresher.lang import cld2  # the lang extra

        self._cld2 = cld2
        self._cld2_error = cld2.error_class()  # raises ImportError here when the extra is missing
        self.max_chars = max_chars
        self.top_k = top_k
        self.use_lingua = use_lingua
        self.policy = policy
        self._gate: OpenSetGate | None = None
        if policy.open_set:
            from thresher.lang.open_set import OpenSetGate

            self._gate = OpenSetGate()

    # -- CLD2 ---------------------------------------------------------------------------------

    # -- lingua -------------------------------------------------------------------------------

    def _lingua_for(self, codes: tuple[str, ...]) -> Any:
        return lingua_detector(codes, self.policy.accurate)

    def _lingua_by_code(self) -> dict[str, Any]:
        return lingua_languages()

    def _ask_lingua(self, text: str, code: str, candidates: Sequence[str], share: float) -> Detection | None:
        known = self._lingua_by_code()
        pool = tuple(sorted({c for c in (code, *candidates, *CONFUSED_WITH[code]) if c in known}))
        if len(pool) < 2:
            return None
        values = self._lingua_for(pool).compute_language_confidence_values(text[:LINGUA_MAX_CHARS])
        if not values or values[0].value <= 0.0:
            return None
        ranked = [(v.language.iso_code_639_1.name.lower(), round(v.value * share, 4)) for v in values[: self.top_k]]
        return Detection(ranked[0][0], ranked[0][1], "", tuple(ranked[1:]), method="lingua")

    # -- the cascade --------------------------------------------------------------------------

    def _decide(self, text: str, vectors: bool) -> tuple[Detection, tuple[Any, ...]]:
        """The detection of a cleaned text, and CLD2's byte-range vectors when asked for.

        The script is counted only where CLD2's answer does not imply it (`LANGUAGE_SCRIPT`):
        counting costs about as much as CLD2 itself."""
        if not text or text.isspace():
            return undetermined(EMPTY), ()
        ascii_text = text.isascii()
        profile = None
        if not ascii_text and first_non_ascii_script(text) in _DECIDING_SCRIPTS:
            profile = detect_script(text)
            by_script = SCRIPT_LANGUAGE.get(profile.code)
            if by_script is not None and profile.share >= SCRIPT_DECIDES_SHARE and by_script in SCRIPT_DECIDES:
                return Detection(by_script, round(profile.share, 4), profile.code), ()
        try:
            result = self._cld2.detect(text, vectors)
        except self._cld2_error:
            return undetermined(DETECTOR_ERROR, _script_of(text, profile), "cld2"), ()
        details = result[2]
        first = details[0]
        top = first[1]
        if top == "un" or top.startswith("xx"):
            script = _script_of(text, profile)
            return undetermined(NO_LETTERS if script == "Zyyy" else UNKNOWN_LANGUAGE, script, "cld2"), ()
        top = CLD2_CODES.get(top, top)
        factor = 1.0 if result[0] else 0.5  # CLD2's is-reliable flag
        share = first[2] / 100.0 * factor
        spans = result[3] if vectors else ()
        policy = self.policy
        if self.use_lingua and top in CONFUSED_WITH and (
            first[3] < policy.ask_any_below_score or (top in policy.suspects and first[3] < policy.ask_below_score)
        ):
            candidates = [from_cld2(d[1]) for d in details[1:] if d[1] != "un"]
            decided = self._ask_lingua(text, top, candidates, share)
            if decided is not None:
                script = _script_for(decided.code, text, profile, ascii_text)
                detection = Detection(decided.code, decided.score, script, decided.alternatives,
                                      method=decided.method)
                if self._gate is not None:
                    cld2_score = next((d[3] for d in details if from_cld2(d[1]) == decided.code), 0)
                    detection = self._gate.judge(detection, text, cld2_score)
                return detection, spans
        second = details[1]
        if second[1] == "un" or self.top_k < 2:
            alternatives: tuple[tuple[str, float], ...] = ()
        else:
            alternatives = tuple([(from_cld2(d[1]), round(d[2] / 100.0 * factor, 4))
                                  for d in details[1: self.top_k] if d[1] != "un"])
        script = _script_for(top, text, profile, ascii_text)
        detection = Detection(top, round(share, 4), script, alternatives, None, "cld2")
        if self._gate is not None:
            detection = self._gate.judge(detection, text, first[3])
        return detection, spans

    def detect(self, text: str) -> Detection:
        return self._decide(clean_text(text, self.max_chars), vectors=False)[0]

    def detect_paragraphs(self, paragraphs: Sequence[str]) -> tuple[Detection, list[str]]:
        """One CLD2 pass over the paragraphs joined; each paragraph gets the language of most of
        its bytes in CLD2's per-chunk vectors."""
        texts = read_paragraphs(paragraphs, self.max_chars)  # past max_chars: not read
        joined = "\n".join(texts)
        whole, vectors = self._decide(joined, vectors=len(texts) > 1)
        if not vectors or not whole.decided:
            return whole, [whole.code] * len(paragraphs)
        cld2_main = from_cld2(vectors[0][3]) if len(vectors) == 1 else None
        codes: list[str] = []
        offset = 0
        v = 0
        for p in texts:
            n = len(p.encode("utf-8"))
            start, end = offset, offset + n
            votes: dict[str, int] = {}
            while v < len(vectors) and vectors[v][0] + vectors[v][1] <= start:
                v += 1
            j = v
            while j < len(vectors) and vectors[j][0] < end:
                lo, hi = max(start, vectors[j][0]), min(end, vectors[j][0] + vectors[j][1])
                c = from_cld2(vectors[j][3])
                votes[c] = votes.get(c, 0) + max(0, hi - lo)
                j += 1
            codes.append(max(votes, key=votes.__getitem__) if votes else whole.code)
            offset = end + 1
        if cld2_main is None and whole.method in ("lingua", "fasttext", "ngram"):
            # lingua (or the fastText model) re-decided between close languages, or the open-set gate
            # gave the n-gram model's answer: CLD2's paragraphs of its first answer follow.
            # Ties go to the code met first: a set of strings would iterate in the order of the process's
            # string-hash seed, and two runs (or two workers) would disagree.
            first = Counter(codes).most_common(1)[0][0]
            codes = [whole.code if c == first else c for c in codes]
        elif cld2_main is not None:
            codes = [whole.code] * len(texts)
        codes += [whole.code] * (len(paragraphs) - len(texts))
        return whole, codes
