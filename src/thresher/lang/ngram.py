"""A character n-gram language model shipped in the package: the detector without the `lang` extra.

Multinomial naive Bayes over the character 1- to 4-grams of the lower-cased text (letters and
combining marks kept, every other run of characters one space, the text padded with spaces), one
model per script group: the dominant script (`thresher.lang.script`) picks the group, so a Cyrillic
text is only ever compared with Cyrillic languages, and the languages whose script is theirs alone
(Greek, Hebrew, Thai, Hangul, kana, ...) are decided by the script as in `thresher.lang.script_only`.

Each group stores a vocabulary of n-grams and, per n-gram, one byte per language: its negative
log-probability in that language quantized in steps of `step` nats (255 for n-grams the language
never showed). Scoring sums these bytes over a text's n-grams for all languages at once: each row is
read once into a Python integer holding one 32-bit lane per language, so a text costs one integer
addition per n-gram, and the lanes are read back once at the end. Standard library only.

The score is the best language's posterior with the naive-Bayes log-likelihoods divided by the
model's `temperature` (naive Bayes counts correlated n-grams as independent evidence and is
overconfident), fitted on a dev split. The text is `und` when it has fewer than `min_letters`
letters, or no more distinct ones (`too_short`), when even the best language explains its n-grams
worse than `max_mean_cost` steps each on average (`unknown_language`: the text is in a language the
model does not know, or is not language), or when the posterior is under `min_probability`
(`low_confidence`). The bounds were chosen on the dev split, on Bible verses in languages the model
does not know and on random letter strings (`benchmarks/train_lang_fallback.py`, which trains the
model and writes its figures). A script group of one language (Bengali) names it without scoring.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

from thresher.lang.codes import SCRIPT_LANGUAGE, UNDETERMINED
from thresher.lang.detection import (
    EMPTY,
    LOW_CONFIDENCE,
    NO_LETTERS,
    SHARED_SCRIPT,
    TOO_SHORT,
    UNKNOWN_LANGUAGE,
    Detection,
    clean_text,
    read_paragraphs,
    undetermined,
)
from thresher.lang.script import ScriptProfile, detect_script

MODEL_PATH = Path(__file__).with_name("ngram_model.bin")
MAGIC = b"THNGRAM1"
MAX_CHARS = 4096
MAX_MODEL_CHARS = 600  # normalized characters scored per text (and per paragraph): a few sentences decide
# n-grams summed for one text at most: 255 x this stays well inside a 32-bit lane
MAX_EVIDENCE_NGRAMS = 1 << 20
LANE_BYTES = 4
METHOD = "ngram"  # `Detection.method` of what the model decided


def _separator_class() -> str:
    """A regex class of the characters that are not letters or combining marks (up to U+2FFF, and
    the CJK and full-width punctuation blocks): digits, punctuation, symbols and spaces."""
    import unicodedata

    points = [cp for cp in (*range(0x3000), *range(0x3000, 0x3040), *range(0xFE10, 0xFE70), *range(0xFF00, 0xFF21))
              if not (chr(cp).isalpha() or unicodedata.category(chr(cp)) in ("Mn", "Mc"))]
    ranges: list[tuple[int, int]] = []
    for cp in points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1] = (ranges[-1][0], cp)
        else:
            ranges.append((cp, cp))
    return "".join(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}"
                   for lo, hi in ranges)


_SEPARATORS = re.compile(f"[{_separator_class()}]+")


def normalize(text: str, max_chars: int = MAX_MODEL_CHARS) -> str:
    """The text the model reads: lower case, letters and marks, one space between words, padded."""
    return " " + _SEPARATORS.sub(" ", text.lower()).strip()[:max_chars] + " "


def ngrams(padded: str, max_n: int = 4) -> list[str]:
    """The character 1- to `max_n`-grams of a normalized text, in order."""
    out: list[str] = []
    size = len(padded)
    for n in range(1, max_n + 1):
        out += [padded[i:i + n] for i in range(size - n + 1)]
    return out


@dataclass(frozen=True, slots=True)
class Group:
    """The model of one script group: its languages, n-gram vocabulary and quantized log-probabilities."""

    scripts: tuple[str, ...]
    languages: tuple[str, ...]
    vocabulary: tuple[str, ...]
    weights: bytes  # len(vocabulary) rows of len(languages) bytes

    def row(self, i: int) -> bytes:
        n = len(self.languages)
        return self.weights[i * n:(i + 1) * n]


@dataclass(frozen=True, slots=True)
class NgramModel:
    groups: tuple[Group, ...]
    step: float  # nats per quantization step
    max_n: int
    temperature: float
    min_probability: float
    max_mean_cost: float  # per n-gram in the vocabulary, for the best language, in quantization steps
    min_letters: int
    version: str  # name and the first 12 hex digits of the model file's SHA-256

    def to_bytes(self) -> bytes:
        header = {"step": self.step, "max_n": self.max_n, "temperature": self.temperature,
                  "min_probability": self.min_probability, "max_mean_cost": self.max_mean_cost,
                  "min_letters": self.min_letters,
                  "groups": [{"scripts": list(g.scripts), "languages": list(g.languages),
                              "features": len(g.vocabulary)} for g in self.groups]}
        head = json.dumps(header, sort_keys=True).encode()
        body = b"".join("\n".join(g.vocabulary).encode() + b"\0" + g.weights for g in self.groups)
        return MAGIC + struct.pack("<I", len(head)) + head + zlib.compress(body, 9)

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.to_bytes())


def load_model(data: bytes) -> NgramModel:
    if not data.startswith(MAGIC):
        raise ValueError("not a thresher n-gram language model")
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    header = json.loads(data[start:start + size])
    body = zlib.decompress(data[start + size:])
    groups = []
    pos = 0
    for g in header["groups"]:
        end = body.index(b"\0", pos)
        vocabulary = tuple(body[pos:end].decode().split("\n")) if end > pos else ()
        width = g["features"] * len(g["languages"])
        groups.append(Group(tuple(g["scripts"]), tuple(g["languages"]), vocabulary, body[end + 1:end + 1 + width]))
        pos = end + 1 + width
    return NgramModel(tuple(groups), header["step"], header["max_n"], header["temperature"],
                      header["min_probability"], header["max_mean_cost"], header["min_letters"],
                      "ngram-" + hashlib.sha256(data).hexdigest()[:12])


class _Scorer:
    """A group made ready to score: n-gram -> row number, and each row as a multi-lane integer
    (the fastest to sum: one integer addition per n-gram)."""

    def __init__(self, group: Group) -> None:
        n = len(group.languages)
        self.languages = group.languages
        self.ids = {g: i + 1 for i, g in enumerate(group.vocabulary)}  # row 0: n-grams outside the vocabulary
        lanes = array("I", iter(group.weights)).tobytes()  # one 32-bit lane per byte, native order
        width = n * LANE_BYTES
        self.rows = [0] + [int.from_bytes(lanes[i:i + width], sys.byteorder) for i in range(0, len(lanes), width)]
        self.width = width

    def evidence(self, grams: list[str]) -> tuple[int, int]:
        """The summed rows of the n-grams (all languages' costs in one integer), and how many n-grams
        were in the vocabulary."""
        found = list(map(self.ids.get, grams, repeat(0)))
        return sum(map(self.rows.__getitem__, found)), len(found) - found.count(0)

    def costs(self, evidence: int) -> list[int]:
        """The summed quantized costs per language."""
        return array("I", evidence.to_bytes(self.width, sys.byteorder)).tolist()


class _FlatScorer(_Scorer):
    """The same tables with the rows in one flat buffer of 32-bit lanes: the same sums, ~2.5x slower
    to score, and memory that stays shared.

    For the open-set gate, which reads the tables for a few texts in a hundred beside the cascade's
    models. The pool's fork server builds the tables before it forks; a worker that reads a row of a
    flat buffer never writes to its page, while a row held as its own integer object is written (its
    reference count) each time it is used, so each worker ended up with a private copy of every row
    it had touched (~9 MiB for the Latin group, growing with the corpus). A row becomes an integer
    only while a text is scored."""

    def __init__(self, group: Group) -> None:  # the tables differ: `_Scorer.__init__` is not called
        width = len(group.languages) * LANE_BYTES
        self.languages = group.languages
        self.width = width
        # offset 0 is a row of zeros: the n-grams outside the vocabulary
        self.ids = {g: (i + 1) * width for i, g in enumerate(group.vocabulary)}
        self.lanes = bytes(width) + array("I", iter(group.weights)).tobytes()

    def evidence(self, grams: list[str]) -> tuple[int, int]:
        """As `_Scorer.evidence`; each distinct row is read once and weighted by its count."""
        found = list(map(self.ids.get, grams, repeat(0)))
        lanes, width, order = self.lanes, self.width, sys.byteorder
        total = 0
        for offset, count in Counter(found).items():
            if offset:
                total += int.from_bytes(lanes[offset:offset + width], order) * count
        return total, len(found) - found.count(0)


class NgramDetector:
    """`LanguageDetector` from the shipped n-gram model (see the module docstring)."""

    def __init__(self, max_chars: int = MAX_CHARS, top_k: int = 3, model: NgramModel | None = None,
                 flat: bool = False) -> None:
        self.model = model if model is not None else shipped_model()
        self.flat = flat  # the score tables as `_FlatScorer` (shared memory) rather than `_Scorer` (speed)
        self.name = self.model.version  # `ngram-<sha256 prefix>`: the stats and the card say which model ran
        self.max_chars = max_chars
        self.top_k = top_k
        self.version = self.model.version
        self._by_script = {s: g for g in self.model.groups for s in g.scripts}

    def _scorer(self, script: str) -> _Scorer | None:
        key = (self.version, script, self.flat)
        scorer = _scorers.get(key)
        if scorer is None:
            group = self._by_script.get(script)
            if group is None:
                return None
            scorer = _scorers[key] = _FlatScorer(group) if self.flat else _Scorer(group)
        return scorer

    def _decide(self, text: str) -> Detection:
        if not text or text.isspace():
            return undetermined(EMPTY, method=METHOD)
        profile = detect_script(text)
        script = profile.code
        if script == "Zyyy":
            return undetermined(NO_LETTERS, method=METHOD)
        scorer = self._scorer(script)
        if scorer is None:
            by_script = SCRIPT_LANGUAGE.get(script)
            if by_script is not None:
                return Detection(by_script, round(profile.share, 4), script, method="script")
            return undetermined(SHARED_SCRIPT, script, METHOD)
        padded = normalize(text)
        if len(scorer.languages) == 1:
            return self._judge(scorer, profile, padded, 0, 0)
        return self._judge(scorer, profile, padded, *scorer.evidence(ngrams(padded, self.model.max_n)))

    def _judge(self, scorer: _Scorer, profile: ScriptProfile, padded: str, evidence: int, found: int) -> Detection:
        """The detection of a text (`padded`, normalized) of `profile.code`'s group from its evidence."""
        model = self.model
        script = profile.code
        letters = len(padded) - padded.count(" ")
        if letters < model.min_letters or len(set(padded)) <= model.min_letters:  # "aaaaaa" is no language
            return undetermined(TOO_SHORT, script, METHOD)
        if len(scorer.languages) == 1:
            return Detection(scorer.languages[0], round(profile.share, 4), script, method=METHOD)
        if not found:
            return undetermined(LOW_CONFIDENCE, script, METHOD)
        costs = scorer.costs(evidence)
        best = min(costs)
        if best > model.max_mean_cost * found:
            # the best language explains the n-grams worse than nearly every text of a known language is explained
            return undetermined(UNKNOWN_LANGUAGE, script, METHOD)
        factor = model.step / model.temperature
        weights = [math.exp((best - c) * factor) for c in costs]
        total = sum(weights)
        ranked = sorted(zip(weights, scorer.languages, strict=True), key=lambda wl: (-wl[0], wl[1]))
        probability = ranked[0][0] / total
        alternatives = tuple((code, round(w / total, 4)) for w, code in ranked[1:self.top_k])
        if probability < model.min_probability:
            alternatives = ((ranked[0][1], round(probability, 4)), *alternatives)
            return Detection(UNDETERMINED, 0.0, script, alternatives, LOW_CONFIDENCE, METHOD)
        return Detection(ranked[0][1], round(probability, 4), script, alternatives, method=METHOD)

    def detect(self, text: str) -> Detection:
        return self._decide(clean_text(text, self.max_chars))

    def detect_paragraphs(self, paragraphs: Sequence[str]) -> tuple[Detection, list[str]]:
        """The document is judged on the evidence of its paragraphs in its main script summed, each
        paragraph on its own; a paragraph gets its own code only where it is decided on its own,
        else the document's. Each n-gram is looked up once."""
        texts = read_paragraphs(paragraphs, self.max_chars)  # past max_chars: not read
        joined = "\n".join(texts)
        profile = detect_script(joined)
        scorer = self._scorer(profile.code)
        if len(texts) < 2 or scorer is None or len(scorer.languages) == 1:
            whole = self._decide(joined)
            return whole, [whole.code] * len(paragraphs)
        own: list[Detection | None] = []
        evidence = found = 0
        for p in texts:
            p_profile = detect_script(p)
            if p_profile.code != profile.code:  # another script: judged alone, and not part of the whole
                own.append(self._decide(p))
                continue
            padded = normalize(p)
            e, f = scorer.evidence(ngrams(padded, self.model.max_n))
            if found < MAX_EVIDENCE_NGRAMS:
                evidence += e
                found += f
            own.append(self._judge(scorer, p_profile, padded, e, f))
        whole = self._judge(scorer, profile, normalize(joined), evidence, found)
        if not whole.decided:
            return whole, [whole.code] * len(paragraphs)
        codes = [d.code if d is not None and d.decided else whole.code for d in own]
        codes += [whole.code] * (len(paragraphs) - len(texts))
        return whole, codes


_shipped: list[NgramModel] = []
# Score tables by model version and script, shared by the process's detectors (built on first use;
# ~10 MiB for the Latin group): a pure function of the model file, so sharing cannot change a result.
_scorers: dict[tuple[str, str, bool], _Scorer] = {}


def shipped_model() -> NgramModel:
    """The model in the package (read once per process)."""
    if not _shipped:
        _shipped.append(load_model(MODEL_PATH.read_bytes()))
    return _shipped[0]


def preload(flat: bool = False) -> None:
    """Build every group's score tables of the shipped model now (the pool's fork server calls this
    through `thresher.lang.ngram_tables` or `thresher.lang.open_set_tables`, so forked workers share
    them instead of each building its own)."""
    detector = NgramDetector(flat=flat)
    for group in detector.model.groups:
        for script in group.scripts:
            detector._scorer(script)
