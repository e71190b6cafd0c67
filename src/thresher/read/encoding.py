"""Which character encoding an HTML payload is in, found as browsers find it (standard library only).

The HTML standard's encoding sniffing (section 13.2.3.2) in order: a byte order mark; the transport
layer's charset (HTTP `Content-Type`); the `<meta>` prescan of the first 1,024 bytes (13.2.3.3,
byte for byte, with its "get an attribute" and "extract a character encoding from a meta element"
algorithms); then, for pages that declare nothing, a frequency guess (`guess_legacy`) where
browsers use locale defaults. Labels map to encodings by the Encoding Standard's table, so
`iso-8859-1`, `latin1` and `ascii` mean windows-1252 and `gb2312` means GBK, as on the web.

Names returned are the Encoding Standard's; `python_codec` gives the codec that decodes each.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

# -- the Encoding Standard's labels ---------------------------------------------------------------

_LABELS_BY_ENCODING = {
    "utf-8": "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8",
    "ibm866": "866 cp866 csibm866 ibm866",
    "iso-8859-2": "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    "iso-8859-3": "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    "iso-8859-4": "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    "iso-8859-5": "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 iso_8859-5:1988",
    "iso-8859-6": "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 iso-8859-6-e "
                  "iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    "iso-8859-7": "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 iso88597 "
                  "iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    "iso-8859-8": "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 iso88598 "
                  "iso_8859-8 iso_8859-8:1988 visual",
    "iso-8859-8-i": "csiso88598i iso-8859-8-i logical",
    "iso-8859-10": "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    "iso-8859-13": "iso-8859-13 iso8859-13 iso885913",
    "iso-8859-14": "iso-8859-14 iso8859-14 iso885914",
    "iso-8859-15": "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    "iso-8859-16": "iso-8859-16",
    "koi8-r": "cskoi8r koi koi8 koi8-r koi8_r",
    "koi8-u": "koi8-ru koi8-u",
    "macintosh": "csmacintosh mac macintosh x-mac-roman",
    "windows-874": "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874",
    "windows-1250": "cp1250 windows-1250 x-cp1250",
    "windows-1251": "cp1251 windows-1251 x-cp1251",
    "windows-1252": "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
                    "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    "windows-1253": "cp1253 windows-1253 x-cp1253",
    "windows-1254": "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 l5 "
                    "latin5 windows-1254 x-cp1254",
    "windows-1255": "cp1255 windows-1255 x-cp1255",
    "windows-1256": "cp1256 windows-1256 x-cp1256",
    "windows-1257": "cp1257 windows-1257 x-cp1257",
    "windows-1258": "cp1258 windows-1258 x-cp1258",
    "x-mac-cyrillic": "x-mac-cyrillic x-mac-ukrainian",
    "gbk": "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
    "gb18030": "gb18030",
    "big5": "big5 big5-hkscs cn-big5 csbig5 x-x-big5",
    "euc-jp": "cseucpkdfmtjapanese euc-jp x-euc-jp",
    "iso-2022-jp": "csiso2022jp iso-2022-jp",
    "shift_jis": "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    "euc-kr": "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 "
              "ksc_5601 windows-949",
    "utf-16be": "unicodefffe utf-16be",
    "utf-16le": "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    "x-user-defined": "x-user-defined",
}
LABELS: dict[str, str] = {label: enc for enc, labels in _LABELS_BY_ENCODING.items() for label in labels.split()}
# The decoder each encoding names on the web: Python's closest codec (the web's GBK decoder is
# GB18030's, its Big5 is Big5-HKSCS, its Shift_JIS and EUC-KR are Microsoft's extensions).
_PYTHON_CODEC = {
    "utf-8": "utf-8", "ibm866": "cp866", "iso-8859-8-i": "iso8859-8", "koi8-r": "koi8-r", "koi8-u": "koi8-u",
    "macintosh": "mac-roman", "windows-874": "cp874", "x-mac-cyrillic": "mac-cyrillic", "gbk": "gb18030",
    "gb18030": "gb18030", "big5": "big5hkscs", "euc-jp": "euc-jp", "iso-2022-jp": "iso2022-jp",
    "shift_jis": "cp932", "euc-kr": "cp949", "utf-16be": "utf-16-be", "utf-16le": "utf-16-le",
    "x-user-defined": "latin-1",
}
_ASCII_WS = b"\t\n\f\r "


def encoding_for_label(label: str | bytes | None) -> str | None:
    """The encoding a label names ("get an encoding": whitespace stripped, ASCII case folded), or None."""
    if label is None:
        return None
    if isinstance(label, bytes):
        label = label.decode("latin-1")
    return LABELS.get(label.strip("\t\n\f\r ").lower()) if label.isascii() else None


def python_codec(encoding: str) -> str:
    """The Python codec that decodes `encoding` (a name from `LABELS`)."""
    codec = _PYTHON_CODEC.get(encoding)
    if codec is None:
        codec = "cp" + encoding[8:] if encoding.startswith("windows-") else encoding.replace("iso-8859-", "iso8859-")
    return codecs.lookup(codec).name


def bom_encoding(data: bytes) -> str | None:
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16be"
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16le"
    return None


# -- the <meta> prescan (13.2.3.3) ----------------------------------------------------------------

def _get_attribute(data: bytes, i: int) -> tuple[tuple[bytes, bytes] | None, int]:
    """The standard's "get an attribute" at `i`: ((name, value) or None, new position). Names and
    values are ASCII-lowered; None also when the input ends inside the attribute."""
    n = len(data)
    while i < n and data[i] in b"\t\n\f\r /":
        i += 1
    if i >= n or data[i] == 0x3E:
        return None, i
    name = bytearray()
    value = bytearray()
    while True:  # attribute name
        if i >= n:
            return None, i
        c = data[i]
        if c == 0x3D and name:
            i += 1
            break
        if c in _ASCII_WS:
            while i < n and data[i] in _ASCII_WS:  # spaces after the name
                i += 1
            if i >= n:
                return None, i
            if data[i] != 0x3D:
                return (bytes(name), b""), i
            i += 1
            break
        if c in b"/>":
            return (bytes(name), b""), i
        name.append(c + 32 if 0x41 <= c <= 0x5A else c)
        i += 1
    while i < n and data[i] in _ASCII_WS:
        i += 1
    if i >= n:
        return None, i
    c = data[i]
    if c in b"\"'":
        quote = c
        i += 1
        while True:
            if i >= n:
                return None, i
            c = data[i]
            i += 1
            if c == quote:
                return (bytes(name), bytes(value)), i
            value.append(c + 32 if 0x41 <= c <= 0x5A else c)
    if c == 0x3E:
        return (bytes(name), b""), i
    while True:
        if i >= n:
            return None, i
        c = data[i]
        if c in _ASCII_WS or c == 0x3E:
            return (bytes(name), bytes(value)), i
        value.append(c + 32 if 0x41 <= c <= 0x5A else c)
        i += 1


def charset_from_content(content: bytes) -> str | None:
    """The standard's "extract a character encoding from a meta element" on a `content` value."""
    s = content.lower()
    pos = 0
    while True:
        k = s.find(b"charset", pos)
        if k < 0:
            return None
        pos = k + 7
        while pos < len(s) and s[pos] in _ASCII_WS:
            pos += 1
        if pos < len(s) and s[pos] == 0x3D:
            pos += 1
            break
    while pos < len(s) and s[pos] in _ASCII_WS:
        pos += 1
    if pos >= len(s):
        return None
    c = s[pos]
    if c in b"\"'":
        end = s.find(bytes([c]), pos + 1)
        return encoding_for_label(s[pos + 1:end]) if end >= 0 else None
    end = pos
    while end < len(s) and s[end] not in _ASCII_WS and s[end] != 0x3B:
        end += 1
    return encoding_for_label(s[pos:end])


