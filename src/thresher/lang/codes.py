"""Language codes: what the writing system alone decides, and the code spellings of the detectors.

Codes are ISO 639-1 where one exists, else ISO 639-3; `und` (ISO 639-2 "undetermined") means no
language was decided, and comes with a reason.

A script decides the language when, on the web, practically only one language is written in it:
Thai, Georgian, Greek, Armenian, Hangul, Japanese kana, and most Indic scripts of one language.
Scripts shared by many languages (Latin, Cyrillic, Arabic, Devanagari, Bengali, Ethiopic, Syriac)
need a statistical detector (the `lang` extra).
"""

from __future__ import annotations

UNDETERMINED = "und"

# ISO 15924 script -> the language written in it (Han without kana is read as Chinese: Japanese
# text carries kana, see `thresher.lang.script.KANA_SHARE_FOR_JAPANESE`).
SCRIPT_LANGUAGE: dict[str, str] = {
    "Thai": "th",
    "Geor": "ka",
    "Grek": "el",
    "Armn": "hy",
    "Hebr": "he",  # Yiddish and Ladino are written in it too, rarely on the web
    "Hang": "ko",
    "Jpan": "ja",
    "Hani": "zh",
    "Laoo": "lo",
    "Khmr": "km",
    "Mymr": "my",
    "Sinh": "si",
    "Tibt": "bo",
    "Thaa": "dv",
    "Guru": "pa",
    "Gujr": "gu",
    "Orya": "or",
    "Taml": "ta",
    "Telu": "te",
    "Knda": "kn",
    "Mlym": "ml",
    "Cher": "chr",
    "Mong": "mn",
}

# Scripts in which several languages are commonly written: the script does not decide.
SHARED_SCRIPTS = frozenset({"Latn", "Cyrl", "Arab", "Deva", "Beng", "Ethi", "Syrc", "Cans", "Tfng"})

# CLD2's own spellings -> ISO 639-1 (CLD2 keeps some withdrawn codes and tags regional variants).
CLD2_CODES: dict[str, str] = {
    "iw": "he",
    "in": "id",
    "ji": "yi",
    "jw": "jv",
    "mo": "ro",
    "no": "nb",  # CLD2's "Norwegian" is Bokmål; Nynorsk is "nn"
    "zh-Hant": "zh",
    "sr-ME": "sr",
}


def from_cld2(code: str) -> str:
    """ISO code of a CLD2 language code; `und` for CLD2's unknown (`un`) and private (`xx-`) codes."""
    if code == "un" or code.startswith("xx"):
        return UNDETERMINED
    return CLD2_CODES.get(code, code)


def normalize_code(code: str) -> str:
    """A user-written language code in the form detection writes: lowercase, region dropped
    (`en-US` -> `en`), withdrawn codes replaced (`iw` -> `he`)."""
    base = code.strip().replace("_", "-").split("-")[0].lower()
    return CLD2_CODES.get(base, base)


# The script each language is written in, where it is one (CLD2 answers by script first, so a
# text it calls `ru` is Cyrillic); languages missing here are Latin unless listed as ambiguous.
LANGUAGE_SCRIPT: dict[str, str] = {
    **{c: "Cyrl" for c in ("ru", "uk", "bg", "mk", "be", "kk", "ky", "tg", "tt", "ba", "cv", "ce", "os", "mn")},
    **{c: "Arab" for c in ("ar", "fa", "ur", "ps", "ug", "sd", "ckb")},
    **{c: "Hebr" for c in ("he", "yi")},
    **{c: "Deva" for c in ("hi", "mr", "ne", "sa", "bh", "mai")},
    **{c: "Beng" for c in ("bn", "as")},
    **{c: "Ethi" for c in ("am", "ti")},
    **{lang: script for script, lang in SCRIPT_LANGUAGE.items() if script not in ("Hebr", "Mong")},
}
# Languages commonly written in more than one script: the text decides.
MULTI_SCRIPT_LANGUAGES = frozenset({"sr", "bs", "az", "uz", "tk", "ku", "pa", "sd", "ms", "mn", "ha"})
