"""Page signals (`thresher.consent.signals`): noai/noimageai in meta tags and X-Robots-Tag, TDMRep in
headers and meta, each with its source; and the WARC reader handing the headers on."""

from __future__ import annotations

from pathlib import Path

from tests.unit.read.test_warc_bad_input import http, read, record

from thresher.consent.signals import PageSignals, SignalReader
from thresher.core.document import Document

AGENTS = ("GPTBot", "CCBot", "Google-Extended")
reader = SignalReader(AGENTS)


def page(head: str) -> str:
    return f"<!doctype html><html><head>{head}<title>t</title></head><body><p>text</p></body></html>"


def test_meta_robots_noai_and_noimageai_are_recorded_from_meta():
    signals = reader.read(page('<meta name="robots" content="noai, noimageai">'), None)
    assert signals == PageSignals(noai=["meta"], noimageai=["meta"])


def test_meta_named_for_a_listed_agent_is_scoped_to_it_and_other_agents_are_ignored():
    html = page("<META NAME='gptbot' CONTENT='NoAI'><meta name=googlebot content=noai>")
    assert reader.read(html, None) == PageSignals(noai=["meta:GPTBot"])


def test_indexing_directives_are_not_consent_signals():
    assert not reader.read(page('<meta name="robots" content="noindex, nofollow">'), None)


def test_tdmrep_meta_tags_are_recorded_with_the_policy_url():
    html = page('<meta name="tdm-reservation" content="1"><meta name="tdm-policy" content="https://example.com/Policy.json">')
    signals = reader.read(html, None)
    assert signals == PageSignals(tdm_reservation={"meta": 1}, tdm_policy={"meta": "https://example.com/Policy.json"})


def test_x_robots_tag_unscoped_and_scoped_to_agents():
    signals = reader.read(None, {"x-robots-tag": "noimageai, GPTBot: noai, otherbot: noai, ccbot: noai noimageai"})
    assert signals.noai == ["header:GPTBot", "header:CCBot"]
    assert signals.noimageai == ["header", "header:CCBot"]


def test_x_robots_tag_valued_directives_are_not_scopes():
    signals = reader.read(None, {"x-robots-tag": "max-snippet: 20, noai, unavailable_after: 2030-01-01"})
    assert signals.noai == ["header"]


def test_tdmrep_headers_and_a_bad_value_is_a_problem_not_a_signal():
    signals = reader.read(page('<meta name="tdm-reservation" content="0">'),
                          {"tdm-reservation": "yes", "tdm-policy": "https://example.com/p"})
    assert signals.tdm_reservation == {"meta": 0} and signals.tdm_policy == {"header": "https://example.com/p"}
    assert signals.problems == ["tdm-reservation header: 'yes' is neither 0 nor 1 (ignored)"]


def test_conflicting_signals_on_one_page_are_all_recorded():
    html = page('<meta name="tdm-reservation" content="0"><meta name="robots" content="noai">')
    signals = reader.read(html, {"tdm-reservation": "1", "x-robots-tag": "noai"})
    assert signals.tdm_reservation == {"header": 1, "meta": 0} and signals.noai == ["header", "meta"]


def test_a_page_without_signals_reads_as_empty_and_garbage_never_raises():
    assert not reader.read(page('<meta name="description" content="robots are fun">'), None)
    assert not reader.read("", {})
    for html in ("<meta", "<meta name=robots content=", "<meta name='robots' content=\"noai>" * 3000,
                 "\x00\ufffd<meta\x00name=robots>", "<meta " + "a=b " * 100_000):
        reader.read(html, {"x-robots-tag": ":::,,,:"})


def test_the_warc_reader_hands_on_consent_headers_and_joins_repeated_x_robots_tags(tmp_path: Path):
    extra = "X-Robots-Tag: GPTBot: noai\r\nX-Robots-Tag: CCBot: noai\r\ntdm-reservation: 1\r\nServer: x\r\n"
    path = tmp_path / "a.warc"
    path.write_bytes(record(http(extra=extra)) + record(http()))
    docs = [item for item in read(path) if isinstance(item, Document)]
    assert docs[0].derived["http_headers"] == {"x-robots-tag": "GPTBot: noai, CCBot: noai", "tdm-reservation": "1"}
    assert "http_headers" not in docs[1].derived and "http_headers" not in str(docs[0].to_record())