def _is_letter(c: int) -> bool:
    return 0x41 <= c <= 0x5A or 0x61 <= c <= 0x7A


# An ordinary start or end tag (not `<meta`), from its "<" to where the prescan's "get an attribute"
# loop stops, in one match: the name skip (every byte up to whitespace or ">"), then the
# attributes as `_get_attribute` reads them, one per repetition: separators, the name (its first
# byte may be "=" or a quote), and, when "=" follows, a value that is double- or single-quoted,
# unquoted or empty before ">". Every repetition is possessive and the alternatives start with
# disjoint bytes, so the match is the one the byte loop makes, in linear time. Group 1 ends after
# the last attribute that ended inside the data; the match ends at ">" or at the end of the data
# exactly when the byte loop does. Anything else (a quoted value the data cuts short, "=" at the
# end) is left to `_get_attribute` from the end of group 1.
_PRESCAN_ATTRIBUTE = (
    rb"[\t\n\f\r /]*+[^\t\n\f\r />][^\t\n\f\r /=>]*+"
    rb"(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:\"[^\"]*+\"|'[^']*+'|[^\t\n\f\r >\"'][^\t\n\f\r >]*+|(?=>))"
    rb"|(?![\t\n\f\r ]*+=))"
)
_PRESCAN_TAG = re.compile(rb"[^\t\n\f\r >]*+((?:" + _PRESCAN_ATTRIBUTE + rb")*+)[\t\n\f\r /]*+")
# The standard asks for at least 1,024 bytes; the html5lib suite expects a `<meta>` after an 8 KB
# comment to count, and pages with long inline scripts before their `<meta>` exist.
PRESCAN_BYTES = 16384


