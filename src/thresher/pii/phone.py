"""Telephone numbers: international (E.164 with a `+`) and the national formats of chosen regions.

A linear regular expression finds runs of digits and phone punctuation that start and end with a
digit (or `+`/`(`) and are not inside a longer number; `is_phone` then decides by shape, because
most digit runs in web text are not phone numbers, and `phone_context` by the words around it:

- international: `+` (or the `00` international prefix, with separators) and a country calling code
  assigned by the ITU (E.164), 8 to 15 digits in all, grouped by spaces, hyphens or dots (one kind),
  an optional `(0)` trunk prefix, total length checked for countries whose plan has fixed lengths;
- national (per `regions`, see `phone_plans`): US/CA (NANP), GB, DE, FR, ES, IT, NL, IN, JP, BR, AU,
  each with its plan's leading digits, length and grouping. A national number needs its separators:
  a bare run of ten digits is as likely an ISBN-10 or an order number.
- context: the nearest cue word decides when there is one (`Tel.` accepts; `order`, `parcel`,
  `voucher code`, `euros` reject); a *weak* national shape (space-separated groups without a trunk
  prefix, `896 621 4904`) needs a telephone cue, because counts and customer numbers are written so.
"""

from __future__ import annotations

import re

from thresher.pii.names import REGIONS
from thresher.pii.phone_context import nearest_cue
from thresher.pii.phone_plans import NationalFormat, formats_for, national_shape

__all__ = ["REGIONS", "CANDIDATE", "CATALOGUE_CONTEXT", "find_phones", "is_phone"]

# Runs that start at a `+`, `(` or digit not preceded by a word character or number punctuation, and
# end at a digit not followed by more of a number. Bounded length: linear scanning.
# Nor inside a grouped number ("4111 1111 ...", "FR76 3000 ..."): not after a digit and a separator,
# unless it starts with "+".
CANDIDATE = re.compile(
    r"(?<![\w+.\-/(])(?:\+|(?<!\d[ .\-])\(?)\d[\d ().\-/]{5,22}\d(?!\w|[.\-/]?\d)"
)

# separators delimit the groups, so the pattern is unambiguous (no backtracking between groups)
_INTERNATIONAL = re.compile(r"\+\d{1,15}(?:[ .\-]\d{1,12}){0,7}")
_SEPARATORS = re.compile(r"[ .\-]")
_PAREN_GROUP = re.compile(r" ?\((\d{1,5})\) ?")

# A catalogue word just before a digit run (card numbers use it; phones judge the wider context in
# `phone_context`).
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


def is_phone(candidate: str, regions: tuple[str, ...]) -> bool:
    """Whether a candidate run (from `CANDIDATE`) has the shape of a phone number, context aside
    (module doc)."""
    return _shape(candidate, formats_for(regions)) is not None


def _shape(candidate: str, formats: tuple[NationalFormat, ...]) -> bool | None:
    """None when `candidate` is no phone number in any enabled form, else whether its shape is weak."""
    if candidate.startswith("+"):
        return False if _international(candidate) else None
    if candidate.count("(") != candidate.count(")") or candidate.count("(") > 1:
        return None
    weak = national_shape(candidate, formats)
    if weak is None and _dialled_from_abroad(candidate):
        return False
    return weak


def _dialled_from_abroad(candidate: str) -> bool:
    """`0044 20 7946 0958`: the international prefix most countries dial (ITU-T E.164 annex: `00`)
    in place of `+`, then a valid international number. Only with separators: a compact run of
    digits that starts with 00 is as likely an account or order number."""
    if not candidate.startswith("00") or candidate[2:3] in ("", "0") or not candidate[2:3].isdigit():
        return False
    return bool(_SEPARATORS.search(candidate)) and _international("+" + candidate[2:])


def find_phones(text: str, regions: tuple[str, ...]) -> list[tuple[int, int]]:
    """Spans of phone numbers in `text`. A candidate that does not validate is retried without its
    trailing space-separated groups ("call +44 20 7946 0958 20 times" is a number and a count),
    unless it has more digits than any phone number (then it is an account or card number), and then
    from its second group ("on 17.7.2024. 0120-354-323"); scanning resumes at the end of what was
    taken. A valid shape is then judged by its context (module doc)."""
    formats = formats_for(regions)
    spans = []
    pos, n = 0, len(text)
    while pos < n:
        m = CANDIDATE.search(text, pos)
        if m is None:
            break
        start, candidate = m.start(), m.group(0)
        pos = m.end()
        stop = candidate.find(". ")  # a sentence ends there: "(643) 743 7131. 667 56 47 19"
        if stop > 0:
            candidate = candidate[:stop]
        opened = candidate.rfind("(")
        if opened > 0 and ")" not in candidate[opened:]:  # "+55 11 99923-4495 (24/7": a remark after it
            candidate = candidate[:opened].rstrip(" ().-/")
        taken = False
        # E.164 allows 15 digits: a longer run is one number (an account, a card), no phone inside it
        while sum(ch.isdigit() for ch in candidate) <= 15:
            weak = _shape(candidate, formats)
            if weak is not None:
                end = start + len(candidate)
                cue = nearest_cue(text, start, end)
                if cue == "phone" or (cue is None and not weak):
                    spans.append((start, end))
                    pos, taken = end, True
                break
            cut = candidate.rfind(" ")
            if cut < 6:
                break
            candidate = candidate[:cut].rstrip(" ().-/")
        if not taken:
            space = m.group(0).find(" ")
            if space > 0:
                pos = start + space + 1
    return spans
