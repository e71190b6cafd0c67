"""Checksums that tell a real identifier from a number of the same shape.

- Luhn (ISO/IEC 7812-1, annex B): every payment card number ends in a Luhn check digit; a random
  16-digit number passes with probability 1/10, so the issuer prefix (`card_issuer`) is checked too.
- IBAN (ISO 13616-1): two check digits computed mod 97 over the rearranged account number, and a
  fixed length per country (the SWIFT IBAN registry); a random string passes with probability ~1/97
  *and* must have its country's exact length.
"""

from __future__ import annotations

# Length of a full IBAN per country code, from the SWIFT IBAN registry (release 2024).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
    "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
    "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


_MAESTRO_PREFIXES = frozenset({5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763})


def luhn_valid(digits: str) -> bool:
    """True when the digit string's last digit is its Luhn check digit."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_issuer(digits: str) -> str | None:
    """The card scheme whose issuer prefix and length the number fits (ISO/IEC 7812 IIN ranges of
    the major schemes), or None. Numbers outside these ranges are not treated as cards: order
    numbers and ISBN-13s (prefix 978/979) that happen to pass Luhn stay untouched."""
    n = len(digits)
    p2 = int(digits[:2])
    p4 = int(digits[:4])
    if digits[0] == "4" and n in (16, 19):  # 13-digit Visa numbers are no longer issued
        return "visa"
    if (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16:
        return "mastercard"
    if p2 in (34, 37) and n == 15:
        return "amex"
    if (p4 == 6011 or p2 == 65 or 644 <= int(digits[:3]) <= 649) and n in (16, 19):
        return "discover"
    if 3528 <= p4 <= 3589 and 16 <= n <= 19:
        return "jcb"
    if (300 <= int(digits[:3]) <= 305 or p2 in (36, 38)) and n == 14:
        return "diners"
    if p2 == 62 and 16 <= n <= 19:
        return "unionpay"
    # Maestro's issued ranges, 16-19 digits: its nominal 50/56-69 x 12-19 would take GTIN-13s and
    # most other long numbers starting with 5 or 6
    if p4 in _MAESTRO_PREFIXES and 16 <= n <= 19:
        return "maestro"
    return None


def is_card_number(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and card_issuer(digits) is not None and luhn_valid(digits)


def iban_valid(compact: str) -> bool:
    """True for an upper-case IBAN without spaces of its country's length whose mod-97 check holds."""
    expected = IBAN_LENGTHS.get(compact[:2])
    if expected is None or len(compact) != expected or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    # letters count as two digits (A = 10 ... Z = 35); reduce chunk by chunk to keep the ints small
    remainder = 0
    for ch in rearranged:
        if "0" <= ch <= "9":
            remainder = (remainder * 10 + ord(ch) - 48) % 97
        elif "A" <= ch <= "Z":
            remainder = (remainder * 100 + ord(ch) - 55) % 97
        else:
            return False
    return remainder == 1
