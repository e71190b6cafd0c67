"""Personal data that got through `--pii email,ip,phone,card,iban,obfuscated_email` (issue 36,
item 5): internationalized addresses, the `00` international prefix, lower-case IBANs, identifiers
split by invisible characters, and the fields besides the text (`pii.fields`)."""

from __future__ import annotations

import pytest

from thresher.config import RunConfig
from thresher.core.document import Document
from thresher.core.errors import ConfigError
from thresher.pii.config import PiiConfig
from thresher.pii.redact import RedactPii, percent_decoded

ALL = ("email", "ip", "phone", "card", "iban", "obfuscated_email")


def _redact(text: str, **cfg) -> tuple[str, dict[str, int]]:
    return RedactPii(PiiConfig(types=ALL, **cfg)).redact(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("Schreiben Sie an müller@bücher.de bitte.", "Schreiben Sie an <EMAIL> bitte."),
    ("Почта: иван.петров@почта.рф.", "Почта: <EMAIL>."),
    ("contact: jöhn.dœ@exämple.co.uk", "contact: <EMAIL>"),
    # a script written without spaces before the address is not taken into its local part
    ("请联系user@acme.cn谢谢", "请联系<EMAIL>谢谢"),
])
def test_internationalized_addresses_are_redacted_whole(text, expected):
    assert _redact(text) == (expected, {"email": 1})


def test_the_00_international_prefix_is_a_phone_number_like_plus():
    assert _redact("Call 0044 20 7946 0958 today.") == ("Call <PHONE> today.", {"phone": 1})
    assert _redact("Tel. 0049 30 1234 5678")[1] == {"phone": 1}
    assert _redact("Ring 001-212-555-0147 after six")[1] == {"phone": 1}
    # the same number either way is the same hashed token
    hashed = RedactPii(PiiConfig(types=("phone",), replacement="hash", salt="s"))
    assert hashed.redact("0044 20 7946 0958")[0] == hashed.redact("+44 20 7946 0958")[0]


@pytest.mark.parametrize("text", [
    "order 0012345678901 shipped",  # compact: an account or order number
    "ref 00 12 34 56",  # no calling code after the 00 and too short
    "batch 0000 1234 5678",
])
def test_00_runs_that_are_no_international_number_are_left(text):
    assert _redact(text) == (text, {})


@pytest.mark.parametrize(
    "iban", ["de89 3704 0044 0532 0130 00", "de89370400440532013000", "gb82 west 1234 5698 7654 32"]
)
def test_lower_case_ibans_are_redacted(iban):
    assert _redact(f"Pay to {iban} by Friday.") == ("Pay to <IBAN> by Friday.", {"iban": 1})


def test_a_mixed_case_run_is_no_iban():
    assert _redact("token De89370400440532013000 here")[1] == {}


@pytest.mark.parametrize("char", ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_identifiers_split_by_invisible_characters_are_redacted_whole(char):
    text = f"Mail john{char}smith@acme.com, call +44 20{char} 7946 0958, IBAN DE89 3704{char} 0044 0532 0130 00."
    redacted, counts = _redact(text)
    assert redacted == "Mail <EMAIL>, call <PHONE>, IBAN <IBAN>."
    assert counts == {"email": 1, "phone": 1, "iban": 1}


def test_invisible_characters_outside_identifiers_are_kept():
    text = "co\u00adoperation and ann@acme.de\u200b in\u00adside"
    assert _redact(text) == ("co\u00adoperation and <EMAIL>\u200b in\u00adside", {"email": 1})


def _doc() -> Document:
    return Document(
        id="d", text="Write to ann@acme.de.", title="Ann (ann@acme.de)",
        url="https://shop.test/unsubscribe?mail=ann%40acme.de&n=1",
        metadata={"author": "Ann <ann@acme.de>", "contacts": [{"tel": "+44 20 7946 0958"}], "n": 3},
    )


def test_by_default_only_the_text_is_redacted_and_the_default_is_documented():
    assert PiiConfig().fields == ("text",)
    doc = _doc()
    RedactPii(PiiConfig(types=ALL)).transform(doc)
    assert doc.text == "Write to <EMAIL>."
    assert doc.title == _doc().title and doc.url == _doc().url and doc.metadata == _doc().metadata


def test_pii_fields_text_url_metadata_redacts_each_and_counts_them_together():
    doc = _doc()
    RedactPii(PiiConfig(types=ALL, fields=("text", "url", "metadata"))).transform(doc)
    assert doc.text == "Write to <EMAIL>."
    assert doc.url == "https://shop.test/unsubscribe?mail=<EMAIL>&n=1"
    assert doc.metadata == {"author": "Ann <<EMAIL>>", "contacts": [{"tel": "<PHONE>"}], "n": 3}
    assert doc.title == "Ann (ann@acme.de)"  # the title only when listed
    assert doc.annotations["pii.email"] == 3 and doc.annotations["pii.phone"] == 1


def test_the_title_is_redacted_when_listed():
    doc = _doc()
    RedactPii(PiiConfig(types=("email",), fields=("title",))).transform(doc)
    assert doc.title == "Ann (<EMAIL>)" and doc.text == "Write to ann@acme.de."


def test_percent_decoding_maps_every_character_back_to_its_escape():
    decoded, spans = percent_decoded("a%40b%C3%BCc%ZZ")
    assert decoded == "a@büc%ZZ"
    assert spans[:5] == [(0, 1), (1, 4), (4, 5), (5, 11), (11, 12)]


def test_an_unknown_field_is_a_config_error_and_fields_are_hashed():
    with pytest.raises(ConfigError, match="unknown pii field 'body'"):
        RunConfig.from_dict({"pii": {"types": ["email"], "fields": ["body"]}})
    on = RunConfig.from_dict({"pii": {"types": ["email"]}})
    wide = RunConfig.from_dict({"pii": {"types": ["email"], "fields": ["text", "url"]}})
    assert wide.hash != on.hash
