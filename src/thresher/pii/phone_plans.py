"""National telephone number formats: the numbering plan of each region, as printed.

Each region lists the shapes its numbers are written in (ITU-T national numbering plans and the
grouping conventions of each country), with the plan's rules built into the pattern: leading digits
(trunk `0`, mobile prefixes, NANP area codes `[2-9][0-8]x` that are not `N11`), the exact number of
digits, and one kind of separator per number. A pattern matches a whole candidate run.

A shape is *weak* when the same digits and separators are as often something else: groups separated
by spaces only without a trunk prefix (`896 621 4904`, `912 345 678`, `98765 43210`) also spell
counts with space thousands separators, parcel and customer numbers. A weak shape is taken only with
a telephone word next to it (`phone_context`); the others are taken unless an identifier word names
the number as something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class NationalFormat:
    region: str
    pattern: re.Pattern[str]
    weak: bool


# NANP: area code and exchange [2-9] then, for the area code, a middle digit 0-8 (N9X codes are
# reserved for expansion); neither may be N11 (service codes such as 911).
_AREA = r"[2-9](?!11)[0-8]\d"
_EXCHANGE = r"[2-9](?!11)\d\d"

# (region, pattern, weak). Patterns are anchored by fullmatch; every quantifier is bounded.
_TABLE: tuple[tuple[str, str, bool], ...] = (
    # US / CA (NANP): (212) 555-0147, 212-555-0147, 212.555.0147, 1-800-555-0147, 212 555 0147 (weak)
    ("NANP", rf"(?:1[ \-])?\({_AREA}\) ?{_EXCHANGE}[ \-]\d{{4}}", False),
    ("NANP", rf"(?:1[.\-])?{_AREA}(?P<s>[.\-]){_EXCHANGE}(?P=s)\d{{4}}", False),
    ("NANP", rf"(?:1 )?{_AREA} {_EXCHANGE} \d{{4}}", True),
    # GB: 11 digits (some 01 areas 10): 020 7946 0958, 0161 496 0123, 01632 960123, 07700 900123
    ("GB", r"\(?02\d\)? \d{4} \d{4}", False),
    ("GB", r"\(?01(?:\d1|1\d)\)? \d{3} \d{4}", False),
    ("GB", r"\(?01\d{3}\)? \d{5,6}", False),
    ("GB", r"\(?0[3789]\d{2}\)? \d{3} \d{4}", False),
    ("GB", r"\(?07\d{3}\)? \d{3} ?\d{3}", False),
    # DE: trunk 0, 2-5 digit area code, subscriber 3-8 digits: 030 1234567, 030/1234567,
    # 0171-1234567, (030) 1234567, (0)30 1234567 (the trunk in parentheses, as on pages that drop +49)
    ("DE", r"(?:\(0[1-9]\d{1,4}\) ?|\(0\)[1-9]\d{1,4} |0[1-9]\d{1,4}[ /\-])\d{3,8}(?:[ \-]\d{1,5})?", False),
    # FR: 10 digits in pairs, one separator: 01 23 45 67 89, 06.12.34.56.78
    ("FR", r"0[1-9](?P<s>[ .\-])\d\d(?:(?P=s)\d\d){3}", False),
    # ES: 9 digits, fixed 8/9, mobile 6/7: 912 34 56 78, 91 234 56 78, 612 345 678 (weak)
    ("ES", r"[6-9]\d{2} \d\d \d\d \d\d|[89]\d \d{3} \d\d \d\d", False),
    ("ES", r"[6-9]\d{2}(?P<s>[ .])\d{3}(?P=s)\d{3}", True),
    # IT: fixed lines keep the 0 (06 1234 5678, 02-12345678, 0471 123456); mobile 3xx 9-10 digits
    ("IT", r"0\d{1,3}(?P<s>[ \-/])\d{3,4}(?P=s)\d{3,4}|0\d{1,3}[ \-/]\d{4,8}", False),
    ("IT", r"3[1-9]\d[ \-]\d{6,7}", False),
    ("IT", r"3[1-9]\d \d{3} \d{3,4}", True),
    # NL: 10 digits with the 0: 020 123 4567, 020-1234567, 06-12345678, 010 123 45 67
    ("NL", r"0[1-9]\d{1,2}[ \-]\d{3} ?\d{2} ?\d{2}|0[1-9]\d{1,2}-\d{6,7}|06[ \-]\d{8}|06 \d{4} \d{4}", False),
    # IN: landlines with their 0 (011 2345 6789, 022-23456789), mobiles 10 digits from 6-9
    ("IN", r"0[1-9]\d{1,3}(?P<s>[ \-])\d{3,4}(?P=s)?\d{4}", False),
    ("IN", r"0?[6-9]\d{4} \d{5}|[6-9]\d{2}-\d{3}-\d{4}", True),
    # JP: hyphenated, 10 digits (03-1234-5678, 06-6123-4567, 0120-123-456), mobiles 070/080/090 11
    ("JP", r"0\d-\d{4}-\d{4}|0\d{2}-\d{3}-\d{4}|0\d{3}-\d{2,3}-\d{3,4}|0[789]0-\d{4}-\d{4}", False),
    # BR: two-digit area code (DDD) in parentheses or not, 8-digit landline, 9-digit mobile
    ("BR", r"\(0?[1-9][1-9]\) ?(?:9\d{4}|[2-5]\d{3})-\d{4}|[1-9][1-9] (?:9\d{4}|[2-5]\d{3})-\d{4}", False),
    # AU: (02) 9876 5432, 02 9876 5432, 0412 345 678, 1300 123 456, 1800 123 456
    ("AU", r"\(?0[2378]\)? \d{4} \d{4}|04\d{2} \d{3} \d{3}|1[38]00 \d{3} \d{3}", False),
)

_PLAN_OF = {"US": "NANP", "CA": "NANP"}

FORMATS: tuple[NationalFormat, ...] = tuple(NationalFormat(r, re.compile(p), w) for r, p, w in _TABLE)


@lru_cache(maxsize=64)
def formats_for(regions: tuple[str, ...]) -> tuple[NationalFormat, ...]:
    """The national formats of `regions` (unknown names are refused by the config)."""
    plans = {_PLAN_OF.get(r, r) for r in regions}
    return tuple(f for f in FORMATS if f.region in plans)


def national_shape(candidate: str, formats: tuple[NationalFormat, ...]) -> bool | None:
    """None when no national format matches `candidate`; otherwise whether the best match is weak."""
    digits = sum(ch.isdigit() for ch in candidate)
    if not 9 <= digits <= 12:
        return None
    weak = None
    for f in formats:
        if f.pattern.fullmatch(candidate):
            if not f.weak:
                return False
            weak = True
    return weak
