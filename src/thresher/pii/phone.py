"""Telephone numbers: international (E.164 with a `+`) and the national formats of chosen regions.

A linear regular expression finds runs of digits and phone punctuation that start and end with a
digit (or `+`/`(`) and are not inside a longer number; `is_phone` then decides by shape, because
most digit runs in web text are not phone numbers:

- international: `+` and a country calling code assigned by the ITU (E.164), 8 to 15 digits in all,
  grouped by spaces, hyphens or dots (one kind), an optional `(0)` trunk prefix;
- national (per `regions`): US/CA (NANP: `(212) 555-0147`, `212-555-0147`, `212.555.0147`, area code
  and exchange starting 2-9), GB (`020 7946 0958`, `01632 960123`), DE (`030 1234567`,
  `030/1234567`, `0171-1234567`), FR (`01 23 45 67 89`). A national number needs its separators: a
  bare run of ten digits is as likely an ISBN-10 or an order number.

Dates, versions and ISBNs never reach ten digits in a national shape; product codes do
(`Art.-Nr. 0815-471112`), so a catalogue word just before the number (`ISBN`, `SKU`, `Art.-Nr.`,
`part`, `model`, `order`, `ref`, `serial`) rejects it (card numbers use the same check).
"""

from __future__ import annotations

import re

REGIONS = ("US", "GB", "DE", "FR")

# Runs that start at a `+`, `(` or digit not preceded by a word character or number punctuation, and
# end at a digit not followed by more of a number. Bounded length: linear scanning.
# Nor inside a grouped number ("4111 1111 ...", "FR76 3000 ..."): not after a digit and a separator,
# unless it starts with "+".
CANDIDATE = re.compile(
    r"(?<![\w+.\-/(])(?:\+|(?<!\d[ .\-])\(?)\d[\d ().\-/]{5,22}\d(?!\w|[.\-/]?\d)"
)

_NANP = re.compile(r"(?:\+?1[ .\-])?(?:\([2-9]\d\d\) ?|[2-9]\d\d(?P<s>[ .\-]))[2-9]\d\d(?(s)(?P=s)|[ .\-])\d{4}")
_GB = re.compile(r"(?:\(0[1-9]\d{1,3}\)|0[1-9]\d{1,3}) \d{3,4} ?\d{3,4}")
_DE = re.compile(r"(?:\(0[1-9]\d{1,4}\) ?|0[1-9]\d{1,4}[ /\-])\d{3,8}(?:[ \-]\d{1,5})?")
_FR = re.compile(r"0[1-9](?P<s>[ .\-])\d\d(?:(?P=s)\d\d){3}")
# separators delimit the groups, so the pattern is unambiguous (no backtracking between groups)
_INTERNATIONAL = re.compile(r"\+\d{1,15}(?:[ .\-]\d{1,12}){0,7}")
_SEPARATORS = re.compile(r"[ .\-]")
_PAREN_GROUP = re.compile(r" ?\((\d{1,5})\) ?")

CATALOGUE_CONTEXT = re.compile(
    r"(?:\b(?:isbn(?:-1[03])?|issn|sku|ean|upc|art\.?-?\s*nr\.?|art\.|article|part|p/n|item|model|order|ref(?:erence)?\.?|"
    r"serial|"
    r"invoice|tracking|nr\.|no\.)|#)\s*:?\s*$",
    re.I,
)

# ITU-T E.164 country calling codes: one digit (1 NANP, 7 RU/KZ), two digits, and the three-digit
# code blocks (every code in 21x..29x, 35x..38x, 42x, 50x, 59x, 67x..69x, 85x, 87x..88x, 96x..99x is
# either assigned or reserved, so a match there is at worst a reserved code).
_CC1 = frozenset("17")
_CC2 = frozenset(
    "20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 "
    "81 82 84 86 90 91 92 93 94 95 98".split()
)
_CC3_PREFIXES = frozenset("21 22 23 24 25 26 29 35 37 38 42 50 59 67 68 69 85 87 88 96 97 99".split())


