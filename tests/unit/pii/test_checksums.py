from thresher.pii.checksums import IBAN_LENGTHS, card_issuer, iban_valid, is_card_number, luhn_valid


def test_luhn_accepts_test_card_numbers_and_rejects_a_changed_digit():
    assert luhn_valid("4111111111111111")
    assert luhn_valid("5555555555554444")
    assert luhn_valid("378282246310005")
    assert not luhn_valid("4111111111111112")


def test_card_needs_an_issuer_prefix_of_the_right_length():
    assert card_issuer("4111111111111111") == "visa"
    assert card_issuer("378282246310005") == "amex"
    assert card_issuer("2221000000000009") == "mastercard"
    # ISBN-13s pass Luhn-like checks often enough; their 978 prefix is no card issuer
    assert card_issuer("9783161484100") is None
    assert not is_card_number("37828224631000")  # amex prefix, 14 digits


def test_iban_mod97_and_country_length():
    assert iban_valid("DE89370400440532013000")
    assert iban_valid("GB82WEST12345698765432")
    assert iban_valid("FR1420041010050500013M02606")
    assert iban_valid("NL91ABNA0417164300")
    assert not iban_valid("DE89370400440532013001")  # check digits no longer match
    assert not iban_valid("DE8937040044053201300")  # one character short for DE
    assert not iban_valid("ZZ89370400440532013000")  # no such country
    assert IBAN_LENGTHS["NO"] == 15 and IBAN_LENGTHS["LC"] == 32
