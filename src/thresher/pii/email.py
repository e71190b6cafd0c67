"""E-mail addresses, plain and obfuscated.

Plain: `local@domain.tld` with an RFC 5321 local part (at most 64 characters of letters, digits and
`._%+-`) and a domain of dot-separated labels ending in an alphabetic top-level domain of 2 to 24
letters; letters include those of the alphabetic scripts (`_INTL`), so internationalized addresses
(`müller@bücher.de`) are found whole. Every quantifier is bounded and the local part may only start
where a run of local-part characters starts (the look-behind), so a 10^5-character run without `@`
costs one bounded attempt, not one per position: matching is linear in the text.

Obfuscated (`name at host dot com`, `name [at] host [dot] com`, `name(at)host(dot)org`): a separate,
opt-in type, because the plain-word form is ambiguous in prose ("looked at google dot com"). The
bracketed or upper-case forms are accepted as they are; the lower-case plain form only when the
name before "at" is not a common English word and the address ends in a well-known top-level domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Letters of the scripts written with spaces between words, for internationalized addresses
# (RFC 6531 local parts, IDNA U-labels: `müller@bücher.de`, `пример@почта.рф`): Latin (Latin-1
# letters, Extended-A/B, Extended Additional), combining diacritics, Greek, Cyrillic, Armenian,
# Hebrew, Arabic letters and the Indic scripts (danda excluded), Georgian. Scripts written without
# spaces (Han, kana, Hangul, Thai) are left out: an address run into such text would take the
# words before it as its local part.
_INTL = (
    "\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0300-\u036f\u0370-\u03ff\u0400-\u052f\u0531-\u0587"
    "\u05d0-\u05ea\u0620-\u064a\u0900-\u0963\u0966-\u0d7f\u10a0-\u10ff\u1e00-\u1fff"
)
_ALNUM = f"A-Za-z0-9{_INTL}"
_LOCAL = rf"[{_ALNUM}%+\-](?:[{_ALNUM}._%+\-]{{0,62}}[{_ALNUM}_%+\-])?"
_LABEL = rf"[{_ALNUM}](?:[{_ALNUM}\-]{{0,61}}[{_ALNUM}])?"
EMAIL = re.compile(
    rf"(?<![{_ALNUM}._%+\-]){_LOCAL}@(?:{_LABEL}\.){{1,8}}[A-Za-z{_INTL}]{{2,24}}(?![{_ALNUM}\-]|\.[{_ALNUM}])"
)
_ASCII_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"

_AT = r"(?:\s*[\[\(\{<]\s*(?:at|AT)\s*[\]\)\}>]\s*|\s+(?:at|AT)\s+)"
_DOT = r"(?:\s*[\[\(\{<]\s*(?:dot|DOT)\s*[\]\)\}>]\s*|\s+(?:dot|DOT)\s+)"
_WORD = r"[A-Za-z0-9](?:[A-Za-z0-9._\-]{0,62}[A-Za-z0-9])?"
# Found from each "at" token outwards (a scan of every word for a following "at" costs ~2x more):
# the name is the run of name characters ending at the token, the address what follows it.
# _AT again, written to start with a character class: the regex engine then skips positions that
# cannot start it without entering the pattern (about 2x faster over prose)
_AT_TOKEN = re.compile(
    r"(?:\s\s*(?:(?:at|AT)\s|[\[\(\{<]\s*(?:at|AT)\s*[\]\)\}>])|[\[\(\{<]\s*(?:at|AT)\s*[\]\)\}>])\s*"
)
_NAME_BEFORE = re.compile(rf"(?<![A-Za-z0-9._%+\-]){_WORD}\Z")
_ADDRESS_AFTER = re.compile(
    rf"(?P<host>{_ASCII_LABEL}(?:{_DOT}{_ASCII_LABEL}){{0,3}}){_DOT}(?P<tld>[A-Za-z]{{2,6}})(?![A-Za-z0-9])"
)
_DOT_TOKEN = re.compile(_DOT)


@dataclass(frozen=True, slots=True)
class Obfuscated:
    start: int
    end: int
    text: str
    name: str
    host: str
    tld: str


def find_obfuscated(text: str) -> list[Obfuscated]:
    """Every `name <at> host <dot> tld` in `text`, plausible or not (`obfuscated_is_plausible`)."""
    out: list[Obfuscated] = []
    last_end = 0
    for at in _AT_TOKEN.finditer(text):
        if at.start() < last_end:
            continue
        name = _NAME_BEFORE.search(text, max(last_end, at.start() - 64), at.start())
        if name is None:
            continue
        address = _ADDRESS_AFTER.match(text, at.end())
        if address is None:
            continue
        out.append(Obfuscated(name.start(), address.end(), text[name.start() : address.end()], name.group(0),
                              address.group("host"), address.group("tld")))
        last_end = address.end()
    return out


_BRACKETED = re.compile(r"[\[\(\{<]")

# Top-level domains trusted in the plain lower-case form "name at host dot tld".
COMMON_TLDS = frozenset(
    "com org net edu gov mil int io co info biz me us uk de fr es it nl be ch at se no dk fi pl cz ru "
    "jp cn kr in br au ca mx ar eu".split()
)
# Words that precede "at" in ordinary prose; as a name in "X at Y dot com" they mean a false match.
_PROSE_WORDS = frozenset(
    "a an the at look looks looked looking stare stared arrive arrived arrives stay stayed stays "
    "work works worked working live lives lived living is are was were be been being am it its this "
    "that these those here there me us him her them you we they i he she who which what where when "
    "not only even just also all both once good bad best well fast slow up down out in on off "
    "rate rates price priced aimed aim aims available sold sell sells buy bought meet met home "
    "found find point pointed click clicked go went come came get got".split()
)


def obfuscated_is_plausible(found: Obfuscated) -> bool:
    """Whether an obfuscated match is an address rather than prose (see the module doc)."""
    if _BRACKETED.search(found.text) or " AT " in found.text:
        return True
    if found.tld.lower() not in COMMON_TLDS:
        return False
    return found.name.lower() not in _PROSE_WORDS


def deobfuscate(found: Obfuscated) -> str:
    """The address an obfuscated match spells, as its canonical key (`name@host.tld`)."""
    host = _DOT_TOKEN.sub(".", found.host)
    return f"{found.name}@{host}.{found.tld}".lower()
