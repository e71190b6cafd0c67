"""Which FineWeb-2 config a document is judged by: its `lang.code` and script -> `<iso639-3>_<Script>`.

thresher labels languages with ISO 639-1 codes where one exists (else ISO 639-3), FineWeb-2 names
its configs by ISO 639-3 code and ISO 15924 script (`deu_Latn`). For a two-letter code the
candidates below are tried in order, with the document's script, and the first pair that has a
config wins. Where ISO 639-1 names a macrolanguage, FineWeb-2 (following GlotLID) has a config for
an individual language instead, which comes first: Arabic `ar` -> `arb` (Standard Arabic), Chinese
`zh` -> `cmn` (Mandarin), Malay `ms` -> `zsm`, Swahili `sw` -> `swh`, Estonian `et` -> `ekk`,
Latvian `lv` -> `lvs`, Norwegian `no`/`nb` -> `nob`, Uzbek `uz` -> `uzn`, Azerbaijani `az` -> `azj`
(`azb` in Arabic script), Mongolian `mn` -> `khk`, Albanian `sq` -> `als`, Pashto `ps` -> `pbt`,
Tagalog `tl` -> `fil`, Kurdish `ku` -> `kmr` (`ckb` in Arabic script), Nepali `ne` -> `npi`,
Oriya `or` -> `ory`, Yiddish `yi` -> `ydd`, Guarani `gn` -> `gug`, Quechua `qu` -> `quy`,
Fulah `ff` -> `fuv`, Oromo `om` -> `gaz`, Akan `ak` -> `twi`, Malagasy `mg` -> `plt`,
Serbo-Croatian `sh` -> `srp`/`hrv`/`bos`, Persian `fa` -> `fas`.

A three-letter code is used as it is, but a macrolanguage's (`zho`, `ara`: the code of a canonical
label, `thresher.lang.labels`) takes its 639-1 code's candidates. The script is the document's
`lang.script` annotation, else the dominant script of its text. A pair without a config (English:
FineWeb-2 has none) takes the rule set's `fallback`.
"""

from __future__ import annotations

# ISO 639-1 -> ISO 639-3 candidates, most likely FineWeb-2 config first (macrolanguages: the
# individual language FineWeb-2 has a config for, then the macrolanguage code).
_MACRO = {
    "ar": "arb ara", "zh": "cmn zho yue", "ms": "zsm msa", "sw": "swh swa", "et": "ekk est", "lv": "lvs lav",
    "no": "nob nor nno", "nb": "nob", "nn": "nno", "uz": "uzn uzb", "az": "azj azb aze", "mn": "khk mon",
    "sq": "als sqi", "ps": "pbt pus", "tl": "fil tgl", "ku": "kmr ckb kur", "ne": "npi nep", "or": "ory ori",
    "yi": "ydd yid", "gn": "gug grn", "qu": "quy que", "ff": "fuv ful", "om": "gaz orm", "ak": "twi aka",
    "mg": "plt mlg", "sh": "srp hrv bos hbs", "fa": "fas pes prs", "lah": "pnb", "kr": "knc kau",
    "kv": "kpv kom", "iu": "ike iku", "ik": "esk ipk", "oj": "ojb oji", "cr": "crk cre", "ay": "ayr aym",
    "sc": "srd", "bh": "bho bih", "ug": "uig", "pa": "pan pnb", "hbs": "srp hrv bos",
}
_PLAIN = (
    "aa:aar ab:abk ae:ave af:afr am:amh an:arg as:asm av:ava ba:bak be:bel bg:bul bi:bis bm:bam bn:ben bo:bod "
    "br:bre bs:bos ca:cat ce:che ch:cha co:cos cs:ces cu:chu cv:chv cy:cym da:dan de:deu dv:div dz:dzo ee:ewe "
    "el:ell en:eng eo:epo es:spa eu:eus fi:fin fj:fij fo:fao fr:fra fy:fry ga:gle gd:gla gl:glg gu:guj gv:glv "
    "ha:hau he:heb hi:hin ho:hmo hr:hrv ht:hat hu:hun hy:hye hz:her ia:ina id:ind ie:ile ig:ibo ii:iii io:ido "
    "is:isl it:ita ja:jpn jv:jav ka:kat kg:kon ki:kik kj:kua kk:kaz kl:kal km:khm kn:kan ko:kor ks:kas kw:cor "
    "ky:kir la:lat lb:ltz lg:lug li:lim ln:lin lo:lao lt:lit lu:lub mh:mah mi:mri mk:mkd ml:mal mr:mar mt:mlt "
    "my:mya na:nau nd:nde ng:ndo nr:nbl nv:nav ny:nya oc:oci os:oss pi:pli pl:pol pt:por rm:roh rn:run ro:ron "
    "ru:rus rw:kin sa:san sd:snd se:sme sg:sag si:sin sk:slk sl:slv sm:smo sn:sna so:som sr:srp ss:ssw st:sot "
    "su:sun sv:swe ta:tam te:tel tg:tgk th:tha ti:tir tk:tuk tn:tsn to:ton tr:tur ts:tso tt:tat tw:twi ty:tah "
    "uk:ukr ur:urd ve:ven vi:vie vo:vol wa:wln wo:wol xh:xho yo:yor za:zha zu:zul"
)
ISO_639_3: dict[str, tuple[str, ...]] = {
    **{two: (three,) for two, three in (pair.split(":") for pair in _PLAIN.split())},
    **{code: tuple(candidates.split()) for code, candidates in _MACRO.items()},
}


def _macro_candidates() -> dict[str, tuple[str, ...]]:
    """The macrolanguage's own 639-3 code (`zho`, the code of a canonical label `zho_Hani`) -> the
    candidates of its 639-1 code, so a label finds the individual language's config too."""
    from thresher.lang.labels import ISO_639_1_TO_3

    return {ISO_639_1_TO_3[two]: ISO_639_3[two] for two in _MACRO if two in ISO_639_1_TO_3}


MACRO_3 = _macro_candidates()


def candidates(code: str) -> tuple[str, ...]:
    """The ISO 639-3 codes to try for a language code (`de`, `deu`, `zh-Hant`, `pt_BR`, `zho`)."""
    base = code.replace("_", "-").split("-")[0].lower()
    if base in ISO_639_3:
        return ISO_639_3[base]
    if base in MACRO_3:
        return MACRO_3[base]
    return (base,) if len(base) == 3 and base.isalpha() else ()


def config_key(code: str | None, script: str, available: object) -> str | None:
    """The first `<iso639-3>_<Script>` of `code` in `available` (a container of keys), else None."""
    if not code or code == "und":
        return None
    for three in candidates(code):
        key = f"{three}_{script}"
        if key in available:  # type: ignore[operator]
            return key
    return None
