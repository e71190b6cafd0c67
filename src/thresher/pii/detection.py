"""Finding personal data in text: every enabled detector, look-alikes folded, overlaps resolved.

Detectors run on a *folded* copy of the text in which Unicode look-alikes of the characters that
delimit identifiers (full-width `＠．：＋－` and digits, the small commercial at `﹫`, one-dot leader,
non-breaking hyphens) are mapped to ASCII one character for one character, so offsets in the folded
copy are offsets in the original and replacement happens in the original text. NFKC normalization
(the default `normalize` stage) already folds most of them; the fold makes detection independent of
that setting.

Invisible characters inside an identifier (soft hyphen U+00AD, zero-width space, non-joiner and
joiner U+200B-U+200D, word joiner U+2060, zero-width no-break space U+FEFF) render as nothing and
hide it from a pattern (`john\u00adsmith@host.com`): detection runs on a copy without them, and each
match is mapped back to the original span, which is replaced whole, invisible characters included.

Overlaps between detectors (a card number inside an IBAN, a phone-shaped run inside an address) are
resolved deterministically: the earliest start wins, then the longest span, then the type listed
first in `TYPES`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection
from dataclasses import dataclass

from thresher.pii import email, network, phone
from thresher.pii.checksums import IBAN_LENGTHS, iban_valid, is_card_number
from thresher.pii.names import TYPES  # in priority order for equal spans (see the module doc)

# In priority order for equal spans (see the module doc).

_FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}  # full-width ASCII block
_FOLD.update({0xFE6B: ord("@"), 0xFE52: ord("."), 0x2024: ord("."), 0xFF61: ord("."),
              0x2010: ord("-"), 0x2011: ord("-"), 0x2012: ord("-"), 0x2013: ord("-"), 0xFE63: ord("-")})
_FOLD_CHARS = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_FOLD)) + "]")
_FOLDED = {chr(k): chr(v) for k, v in _FOLD.items()}


def fold_lookalikes(text: str) -> str:
    """`text` with identifier look-alikes mapped to ASCII, same length (see the module doc)."""
    if text.isascii() or _FOLD_CHARS.search(text) is None:
        return text
    # substituting the few characters found is ~10x faster than str.translate over the whole text
    return _FOLD_CHARS.sub(lambda m: _FOLDED[m.group()], text)


@dataclass(frozen=True, slots=True, order=True)
class Match:
    start: int
    end: int
    type: str
    key: str  # canonical value: what a hashed replacement is derived from and the allow list sees


_CARD = re.compile(r"(?<![\w.\-+/])(?<!\d[ \-])\d(?:[ \-]?\d){12,18}(?![\w]|[ \-]?\d|[.,]\d)")
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])([A-Z]{2}|[a-z]{2})(\d\d)")


def find_emails(text: str) -> list[Match]:
    if "@" not in text:
        return []
    return [Match(m.start(), m.end(), "email", m.group(0).lower()) for m in email.EMAIL.finditer(text)]


def find_obfuscated_emails(text: str) -> list[Match]:
    return [
        Match(f.start, f.end, "obfuscated_email", email.deobfuscate(f))
        for f in email.find_obfuscated(text)
        if email.obfuscated_is_plausible(f)
    ]


def find_cards(text: str) -> list[Match]:
    out = []
    for m in _CARD.finditer(text):
        if phone.CATALOGUE_CONTEXT.search(text[max(0, m.start() - 16) : m.start()]):
            continue
        raw = m.group(0)
        if " " in raw and "-" in raw:  # one kind of separator in a real card number
            continue
        digits = raw.replace(" ", "").replace("-", "")
        if is_card_number(digits):
            out.append(Match(m.start(), m.end(), "card", digits))
    return out


def find_ibans(text: str) -> list[Match]:
    """IBANs in compact form or printed in groups of four (`DE89 3704 0044 0532 0130 00`): exactly
    the country's length is consumed, so a word after the IBAN is never taken into it. Upper or
    lower case (`de89 3704 ...`), one case throughout: a mixed-case run is a word or a hash."""
    out = []
    for m in _IBAN_START.finditer(text):
        country = m.group(1)
        length = IBAN_LENGTHS.get(country.upper())
        if length is None:
            continue
        low, high = ("a", "z") if country.islower() else ("A", "Z")
        i, taken, chars = m.end(), 4, [country.upper(), m.group(2)]
        n = len(text)
        while taken < length and i < n:
            ch = text[i]
            if ch == " " and i + 1 < n and text[i + 1] != " " and taken % 4 == 0:
                i += 1
                continue
            if "0" <= ch <= "9":
                pass
            elif low <= ch <= high:
                ch = ch.upper()
            else:
                break
            chars.append(ch)
            taken += 1
            i += 1
        if taken != length or (i < n and text[i].isalnum()):
            continue
        compact = "".join(chars)
        if iban_valid(compact):
            out.append(Match(m.start(), i, "iban", compact))
    return out


def find_ips(text: str, scope: str) -> list[Match]:
    out = []
    if "." in text:
        for m in network.IPV4.finditer(text):
            if network.ipv4_is_version(text, m.start()):
                continue
            address = network.parse_ip(m.group(0))
            if address is not None and (scope == "all" or network.is_public(address)):
                out.append(Match(m.start(), m.end(), "ip", str(address)))
    if "::" in text or text.count(":") >= 7:
        for m in network.IPV6.finditer(text):
            raw = m.group(0)
            if not any(ch.isdigit() for ch in raw):
                continue
            address = network.parse_ip(raw)
            if address is not None and (scope == "all" or network.is_public(address)):
                out.append(Match(m.start(), m.end(), "ip", str(address)))
    return out


def find_phones(text: str, regions: tuple[str, ...]) -> list[Match]:
    out = []
    for s, e in phone.find_phones(text, regions):
        digits = re.sub(r"\D", "", text[s:e].replace("(0)", ""))
        # `0044 20 ...` is `+44 20 ...`: one key, so a hashed replacement is the same token
        out.append(Match(s, e, "phone", digits[2:] if text.startswith("00", s) else digits))
    return out


_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]+")


def _without_invisible(text: str) -> tuple[str, list[int], list[int]] | None:
    """`text` without invisible characters, with the start of each kept piece in the copy and in
    `text` (for `_map_back`); None when it has none."""
    if text.isascii() or _INVISIBLE.search(text) is None:
        return None
    copy_starts, text_starts, pieces = [], [], []
    pos = length = 0
    for m in _INVISIBLE.finditer(text):
        if m.start() > pos:
            copy_starts.append(length)
            text_starts.append(pos)
            pieces.append(text[pos:m.start()])
            length += m.start() - pos
        pos = m.end()
    if pos < len(text):
        copy_starts.append(length)
        text_starts.append(pos)
        pieces.append(text[pos:])
    return "".join(pieces), copy_starts, text_starts


def _map_back(m: Match, copy_starts: list[int], text_starts: list[int]) -> Match:
    """A match in the copy without invisible characters as a span of the original text."""
    def to_text(i: int) -> int:
        k = bisect.bisect_right(copy_starts, i) - 1
        return text_starts[k] + i - copy_starts[k]

    return Match(to_text(m.start), to_text(m.end - 1) + 1, m.type, m.key)


def detect(
    text: str, types: Collection[str], *, ip_scope: str = "public", phone_regions: tuple[str, ...] = phone.REGIONS
) -> list[Match]:
    """Non-overlapping matches of the enabled types in `text`, in text order (module doc)."""
    visible = _without_invisible(text)
    if visible is not None:
        copy, copy_starts, text_starts = visible
        found = _detect(copy, types, ip_scope, phone_regions)
        return [_map_back(m, copy_starts, text_starts) for m in found]
    return _detect(text, types, ip_scope, phone_regions)


def _detect(text: str, types: Collection[str], ip_scope: str, phone_regions: tuple[str, ...]) -> list[Match]:
    folded = fold_lookalikes(text)
    found: list[Match] = []
    if "email" in types:
        found += find_emails(folded)
    if "iban" in types:
        found += find_ibans(folded)
    if "card" in types:
        found += find_cards(folded)
    if "ip" in types:
        found += find_ips(folded, ip_scope)
    if "phone" in types:
        found += find_phones(folded, phone_regions)
    if "obfuscated_email" in types:
        found += find_obfuscated_emails(folded)
    return resolve_overlaps(found)


_PRIORITY = {t: i for i, t in enumerate(TYPES)}


def resolve_overlaps(matches: list[Match]) -> list[Match]:
    """Keep a maximal set of non-overlapping matches: earliest start, then longest, then by type
    priority (deterministic whatever order the detectors ran in)."""
    ordered = sorted(matches, key=lambda m: (m.start, -(m.end - m.start), _PRIORITY.get(m.type, 99), m.key))
    kept: list[Match] = []
    end = -1
    for m in ordered:
        if m.start >= end:
            kept.append(m)
            end = m.end
    return kept