def prescan(data: bytes, limit: int = PRESCAN_BYTES) -> str | None:
    """The encoding the first `limit` bytes declare in a `<meta>` (the standard's prescan), or None."""
    data = data[:limit]
    if b"<meta" not in data.lower():
        return None  # only a "<meta" (any case) can declare an encoding: the common page's answer
    return prescan_loop(data, _skip_tag)


def _skip_attributes(data: bytes, i: int) -> int:
    """Where the standard's "get an attribute" loop stops, from `i`."""
    while True:
        attr, i = _get_attribute(data, i)
        if attr is None:
            return i


def skip_tag_bytewise(data: bytes, i: int) -> int:
    """Where the prescan leaves an ordinary tag starting at `i`, byte by byte as the standard says."""
    n = len(data)
    while i < n and data[i] not in b"\t\n\f\r >":
        i += 1
    return _skip_attributes(data, i)


def _skip_tag(data: bytes, i: int) -> int:
    """`skip_tag_bytewise` in one `_PRESCAN_TAG` match, the byte loop taking over only where the data
    ends inside an attribute."""
    m = _PRESCAN_TAG.match(data, i)
    assert m is not None  # every part of the pattern may match nothing
    i = m.end()
    if i < len(data) and data[i] != 0x3E:
        i = _skip_attributes(data, m.end(1))
    return i


def prescan_loop(data: bytes, skip_tag: Callable[[bytes, int], int]) -> str | None:
    """The prescan's walk over `data` (already cut to its limit), ordinary tags skipped by `skip_tag`."""
    n = len(data)
    i = 0
    while i < n:
        if data[i] != 0x3C:  # a byte that is not "<" does nothing: skip to the next "<" at once
            i = data.find(b"<", i)
            if i < 0:
                return None
        if data.startswith(b"<!--", i):
            end = data.find(b"-->", i + 2)  # "<!-->" closes at once, as in the tokenizer
            if end < 0:
                return None
            i = end + 3
            continue
        if data[i:i + 5].lower() == b"<meta" and i + 5 < n and data[i + 5] in b"\t\n\f\r /":
            i += 6
            seen: set[bytes] = set()
            got_pragma = False
            need_pragma: bool | None = None
            charset: str | None = None
            while True:
                attr, i = _get_attribute(data, i)
                if attr is None:
                    break
                name, value = attr
                if name in seen:
                    continue
                seen.add(name)
                if name == b"http-equiv":
                    got_pragma = got_pragma or value == b"content-type"
                elif name == b"content" and charset is None:
                    found = charset_from_content(value)
                    if found is not None:
                        charset, need_pragma = found, True
                elif name == b"charset" and charset is None:
                    charset, need_pragma = encoding_for_label(value), False
            if need_pragma is not None and (got_pragma or not need_pragma) and charset is not None:
                if charset in ("utf-16be", "utf-16le"):
                    return "utf-8"
                return "windows-1252" if charset == "x-user-defined" else charset
        elif data[i] == 0x3C and i + 1 < n and (_is_letter(data[i + 1]) or (
                data[i + 1] == 0x2F and i + 2 < n and _is_letter(data[i + 2]))):
            i = skip_tag(data, i)
        elif data.startswith((b"<!", b"</", b"<?"), i):
            end = data.find(b">", i + 2)
            if end < 0:
                return None
            i = end
        i += 1
    return None


# -- undeclared pages: a frequency guess ----------------------------------------------------------

