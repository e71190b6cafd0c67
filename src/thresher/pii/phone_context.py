"""The words around a phone-shaped number: do they call it a telephone number, or something else?

A run such as `896 621 4904` or `06.31.20.29.48` is a valid number in some national plan and also a
parcel number, a voucher code or a count, and its digits cannot tell which. Its clause can: the
nearest cue word within a few words before or after it decides.

- a *telephone* cue (`Tel.`, `call`, `fax`, `mobile`, `Rufnummer`, `téléphone`, `llame`, `電話`, ...)
  makes it a phone number;
- an *identifier* cue (`ISBN`, `order`, `invoice`, `parcel`, `lot`, `voucher code`, `Kundennummer`,
  `account`, `version`, ...) or a *quantity* cue after it (`euros`, `inhabitants`, `km`, ...) makes it
  something else.

The nearest cue wins (distance in words), a cue before the number on a tie (`Fax 656 16 39 00 Lot
012 762 3832`: the first is a fax number, the second a lot). A cue names the nearest number only: the
windows stop at another number, a sentence end, a line break, and (after the number) a full stop or
a capitalised word, which starts the next item of a list.
Generic words (`number`, `no.`, `Nr.`) are no cue: `phone no.` and `order no.` differ in the word
before. `area code`, `dialling code` and `country code` are telephone cues, not codes.
"""

from __future__ import annotations

import re
from typing import Literal

BEFORE = 32
AFTER = 24

_PHONE_WORDS = (
    # English
    r"phone\w*|telephon\w*|tel\b|tel\.|call(?:s|ed|ing)?\b|ring\b|dial\w*|fax\w*|mobile|cell(?:phone)?\b|"
    r"hotline|helpline|freephone|toll[- ]?free|whats ?app|sms\b|contact\w*|reach(?:ed|able)?\b|voicemail|"
    r"ext\.|extension|(?:area|dialling|dialing|country|std) codes?\b|"
    # German, French, Spanish, Italian, Dutch, Portuguese, Japanese
    r"telefon\w*|anruf\w*|ruf(?:nummer|e|en)\w*|handy\w*|mobil\w*|erreichbar\w*|durchwahl|"
    r"t[ée]l[ée]phone\w*|t[ée]l\b|t[ée]l\.|appel\w*|portable|joindre|"
    r"tel[ée]fono\w*|ll[aá]m\w*|m[oó]vil\w*|chiam\w*|cellulare|"
    r"telefoon\w*|bel(?:len)?\b|mobiel|telefone|ligue\w*|celular|電話|携帯|☎|✆|📞"
)
_ID_WORDS = (
    # catalogue and document identifiers
    r"isbn\w*|issn|sku\b|ean\b|upc\b|gtin\w*|asin\b|art\.|artikel\w*|article\w*|part\b|p/n|item\w*|model\w*|"
    r"order\w*|bestell\w*|auftrag\w*|commande\w*|pedido\w*|ordine\w*|ref\.|ref\b|referen\w*|serial\w*|serie\w*|"
    r"invoice\w*|rechnung\w*|factur\w*|fattura\w*|receipt\w*|beleg\w*|quittung\w*|transaction\w*|"
    r"tracking\w*|sendung\w*|parcel\w*|package\w*|paket\w*|colis|shipment\w*|consignment\w*|listing\w*|"
    r"lot\b|batch\w*|voucher\w*|coupon\w*|gutschein\w*|promo\w*|code\b|pin\b|ticket\w*|case\b|aktenzeichen|"
    r"account\w*|konto\w*|compte\w*|cuenta\w*|conto\b|id\b|"
    # customer and member *numbers*, not "customer service" / "Kundenservice" (a phone line)
    r"customer[ -]?(?:id|no|nr|number|ref)\w*|kunden[ -]?(?:nummer|nr|id|konto)\w*|"
    r"member(?:ship)?[ -]?(?:id|no|number)\w*|"
    r"mitglieds?[ -]?(?:nummer|nr)\w*|"
    r"ident\w*|patent\w*|version\w*|build\b|release\w*|flight\w*|flug\w*|table\b|figure\b|"
    # quantities: a count or an amount, not a number to call
    r"population|inhabitants|einwohner\w*|habitants|residents|visitors|turnover|revenue|umsatz\w*|budget\w*|"
    r"euros?\b|eur\b|usd\b|dollars?\b|pounds\b|yen\b|rupees\b|€|\$|£|km\b|kg\b|tonnes?\b|tons\b|people|"
    r"persons|units\b|copies|shares\b|votes\b|views\b|downloads\b"
)
# a cue starts a word (German compounds continue it: "Kundennummer", "Telefonnummer")
_CUE = re.compile(rf"(?<![^\W\d_])(?:(?P<phone>{_PHONE_WORDS})|(?P<id>{_ID_WORDS}))", re.I)
# "... noon. Lot 097": a sentence ends at [.!?] and a space before an upper-case letter (or an opening
# quote and one), and at a line break
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[\"'“‘(«]?[A-ZÀ-Þ])|\n")
_DIGIT = re.compile(r"\d")
# after the number, a capitalised word starts the next sentence or list item ("Tel. 0171 1234567
# Serial 0866533517"), whose words name something else
_NEXT_ITEM = re.compile(r"\d|(?<![^\W\d_])[A-ZÀ-Þ]|[.!?;](?:\s|$)")
_WORD = re.compile(r"[^\W_]+")
# words that qualify any number ("phone no.", "order no.") and so are no cue and no distance
_NEUTRAL = re.compile(r"(?<![^\W\d_])(?:no|nr|n[º°o]|num|number|numbers|nummer|numéro|numero)\b\.?", re.I)
MAX_WORDS = 3  # a cue further away than this many words names something else

Cue = Literal["phone", "id"] | None


def _words(gap: str) -> int:
    return len(_WORD.findall(_NEUTRAL.sub(" ", gap)))


def nearest_cue(text: str, start: int, end: int) -> Cue:
    """The kind of the cue nearest to the number at `text[start:end]` (module doc), or None.

    A cue never reaches past another number ("ISSN 4493-4178 Tel. 06 ...": ISSN names the first),
    nor past a sentence end, nor further than `MAX_WORDS` words, and after the number not past a
    capitalised word; distance counts words, without the
    generic `no.`/`number`; on a tie the cue before the number wins."""
    before = text[max(0, start - BEFORE) : start]
    cut = 0
    for m in _SENTENCE_END.finditer(before):
        cut = m.end()
    for m in _DIGIT.finditer(before, cut):
        cut = m.end()
    before = before[cut:]
    after = text[end : end + AFTER]
    # after the number there is no abbreviation to mistake ("Tel."): any full stop ends its clause
    stop = _NEXT_ITEM.search(after)
    if stop is not None:
        after = after[: stop.start()]
    best: Cue = None
    distance = MAX_WORDS + 1
    for m in _CUE.finditer(before):  # the last one is the nearest
        words = _words(before[m.end() :])
        if words <= MAX_WORDS:
            distance, best = words, "phone" if m.group("phone") else "id"
    found = _CUE.search(after)
    if found is not None and _words(after[: found.start()]) < distance:
        best = "phone" if found.group("phone") else "id"
    return best
