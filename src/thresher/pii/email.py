"""E-mail addresses, plain and obfuscated.

Plain: `local@domain.tld` with an RFC 5321 local part (at most 64 characters of letters, digits and
`._%+-`) and a domain of dot-separated labels ending in an alphabetic top-level domain of 2 to 24
letters. Every quantifier is bounded and the local part may only start where a run of local-part
characters starts (the look-behind), so a 10^5-character run without `@` costs one bounded attempt,
not one per position: matching is linear in the text.

Obfuscated (`name at host dot com`, `name [at] host [dot] com`, `name(at)host(dot)org`): a separate,
opt-in type, because the plain-word form is ambiguous in prose ("looked at google dot com"). The
bracketed or upper-case forms are accepted as they are; the lower-case plain form only when the
name before "at" is not a common English word and the address ends in a well-known top-level domain.
"""

from __future__ import annotations

import re

_LOCAL = r"[A-Za-z0-9%+\-](?:[A-Za-z0-9._%+\-]{0,62}[A-Za-z0-9_%+\-])?"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
EMAIL = re.compile(rf"(?<![A-Za-z0-9._%+\-]){_LOCAL}@(?:{_LABEL}\.){{1,8}}[A-Za-z]{{2,24}}(?![A-Za-z0-9\-]|\.[A-Za-z0-9])")

_AT = r"(?:\s*[\[\(\{<]\s*(?:at|AT)\s*[\]\)\}>]\s*|\s+(?:at|AT)\s+)"
_DOT = r"(?:\s*[\[\(\{<]\s*(?:dot|DOT)\s*[\]\)\}>]\s*|\s+(?:dot|DOT)\s+)"
_WORD = r"[A-Za-z0-9](?:[A-Za-z0-9._\-]{0,62}[A-Za-z0-9])?"
OBFUSCATED_EMAIL = re.compile(
    rf"(?<![A-Za-z0-9._%+\-])(?P<name>{_WORD}){_AT}(?P<host>{_LABEL}(?:{_DOT}{_LABEL}){{0,3}}){_DOT}(?P<tld>[A-Za-z]{{2,6}})(?![A-Za-z0-9])"
)
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


def obfuscated_is_plausible(match: re.Match[str]) -> bool:
    """Whether an OBFUSCATED_EMAIL match is an address rather than prose (see the module doc)."""
    text = match.group(0)
    if _BRACKETED.search(text) or " AT " in text:
        return True
    if match.group("tld").lower() not in COMMON_TLDS:
        return False
    return match.group("name").lower() not in _PROSE_WORDS


def deobfuscate(match: re.Match[str]) -> str:
    """The address an obfuscated match spells, as its canonical key (`name@host.tld`)."""
    host = re.sub(_DOT, ".", match.group("host"))
    return f"{match.group('name')}@{host}.{match.group('tld')}".lower()