# How much of a page the guess reads: more adds time, not accuracy (the first 64 KB of a legacy
# page hold thousands of non-ASCII characters).
_GUESS_BYTES = 65536
# Multi-byte encodings and what their frequent characters are, as byte ranges of the national
# standard each extends (those standards order characters by frequency: GB 2312 level 1 is the
# 3,755 commonest hanzi, Big5 level 1 the 5,401 commonest, JIS X 0208 level 1 and KS X 1001's
# hangul block likewise), with the full-width punctuation rows.
_MULTIBYTE = {
    "gbk": ("gb2312", ((0xB0, 0xD7), (0xA1, 0xA3))),
    "big5": ("big5", ((0xA4, 0xC6), (0xA1, 0xA3))),
    "shift_jis": ("shift_jis", ((0x88, 0x98), (0x81, 0x83))),
    "euc-jp": ("euc_jp", ((0xB0, 0xCF), (0xA1, 0xA5))),
    "euc-kr": ("euc_kr", ((0xB0, 0xC8), (0xA1, 0xA3))),
}
# The commonest characters of each multi-byte encoding's language (Chinese, Japanese, Korean
# frequency lists): Korean EUC-KR bytes also read as frequent GB 2312 hanzi, so the share of these
# decides between readings that are both plausible.
_TOP_CHARS = {
    "gbk": (
        "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里用道行所然家"
        "种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实"
    ),
    "big5": (
        "的一是不了在人有我他這個們中來上大為和國地到以說時要就出會可也你對生能而子那得於著下自之年過發後作裡用道行所然家"
        "種事成方多經麼去法學如都同現當沒動面起看定天分還進好小部其些主樣理心她本前開但因只從想實"
    ),
    "shift_jis": "のにはをたがでてとしれさあいうかなるこまもすりらっくだつよきんけや一日人年大十二本中出三見月生",
    "euc-jp": "のにはをたがでてとしれさあいうかなるこまもすりらっくだつよきんけや一日人年大十二本中出三見月生",
    "euc-kr": "이다는의에가을하고서지로한기도를사리자어수그일대나있것들아니시정인보적해게상라주만면요부원",
}
# Non-ASCII bytes of a double-byte page come in runs; in Latin-script text most stand alone
# between ASCII letters. Below this share of non-ASCII bytes beside another, a page is single-byte.
_MIN_PAIRED_SHARE = 0.5
# A multi-byte reading is taken when this share of its non-ASCII characters is frequent and at most
# `_MAX_ERROR_SHARE` of them undecodable (a single-byte page read as GBK falls far below both).
_MIN_FREQUENT_SHARE = 0.6
_MAX_ERROR_SHARE = 0.01
# Single-byte encodings of non-Latin scripts, with the ten commonest letters of their languages.
_SCRIPT_LETTERS = {
    "windows-1251": "оеаинтсрвлі",
    "koi8-r": "оеаинтсрвл",
    "windows-1253": "αοειτνσηυρ",
    "windows-1255": "יוהאלרמתבנ",
    "windows-1256": "اليمونرتبع",
    "windows-874": "านรอกเงมยล",
}
# Latin single-byte encodings, each with the non-ASCII letters common in its languages (weight 1)
# and the rarer ones (weight 0.3); any other non-ASCII letter counts -1, an undefined byte -2.
_LATIN_LETTERS = {
    "windows-1252": ("éèàäöüßçñáíóúãêåøæôâìòù¿¡", "õîûëïœýÿ"),
    "windows-1250": ("áéíóúýčřšžěůąęłśżźćöüőűăîâșțşţ", "ńĺľťďňŕđäô"),
    "windows-1254": ("çğıöşüâ", "îû"),
    "windows-1257": ("ąčęėįšųūžāēģīķļņõäöü", "ōŗ"),
}
# Fewer non-ASCII bytes than this are no evidence of any encoding (windows-1252 then, the default).
_MIN_EVIDENCE_BYTES = 8
# A page whose words with non-ASCII letters mostly contain ASCII letters too is in a Latin script.
_LATIN_MIX_SHARE = 0.3


