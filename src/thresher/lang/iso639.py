"""ISO 639-3 codes of the languages that have an ISO 639-1 code, for the labels of fastText
language-ID models: GlotLID and OpenLID name a language `eng_Latn` (639-3 and ISO 15924 script),
lid.176 `en` (639-1 where there is one). thresher writes 639-1 where one exists, so both become `en`.

Macrolanguages: the 639-1 code stands for the macrolanguage, and the individual languages the
models name for its standard form map to it too (`arb` Standard Arabic and `ara` -> `ar`, `cmn` ->
`zh`, `pes` -> `fa`, `zsm` -> `ms`, `swh` -> `sw`, ...). Languages without a 639-1 code keep
their 639-3 code (`yue`, `ceb`, `ast`). The table applies to labels with a script (`als_Latn` is
Tosk Albanian, `sq`); lid.176's bare labels are its own codes (its `als` is Alemannic, kept as is).
"""

from __future__ import annotations

ISO_639_3_TO_1: dict[str, str] = {
    "aar": "aa", "abk": "ab", "afr": "af", "aka": "ak", "amh": "am", "ara": "ar", "arg": "an", "asm": "as",
    "ava": "av", "ave": "ae", "aym": "ay", "aze": "az", "bak": "ba", "bam": "bm", "bel": "be", "ben": "bn",
    "bis": "bi", "bod": "bo", "bos": "bs", "bre": "br", "bul": "bg", "cat": "ca", "ces": "cs", "cha": "ch",
    "che": "ce", "chu": "cu", "chv": "cv", "cor": "kw", "cos": "co", "cre": "cr", "cym": "cy", "dan": "da",
    "deu": "de", "div": "dv", "dzo": "dz", "ell": "el", "eng": "en", "epo": "eo", "est": "et", "eus": "eu",
    "ewe": "ee", "fao": "fo", "fas": "fa", "fij": "fj", "fin": "fi", "fra": "fr", "fry": "fy", "ful": "ff",
    "gla": "gd", "gle": "ga", "glg": "gl", "glv": "gv", "grn": "gn", "guj": "gu", "hat": "ht", "hau": "ha",
    "heb": "he", "her": "hz", "hin": "hi", "hmo": "ho", "hrv": "hr", "hun": "hu", "hye": "hy", "ibo": "ig",
    "ido": "io", "iii": "ii", "iku": "iu", "ile": "ie", "ina": "ia", "ind": "id", "ipk": "ik", "isl": "is",
    "ita": "it", "jav": "jv", "jpn": "ja", "kal": "kl", "kan": "kn", "kas": "ks", "kat": "ka", "kau": "kr",
    "kaz": "kk", "khm": "km", "kik": "ki", "kin": "rw", "kir": "ky", "kom": "kv", "kon": "kg", "kor": "ko",
    "kua": "kj", "kur": "ku", "lao": "lo", "lat": "la", "lav": "lv", "lim": "li", "lin": "ln", "lit": "lt",
    "ltz": "lb", "lub": "lu", "lug": "lg", "mah": "mh", "mal": "ml", "mar": "mr", "mkd": "mk", "mlg": "mg",
    "mlt": "mt", "mon": "mn", "mri": "mi", "msa": "ms", "mya": "my", "nau": "na", "nav": "nv", "nbl": "nr",
    "nde": "nd", "ndo": "ng", "nep": "ne", "nld": "nl", "nno": "nn", "nob": "nb", "nor": "no", "nya": "ny",
    "oci": "oc", "oji": "oj", "ori": "or", "orm": "om", "oss": "os", "pan": "pa", "pli": "pi", "pol": "pl",
    "por": "pt", "pus": "ps", "que": "qu", "roh": "rm", "ron": "ro", "run": "rn", "rus": "ru", "sag": "sg",
    "san": "sa", "sin": "si", "slk": "sk", "slv": "sl", "sme": "se", "smo": "sm", "sna": "sn", "snd": "sd",
    "som": "so", "sot": "st", "spa": "es", "sqi": "sq", "srd": "sc", "srp": "sr", "ssw": "ss", "sun": "su",
    "swa": "sw", "swe": "sv", "tah": "ty", "tam": "ta", "tat": "tt", "tel": "te", "tgk": "tg", "tgl": "tl",
    "tha": "th", "tir": "ti", "ton": "to", "tsn": "tn", "tso": "ts", "tuk": "tk", "tur": "tr", "twi": "tw",
    "uig": "ug", "ukr": "uk", "urd": "ur", "uzb": "uz", "ven": "ve", "vie": "vi", "vol": "vo", "wln": "wa",
    "wol": "wo", "xho": "xh", "yid": "yi", "yor": "yo", "zha": "za", "zho": "zh", "zul": "zu",
}
# the individual languages the models name for a macrolanguage's standard form (not the code a
# 639-1 code converts back to: `zh` is `zho`, see `thresher.lang.labels`)
INDIVIDUAL_TO_1: dict[str, str] = {
    "arb": "ar", "cmn": "zh", "pes": "fa", "zsm": "ms", "swh": "sw", "ekk": "et", "lvs": "lv", "khk": "mn",
    "npi": "ne", "ory": "or", "pbt": "ps", "plt": "mg", "uzn": "uz", "azj": "az", "gaz": "om", "quy": "qu",
    "ydd": "yi", "als": "sq", "kmr": "ku", "fil": "tl",
}
ISO_639_3_TO_1.update(INDIVIDUAL_TO_1)
