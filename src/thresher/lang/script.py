"""Writing-system (script) detection per document, and the traits quality rules compose from.

Detection counts the letters of a sample of the text by Unicode block (one table lookup per
character, done in C through `map`) and returns the dominant script. Pure ASCII text, the common
case, takes a fast path. Han text with a noticeable share of kana is Japanese (`Jpan`); Han without
kana is `Hani`.

Traits say how text in a script is written, which is what quality rules need to know:

- `space_delimited`: words are separated by spaces. Scripts that are not (Han, Japanese, Thai, Lao,
  Khmer, Myanmar, Tibetan) count characters as words for length and n-gram rules.
- `terminal_punctuation`: the characters that end a sentence, or "" for scripts whose writing does
  not mark sentence ends (Thai and Lao separate sentences by spaces), where punctuation rules
  do not apply.
- `chars_per_word`: for scripts without spaces, about how many letters make a word, so that
  n-gram rules over characters compare spans of about n words.
- `dense`: each character carries a syllable or more (Hangul, Ethiopic, Han), so words are short in
  characters and the mean-word-length floor is lowered.

Script names are ISO 15924 codes (`Latn`, `Cyrl`, `Hani`, ...); `Zyyy` means no letters were found.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

SAMPLE_CHARS = 2048
KANA_SHARE_FOR_JAPANESE = 0.05  # of Han + kana letters: Japanese prose has 30-60% kana, Chinese none


@dataclass(frozen=True, slots=True)
class ScriptTraits:
    code: str
    name: str
    space_delimited: bool = True
    terminal_punctuation: str = ".!?"
    dense: bool = False
    chars_per_word: int = 1  # for scripts without spaces: letters in a typical word (n-gram scaling)

    @property
    def has_terminal_punctuation(self) -> bool:
        return bool(self.terminal_punctuation)


_WESTERN = ".!?"
_CJK_STOPS = "。．！？!?.｡"

TRAITS: dict[str, ScriptTraits] = {
    t.code: t
    for t in (
        ScriptTraits("Latn", "Latin"),
        ScriptTraits("Cyrl", "Cyrillic"),
        ScriptTraits("Grek", "Greek", terminal_punctuation=".!?;\u037e"),
        ScriptTraits("Armn", "Armenian", terminal_punctuation=".!?\u0589\u055c\u055e"),
        ScriptTraits("Geor", "Georgian"),
        ScriptTraits("Arab", "Arabic", terminal_punctuation=".!?\u061f\u06d4\u061e"),
        ScriptTraits("Hebr", "Hebrew"),
        ScriptTraits("Syrc", "Syriac", terminal_punctuation=".!?\u0700\u0701\u0702"),
        ScriptTraits("Thaa", "Thaana", terminal_punctuation=".!?\u061f"),
        ScriptTraits("Deva", "Devanagari", terminal_punctuation=".!?\u0964\u0965"),
        ScriptTraits("Beng", "Bengali", terminal_punctuation=".!?\u0964\u0965"),
        ScriptTraits("Guru", "Gurmukhi", terminal_punctuation=".!?\u0964\u0965"),
        ScriptTraits("Gujr", "Gujarati", terminal_punctuation=".!?\u0964\u0965"),
        ScriptTraits("Orya", "Oriya", terminal_punctuation=".!?\u0964\u0965"),
        ScriptTraits("Taml", "Tamil", terminal_punctuation=".!?\u0964"),
        ScriptTraits("Telu", "Telugu", terminal_punctuation=".!?\u0964"),
        ScriptTraits("Knda", "Kannada", terminal_punctuation=".!?\u0964"),
        ScriptTraits("Mlym", "Malayalam", terminal_punctuation=".!?\u0964"),
        ScriptTraits("Sinh", "Sinhala", terminal_punctuation=".!?\u0df4\u0964"),
        ScriptTraits("Thai", "Thai", space_delimited=False, terminal_punctuation="", chars_per_word=4),
        ScriptTraits("Laoo", "Lao", space_delimited=False, terminal_punctuation="", chars_per_word=4),
        ScriptTraits("Khmr", "Khmer", space_delimited=False, terminal_punctuation=".!?\u17d4\u17d5", chars_per_word=3),
        ScriptTraits(
            "Mymr", "Myanmar", space_delimited=False, terminal_punctuation=".!?\u104a\u104b", chars_per_word=3
        ),
        ScriptTraits("Tibt", "Tibetan", space_delimited=False, terminal_punctuation="\u0f0d\u0f0e", chars_per_word=3),
        ScriptTraits(
            "Hani", "Han", space_delimited=False, terminal_punctuation=_CJK_STOPS, dense=True, chars_per_word=2
        ),
        ScriptTraits(
            "Jpan", "Japanese", space_delimited=False, terminal_punctuation=_CJK_STOPS, dense=True, chars_per_word=2
        ),
        ScriptTraits("Hang", "Hangul", terminal_punctuation=_WESTERN + "。", dense=True),
        ScriptTraits("Ethi", "Ethiopic", terminal_punctuation=".!?\u1362\u1367\u1368", dense=True),
        ScriptTraits("Cher", "Cherokee"),
        ScriptTraits("Cans", "Canadian Aboriginal", terminal_punctuation=".!?\u166e"),
        ScriptTraits("Mong", "Mongolian", terminal_punctuation=".!?\u1803\u1809"),
        ScriptTraits("Tfng", "Tifinagh"),
        ScriptTraits("Zyyy", "Common (no letters)"),
    )
}

# Letter ranges per script. Kana is detected separately to tell Japanese from Chinese.
_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    "Latn": ((0x41, 0x5A), (0x61, 0x7A), (0xAA, 0xAA), (0xBA, 0xBA), (0xC0, 0xD6), (0xD8, 0xF6),
             (0xF8, 0x24F), (0x250, 0x2AF), (0x1D00, 0x1D7F), (0x1E00, 0x1EFF), (0x2C60, 0x2C7F),
             (0xA720, 0xA7FF), (0xAB30, 0xAB6F), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A)),
    "Cyrl": ((0x400, 0x52F), (0x1C80, 0x1C8F), (0x2DE0, 0x2DFF), (0xA640, 0xA69F)),
    "Grek": ((0x370, 0x3FF), (0x1F00, 0x1FFF)),
    "Armn": ((0x531, 0x58F), (0xFB13, 0xFB17)),
    "Hebr": ((0x591, 0x5FF), (0xFB1D, 0xFB4F)),
    "Arab": ((0x600, 0x6FF), (0x750, 0x77F), (0x8A0, 0x8FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
    "Syrc": ((0x700, 0x74F),),
    "Thaa": ((0x780, 0x7BF),),
    "Deva": ((0x900, 0x97F), (0xA8E0, 0xA8FF)),
    "Beng": ((0x980, 0x9FF),),
    "Guru": ((0xA00, 0xA7F),),
    "Gujr": ((0xA80, 0xAFF),),
    "Orya": ((0xB00, 0xB7F),),
    "Taml": ((0xB80, 0xBFF),),
    "Telu": ((0xC00, 0xC7F),),
    "Knda": ((0xC80, 0xCFF),),
    "Mlym": ((0xD00, 0xD7F),),
    "Sinh": ((0xD80, 0xDFF),),
    "Thai": ((0xE00, 0xE7F),),
    "Laoo": ((0xE80, 0xEFF),),
    "Tibt": ((0xF00, 0xFFF),),
    "Mymr": ((0x1000, 0x109F), (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F)),
    "Geor": ((0x10A0, 0x10FF), (0x1C90, 0x1CBF), (0x2D00, 0x2D2F)),
    "Hang": ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF)),
    "Ethi": ((0x1200, 0x139F), (0x2D80, 0x2DDF), (0xAB00, 0xAB2F)),
    "Cher": ((0x13A0, 0x13FF), (0xAB70, 0xABBF)),
    "Cans": ((0x1400, 0x167F), (0x18B0, 0x18FF)),
    "Khmr": ((0x1780, 0x17FF), (0x19E0, 0x19FF)),
    "Mong": ((0x1800, 0x18AF),),
    "Tfng": ((0x2D30, 0x2D7F),),
    "Kana": ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9D)),
    "Hani": ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)),
}

_CODES: tuple[str, ...] = ("Zyyy", *_RANGES)
_INDEX = {code: i for i, code in enumerate(_CODES)}
_table = bytearray(0x110000)
for _code, _ranges in _RANGES.items():
    for _lo, _hi in _ranges:
        _table[_lo:_hi + 1] = bytes([_INDEX[_code]]) * (_hi - _lo + 1)
_TABLE = bytes(_table)
del _table
_LATN, _HANI, _KANA, _HANG = _INDEX["Latn"], _INDEX["Hani"], _INDEX["Kana"], _INDEX["Hang"]
_NOT_ASCII_LETTERS = bytes(b for b in range(256) if not (65 <= b <= 90 or 97 <= b <= 122))
_ASCII = bytes(range(128))

# Scripts whose words are not separated by spaces: their letters are counted as words.
CHARACTER_WORD_RANGES: tuple[tuple[int, int], ...] = tuple(
    r for code in ("Thai", "Laoo", "Khmr", "Mymr", "Tibt", "Kana", "Hani") for r in _RANGES[code]
)


@dataclass(frozen=True, slots=True)
class ScriptProfile:
    """The dominant script of a text, its share of the letters, and the letter count per script."""

    code: str
    share: float
    counts: dict[str, int]

    @property
    def traits(self) -> ScriptTraits:
        return TRAITS[self.code]

    @property
    def has_character_words(self) -> bool:
        """True when any sampled letter belongs to a script without spaces between words."""
        return any(c in self.counts for c in ("Hani", "Kana", "Jpan", "Thai", "Laoo", "Khmr", "Mymr", "Tibt"))


_LATIN_ONLY = ScriptProfile("Latn", 1.0, {"Latn": 1})
_NO_LETTERS = ScriptProfile("Zyyy", 0.0, {})


def detect_script(text: str, sample_chars: int = SAMPLE_CHARS) -> ScriptProfile:
    """The dominant script of `text`, judged on its first `sample_chars` characters and its last
    quarter as many (so a document that switches script late is still seen as mixed)."""
    if len(text) > sample_chars:
        sample = text[:sample_chars] + text[-(sample_chars // 4):]
    else:
        sample = text
    if sample.isascii():
        # ASCII letters are Latin; an ASCII text without letters has no script
        return _LATIN_ONLY if any(c.isalpha() for c in sample) else _NO_LETTERS
    # ASCII letters are counted on bytes in C; the other characters are few in most texts and are
    # counted per distinct character
    raw: Counter[int] = Counter()
    encoded = sample.encode("utf-8", "surrogatepass")
    ascii_letters = len(encoded.translate(None, _NOT_ASCII_LETTERS))
    if ascii_letters:
        raw[_LATN] = ascii_letters
    table = _TABLE
    others = encoded.translate(None, _ASCII).decode("utf-8", "surrogatepass")  # the non-ASCII characters
    for ch, n in Counter(others).items():
        i = table[ord(ch)]
        if i:
            raw[i] += n
    if not raw:
        return _NO_LETTERS
    total = sum(raw.values())
    counts = {_CODES[i]: n for i, n in raw.items()}
    kana = counts.get("Kana", 0)
    if kana:
        han = counts.get("Hani", 0)
        if kana >= KANA_SHARE_FOR_JAPANESE * (kana + han):
            counts.pop("Kana")
            counts["Jpan"] = kana + counts.pop("Hani", 0)
    best = max(counts, key=counts.__getitem__)
    if best == "Kana":  # kana alone, without enough weight to be called Japanese above
        best = "Jpan"
    return ScriptProfile(best, counts[best] / total, counts)


def script_traits(code: str) -> ScriptTraits:
    """Traits of a script by ISO 15924 code; unknown codes get the traits of a spaced alphabet."""
    return TRAITS.get(code) or ScriptTraits(code, code)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def first_non_ascii_script(text: str) -> str:
    """The script of the first non-ASCII character (`Zyyy` for none or a non-letter): a one-lookup
    hint for callers that only need to know whether a text might be in a script of its own."""
    m = _NON_ASCII.search(text)
    return _CODES[_TABLE[ord(m.group())]] if m else "Zyyy"
