"""Stop-word lists for the Gopher stop-word rule, for languages beyond the hand-written ones in
`thresher.quality.gopher`.

Source: word frequencies counted here on lingua's test sentences (Leipzig corpora, Apache-2.0; 1,000
sentences per language): for each language, the ten words present in the most sentences, numbers
and a few content words (`ભારત` "India", Malay `lagu`/`download` from song-download spam) removed.
A language is listed only when its ten words appear, summed over the list, at least twice per
sentence on average, so that ordinary prose of 50 words shows two of them; agglutinative
languages (Finnish, Turkish, Korean, Tamil, ...) fall below that and have no list, so the rule does
not apply to them. For Chinese and Japanese the entries are characters, as the tokenizer counts
words there.
"""

from __future__ import annotations

FREQUENT_WORDS: dict[str, frozenset[str]] = {
    "af": frozenset(['die', 'en', 'is', 'van', 'in', 'n', 'het', 'wat', 'dit', 'te']),
    "bg": frozenset(['на', 'и', 'в', 'от', 'за', 'се', 'да', 'е', 'не', 'с']),
    "bs": frozenset(['je', 'i', 'u', 'se', 'na', 'su', 'od', 'da', 'za', 'a']),
    "ca": frozenset(['de', 'la', 'i', 'a', 'el', 'que', 'en', 'per', 'les', 'del']),
    "cy": frozenset(['yn', 'y', 'a', 'o', 'i', 'ar', 'ei', 'yr', 'ac', 'mae']),
    "da": frozenset(['og', 'i', 'er', 'at', 'en', 'det', 'til', 'på', 'af', 'med']),
    "el": frozenset(['και', 'το', 'να', 'του', 'με', 'την', 'της', 'για', 'η', 'που']),
    "eo": frozenset(['la', 'de', 'kaj', 'en', 'estas', 'al', 'mi', 'ne', 'ke', 'estis']),
    "fa": frozenset(['در', 'و', 'به', 'از', 'است', 'می', 'که', 'این', 'را', 'با']),
    "ga": frozenset(['an', 'a', 'na', 'is', 'agus', 'i', 'ar', 'é', 'le', 'go']),
    "hi": frozenset(['है', 'के', 'में', 'की', 'को', 'से', 'का', 'और', 'हैं', 'भी']),
    "hr": frozenset(['i', 'je', 'u', 'se', 'na', 'za', 'su', 'od', 'da', 's']),
    "hu": frozenset(['a', 'az', 'és', 'hogy', 'is', 'nem', 'egy', 'de', 'meg', 'volt']),
    "is": frozenset(['að', 'og', 'í', 'á', 'er', 'sem', 'til', 'það', 'ekki', 'um']),
    "ja": frozenset(['の', 'い', 'で', 'に', 'て', 'が', 'な', 'す', 'し', 'る']),
    "mi": frozenset(['te', 'i', 'ki', 'ngā', 'o', 'e', 'a', 'he', 'ka', 'kei']),
    "mk": frozenset(['на', 'во', 'и', 'се', 'од', 'со', 'за', 'да', 'е', 'како']),
    "nb": frozenset(['og', 'i', 'er', 'til', 'av', 'for', 'det', 'som', 'på', 'med']),
    "nn": frozenset(['i', 'og', 'er', 'som', 'av', 'til', 'ein', 'på', 'det', 'den']),
    "pa": frozenset(['ਹੈ', 'ਦੇ', 'ਦੀ', 'ਨੂੰ', 'ਦਾ', 'ਅਤੇ', 'ਤੇ', 'ਨੇ', 'ਇਸ', 'ਨਾਲ']),
    "pl": frozenset(['w', 'na', 'i', 'z', 'się', 'do', 'nie', 'że', 'to', 'jest']),
    "ro": frozenset(['de', 'a', 'la', 'în', 'cu', 'si', 'şi', 'este', 'care', 'din']),
    "sl": frozenset(['je', 'in', 'v', 'na', 'se', 'za', 'da', 'ki', 'pa', 'z']),
    "so": frozenset(['oo', 'ka', 'iyo', 'ku', 'ah', 'u', 'waa', 'ee', 'waxaa', 'la']),
    "sq": frozenset(['e', 'të', 'në', 'dhe', 'i', 'me', 'një', 'nga', 'për', 'që']),
    "sr": frozenset(['је', 'у', 'и', 'се', 'на', 'су', 'да', 'а', 'од', 'за']),
    "st": frozenset(['ho', 'le', 'ka', 'e', 'ya', 'ba', 'a', 'o', 'ha', 'ke']),
    "sv": frozenset(['och', 'i', 'att', 'en', 'för', 'som', 'på', 'av', 'är', 'till']),
    "sw": frozenset(['ya', 'na', 'wa', 'kwa', 'katika', 'ni', 'za', 'la', 'kuwa']),
    "tl": frozenset(['sa', 'ang', 'ng', 'ay', 'na', 'mga', 'at', 'isang', 'ito', 'si']),
    "tn": frozenset(['go', 'a', 'le', 'ka', 'ba', 'e', 'o', 're', 'ya', 'fa']),
    "ts": frozenset(['ku', 'hi', 'na', 'ya', 'eka', 'va', 'wa', 'ta', 'nga', 'ka']),
    "ur": frozenset(['کے', 'کی', 'ہے', 'میں', 'سے', 'اور', 'کا', 'کو', 'نے', 'اس']),
    "vi": frozenset(['và', 'có', 'của', 'các', 'là', 'cho', 'được', 'trong', 'với', 'những']),
    "zh": frozenset(['的', '一', '是', '不', '在', '有', '了', '人', '这', '我']),
}
