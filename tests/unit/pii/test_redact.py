import pytest

from thresher.config import RunConfig
from thresher.core.document import Document
from thresher.core.errors import ConfigError
from thresher.core.stats import Stats
from thresher.pii.config import PiiConfig
from thresher.pii.redact import RedactPii
from thresher.pipeline import Pipeline, build_document_stages

TEXT = "Mail ann@acme.de or ANN@acme.de, see 8.8.8.8, docs at 192.0.2.7, card 4111 1111 1111 1111."


def test_typed_tokens_replace_and_annotations_count_every_enabled_type():
    stage = RedactPii(PiiConfig(types=("email", "ip", "card", "iban")))
    doc = Document(id="d", text=TEXT)
    assert stage.transform(doc) is None
    assert doc.text == "Mail <EMAIL> or <EMAIL>, see <IP>, docs at 192.0.2.7, card <CARD>."
    assert doc.annotations == {"pii.email": 2, "pii.ip": 1, "pii.card": 1, "pii.iban": 0}


def test_hashed_replacement_is_stable_per_value_and_depends_on_the_salt():
    a = RedactPii(PiiConfig(types=("email",), replacement="hash", salt="s1"))
    text, counts = a.redact("ann@acme.de, Ann@Acme.de, bob@acme.de")
    tokens = text.split(", ")
    assert tokens[0] == tokens[1] != tokens[2] and counts == {"email": 3}
    assert tokens[0].startswith("<EMAIL:") and len(tokens[0]) == len("<EMAIL:>") + 12
    b = RedactPii(PiiConfig(types=("email",), replacement="hash", salt="s2"))
    assert b.redact("ann@acme.de")[0] != tokens[0]
    assert a.redact("ann@acme.de")[0] == tokens[0]  # deterministic across instances


def test_allow_list_keeps_domains_subdomains_addresses_and_networks():
    stage = RedactPii(PiiConfig(types=("email", "ip"), ip_scope="all",
                                allow=("example.com", "boss@acme.de", "10.0.0.0/8")))
    text, counts = stage.redact("a@example.com b@mail.example.com boss@acme.de c@acme.de 10.1.2.3 192.168.0.1")
    assert text == "a@example.com b@mail.example.com boss@acme.de <EMAIL> 10.1.2.3 <IP>"
    assert counts == {"email": 1, "ip": 1}


def test_default_allow_list_keeps_example_domains():
    stage = RedactPii(PiiConfig(types=("email", "ip"), ip_scope="all"))
    assert stage.redact("x@example.org at 198.51.100.2 and 2001:db8::1")[1] == {}


def test_obfuscated_addresses_counted_separately():
    stage = RedactPii(PiiConfig(types=("email", "obfuscated_email")))
    doc = Document(id="d", text="ann@acme.de or ann [at] acme [dot] de")
    stage.transform(doc)
    assert doc.text == "<EMAIL> or <EMAIL>"
    assert doc.annotations == {"pii.email": 1, "pii.obfuscated_email": 1}


def test_unknown_type_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown pii type 'ssn'"):
        RunConfig.from_dict({"pii": {"types": ["ssn"]}})
    with pytest.raises(ConfigError, match="unknown phone region"):
        RunConfig.from_dict({"pii": {"phone_regions": ["XX"]}})


def test_off_by_default_and_hashed_when_on():
    assert not any(s.name == "pii" for s in build_document_stages(RunConfig()))
    on = RunConfig.from_dict({"pii": {"types": ["email"]}})
    assert build_document_stages(on)[-1].name == "pii"
    assert on.hash != RunConfig().hash
    salted = RunConfig.from_dict({"pii": {"types": ["email"], "salt": "x"}})
    assert salted.hash != on.hash


def test_pipeline_redacts_and_counts_events_in_stats():
    config = RunConfig.from_dict({"quality": {"preset": "none"}, "pii": {"types": ["email", "phone"]},
                                  "dedup": {"exact": {"level": "none"}, "near": {"method": "none"}}})
    pipeline = Pipeline(config)
    docs = list(pipeline.process([
        {"url": "https://a.test/1", "text": "Write to ann@acme.de or call +44 20 7946 0958."},
        {"url": "https://a.test/2", "text": "Nothing personal here."},
    ]))
    assert [d.text for d in docs] == ["Write to <EMAIL> or call <PHONE>.", "Nothing personal here."]
    events = {k: n for k, n in pipeline.stats.by_prefix("event").items() if k.startswith("pii.")}
    assert events == {"pii.documents": 1, "pii.email": 1, "pii.phone": 1}
    assert isinstance(pipeline.stats, Stats) and pipeline.stats.reconciles()
