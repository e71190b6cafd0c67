"""National phone formats (one case per region and shape) and the context rules around them."""

import pytest

from thresher.pii.detection import detect
from thresher.pii.names import REGIONS
from thresher.pii.phone_context import nearest_cue
from thresher.pii.phone_plans import formats_for, national_shape


def phones(text, **kw):
    return [text[m.start : m.end] for m in detect(text, ["phone"], **kw)]


@pytest.mark.parametrize(("region", "number"), [
    ("US", "(212) 555-0147"), ("US", "1-800-555-0147"), ("CA", "(416) 555-0199"), ("CA", "604.555.0123"),
    ("GB", "020 7946 0958"), ("GB", "0161 496 0123"), ("GB", "01632 960123"), ("GB", "07700 900123"),
    ("DE", "030 1234567"), ("DE", "089/2155264"), ("DE", "(0)30 6595731"),
    ("FR", "01 23 45 67 89"), ("FR", "06.12.34.56.78"),
    ("ES", "912 34 56 78"), ("ES", "91 234 56 78"), ("ES", "612 34 56 78"),
    ("IT", "06 1234 5678"), ("IT", "02-25787875"), ("IT", "0471 123456"), ("IT", "347 1234567"),
    ("NL", "020 123 4567"), ("NL", "06-12345678"), ("NL", "010-5012074"),
    ("IN", "011 2345 6789"), ("IN", "022-23456789"),
    ("JP", "03-1234-5678"), ("JP", "090-1234-5678"), ("JP", "0120-123-456"),
    ("BR", "(11) 91234-5678"), ("BR", "(21) 2345-6789"), ("BR", "11 91234-5678"),
    ("AU", "(02) 9876 5432"), ("AU", "0412 345 678"), ("AU", "1300 123 456"),
])
def test_each_region_finds_its_national_format_only_when_enabled(region, number):
    assert phones(f"Tel.: {number}", phone_regions=(region,)) == [number]
    assert phones(f"Tel.: {number}", phone_regions=REGIONS) == [number]
    others = tuple(r for r in REGIONS if r != region and not {r, region} <= {"US", "CA"})
    plans_share = national_shape(number, formats_for(others)) is not None
    assert phones(f"Tel.: {number}", phone_regions=others) == ([number] if plans_share else [])


@pytest.mark.parametrize(("region", "number"), [
    ("US", "(212) 911-0147"),  # N11 exchange
    ("US", "(296) 555-0147"),  # N9X area code: reserved
    ("US", "(112) 555-0147"),  # area code starting 1
    ("GB", "020 666 8420"),  # a GB 02x number has 11 digits (as an Amsterdam number it is valid: NL)
    ("FR", "0801 23 45 67 89"),  # FR: 10 digits
    ("ES", "512 34 56 78"),  # ES: no number starts with 5
    ("JP", "03-12345-678"),  # JP grouping
    ("BR", "(11) 81234-5678"),  # BR: a 9-digit mobile starts with 9
])
def test_numbering_plan_rules_reject_impossible_numbers(region, number):
    assert phones(f"Tel.: {number}", phone_regions=(region,)) == []


@pytest.mark.parametrize("text", [
    "The listing 896 621 4904 is a parcel number.", "06.31.20.29.48 was the code.", "Lot 097 382 8912 failed.",
    "Kundennummer 596 304 6657", "Voucher code 0824 808 934", "Case no. 973-600-3811", "Part no. 790-573-1579",
    "Turnover rose to 912 345 678 euros.", "Invoice 030 1234567 is due.", "Order #030 1234567",
])
def test_an_identifier_word_next_to_the_number_names_it_something_else(text):
    assert phones(text) == []


@pytest.mark.parametrize(("text", "number"), [
    ("Call 815 621 4904 today.", "815 621 4904"), ("Mobile: 98765 43210", "98765 43210"),
    ("Llame al 612 345 678.", "612 345 678"), ("Tel. no. 030 1234567", "030 1234567"),
    ("Telefonnummer 0171 1234567", "0171 1234567"), ("電話 03-1234-5678", "03-1234-5678"),
])
def test_a_telephone_word_accepts_even_weak_shapes(text, number):
    assert phones(text) == [number]
    start = text.index(number)
    assert nearest_cue(text, start, start + len(number)) == "phone"
    assert phones(text.replace(text[:start], "Details: ")) == ([] if number in ("815 621 4904", "98765 43210",
                                                                              "612 345 678") else [number])


def test_weak_shapes_need_a_telephone_word_and_strong_ones_do_not():
    assert phones("Details: 896 621 4904") == []  # spaces only, no trunk prefix: as often a count or code
    assert phones("Details: (896) 621-4904") == []  # N9X area code
    assert phones("Details: (815) 621-4904") == ["(815) 621-4904"]
    assert phones("Details: 030 1234567") == ["030 1234567"]


def test_the_nearest_cue_wins_and_a_cue_does_not_reach_past_another_number():
    assert phones("Fax 656 16 39 00 Lot 012 762 3832") == ["656 16 39 00"]
    assert phones("ISSN 4493-4178 Details: 06 2460 1997") == ["06 2460 1997"]
    assert phones("Tel.: 522-205-9645 Model TX-0313-92 is sold out.") == ["522-205-9645"]
    assert phones("Call us at +33 (0)1 49 43 46 51. release 6.2.0.56") == ["+33 (0)1 49 43 46 51"]


def test_a_service_line_is_not_a_customer_number():
    assert phones("Abo- und Kundenservice +49 731 88005-8205") == ["+49 731 88005-8205"]
    assert phones("Customer service: 030 1234567") == ["030 1234567"]
    assert phones("Kunden-Nr. 030 1234567") == [] and phones("Customer no. 030 1234567") == []


def test_a_number_after_a_sentence_end_or_a_date_is_still_found():
    assert phones("Flight LH 7078 on 17.7.2024. 0120-354-323 (ask for Maria).") == ["0120-354-323"]
    assert phones("Anrufe unter (643) 743 7131. 667 56 47 19 (ask for Maria)") == ["(643) 743 7131", "667 56 47 19"]
    assert phones("Hotline +55 11 99923-4495 (24/7)") == ["+55 11 99923-4495"]


def test_grouped_card_and_reference_numbers_yield_no_phone_inside():
    assert phones("Ref 0123 4567 8901 2345 x") == []
    assert phones("pay 4111 1111 1111 1111 now") == []