def _multibyte_score(sample: bytes, encoding: str) -> float:
    base, ranges = _MULTIBYTE[encoding]
    text = sample.decode(python_codec(encoding), "replace")
    chars = [c for c in text if c > "\x7f"]
    if not chars:
        return 0.0
    errors = chars.count("\ufffd")
    if errors > _MAX_ERROR_SHARE * len(chars):
        return 0.0
    top = _TOP_CHARS[encoding]
    frequent = 0
    verdict: dict[str, bool] = {}
    for c in chars:
        ok = verdict.get(c)
        if ok is None:
            try:
                lead = c.encode(base)[0]
            except UnicodeEncodeError:
                lead = -1
            ok = verdict[c] = any(lo <= lead <= hi for lo, hi in ranges) or "\u3040" <= c <= "\u30ff" and base in (
                "shift_jis", "euc_jp")
        frequent += ok
    share = frequent / len(chars)
    if share < _MIN_FREQUENT_SHARE:
        return 0.0
    return share + sum(1 for c in chars if c in top) / len(chars)


def _utf16_without_bom(sample: bytes) -> str | None:
    """UTF-16 text of a Latin-script page has a NUL in every other byte."""
    if len(sample) < 64 or sample.count(0) < len(sample) // 4:
        return None
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    if even > 3 * odd:
        return "utf-16be"
    if odd > 3 * even:
        return "utf-16le"
    return None


def guess_legacy(data: bytes) -> str | None:
    """The likeliest legacy encoding of a page that declares none and is not UTF-8, or None when
    nothing stands out (callers then use windows-1252, the web's default)."""
    sample = data[:_GUESS_BYTES]
    utf16 = _utf16_without_bom(sample)
    if utf16:
        return utf16
    high = [i for i, b in enumerate(sample) if b > 0x7F]
    if len(high) < _MIN_EVIDENCE_BYTES:
        return None
    high_set = set(high)
    paired = sum(1 for i in high if i - 1 in high_set or i + 1 in high_set) / len(high)
    if paired >= _MIN_PAIRED_SHARE:
        best, best_score = None, 0.0
        for encoding in _MULTIBYTE:
            score = _multibyte_score(sample, encoding)
            if score > best_score:
                best, best_score = encoding, score
        if best is not None:
            return best
    # single-byte: a Latin script (accented letters inside ASCII words) or another alphabet
    words = [w for w in sample.split() if not w.isascii()]
    if not words:
        return None
    mixed = sum(1 for w in words if any(0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A for b in w)) / len(words)
    scores: dict[str, float] = {}
    if mixed >= _LATIN_MIX_SHARE:
        for encoding, (common, rare) in _LATIN_LETTERS.items():
            text = sample.decode(python_codec(encoding), "replace")
            score = 0.0
            for c in text:
                if c > "\x7f":
                    if c.isalpha() or c in common:
                        low = c.lower()
                        score += 1.0 if low in common else 0.3 if low in rare else -1.0
                    elif c == "\ufffd" or c < "\xa0":
                        score -= 2.0  # undefined byte or C1 control: not this encoding
            scores[encoding] = score
    else:
        for encoding, letters in _SCRIPT_LETTERS.items():
            text = sample.decode(python_codec(encoding), "replace")
            non_ascii = [c for c in text if c > "\x7f"]
            if not non_ascii:
                continue
            # frequent letters as written (lower case: text is mostly lower case, which tells
            # KOI8-R from windows-1251), undecodable bytes against
            hits = sum(1 for c in non_ascii if c in letters)
            scores[encoding] = (hits - 3 * non_ascii.count("\ufffd")) / len(non_ascii)
    if not scores or max(scores.values()) <= 0:
        return None
    # ties go to the order above (windows-1252 first: the web's default)
    return max(scores, key=lambda e: scores[e])


def sniff(data: bytes, transport: str | None = None, guess: bool = True) -> tuple[str, str]:
    """(encoding, how it was found) for an HTML payload: "bom", "transport", "meta", "utf-8" (valid
    UTF-8 that declares nothing: the common case in crawls), "guess" or "default" (windows-1252)."""
    enc = bom_encoding(data)
    if enc:
        return enc, "bom"
    enc = encoding_for_label(transport)
    if enc:
        return enc, "transport"
    enc = prescan(data)
    if enc:
        return enc, "meta"
    if data.isascii():
        return "windows-1252", "default"
    try:
        data.decode("utf-8")
        return "utf-8", "utf-8"
    except UnicodeDecodeError:
        pass
    if guess:
        enc = guess_legacy(data)
        if enc:
            return enc, "guess"
    return "windows-1252", "default"