# Total digits (calling code included) of countries whose numbering plan has fixed lengths (ITU
# national numbering plans); other countries take any 8 to 15 digits. Lets "+44 20 7946 0958 20
# items" end at the number.
_FIXED_LENGTHS: dict[str, tuple[int, ...]] = {
    "1": (11,), "7": (11,), "33": (11,), "34": (11,), "31": (11,), "32": (10, 11), "44": (11, 12), "61": (11,),
    "81": (11, 12), "86": (12, 13), "91": (12,), "39": (11, 12, 13), "46": (9, 10, 11, 12), "48": (11,),
}


def _country_code_length(digits: str) -> int:
    """Length of the calling code that starts `digits`, or 0 when none does."""
    if digits[:1] in _CC1:
        return 1
    if digits[:2] in _CC2:
        return 2
    if digits[:2] in _CC3_PREFIXES and len(digits) >= 3:
        return 3
    return 0


def _international(candidate: str) -> bool:
    # "+49 (0)30 1234567": the national trunk prefix in parentheses is not dialled from abroad
    body = candidate.replace(" (0)", " ").replace("(0)", " ").replace("  ", " ")
    # "+1 (212) 555-0147": an area code in parentheses after the calling code
    body = _PAREN_GROUP.sub(r" \1", body, count=1).replace("  ", " ")
    if _INTERNATIONAL.fullmatch(body) is None:
        return False
    digits = body.replace(" ", "").replace(".", "").replace("-", "")[1:]
    cc = _country_code_length(digits)
    if cc == 0 or not 8 <= len(digits) <= 15:
        return False
    lengths = _FIXED_LENGTHS.get(digits[:cc])
    if lengths is not None and len(digits) not in lengths:
        return False
    separators = set(_SEPARATORS.findall(body))
    if not separators:  # compact E.164: long; "+1234567" is not one
        return len(digits) >= 10
    # one kind of separator (spaces and hyphens mix: "+1 212-555-0147"), and the first group is the
    # calling code (at most one digit more)
    first = len(_SEPARATORS.split(body, maxsplit=1)[0]) - 1
    return (len(separators) == 1 or separators == {" ", "-"}) and cc <= first <= cc + 1


def _national(candidate: str, regions: tuple[str, ...]) -> bool:
    digits = sum(ch.isdigit() for ch in candidate)
    if "US" in regions and digits in (10, 11) and _NANP.fullmatch(candidate):
        return True
    if "GB" in regions and digits in (10, 11) and _GB.fullmatch(candidate):
        return True
    if "DE" in regions and 9 <= digits <= 12 and _DE.fullmatch(candidate):
        return True
    return "FR" in regions and digits == 10 and _FR.fullmatch(candidate) is not None


def is_phone(candidate: str, regions: tuple[str, ...]) -> bool:
    """Whether a candidate run (from `CANDIDATE`) has the shape of a phone number (module doc)."""
    if candidate.startswith("+"):
        return _international(candidate)
    if candidate.count("(") != candidate.count(")") or candidate.count("(") > 1:
        return False
    return _national(candidate, regions)


def find_phones(text: str, regions: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans of phone numbers in `text`. A candidate that does not validate is retried without its
    trailing space-separated groups ("call +44 20 7946 0958 20 times" is a number and a count),
    unless it has more digits than any phone number (then it is an account or card number)."""
    spans = []
    for m in CANDIDATE.finditer(text):
        start = m.start()
        if sum(ch.isdigit() for ch in m.group(0)) > 15:  # E.164 allows 15 digits: a longer run is one number
            continue
        if CATALOGUE_CONTEXT.search(text[max(0, start - 16) : start]):
            continue
        candidate = m.group(0)
        while True:
            if is_phone(candidate, regions):
                spans.append((start, start + len(candidate)))
                break
            cut = candidate.rfind(" ")
            if cut < 6:
                break
            candidate = candidate[:cut].rstrip(" ().-/")
    return spans
