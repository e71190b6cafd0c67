"""The `consent` stage (`thresher.consent.stage`): annotations in record mode, attributed drops in
enforce mode, time-aware robots.txt snapshots, and no trace at all on pages without signals."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config, write_jsonl
from tests.unit.read.test_warc_bad_input import http, record

from thresher.consent.config import ConsentConfig
from thresher.consent.snapshots import RobotsSnapshots, iso_utc
from thresher.consent.stage import Consent
from thresher.core.document import Document, Drop
from thresher.core.stages import Evaluation
from thresher.run.build import build
from thresher.write.manifest import read_shards

AGENTS = ("GPTBot", "CCBot")


def robots_jsonl(tmp_path: Path) -> Path:
    """a.example: allowed in 2023, GPTBot disallowed from 2024-01-01; b.example: 503 in 2024;
    c.example: one snapshot with no date and a bad line."""
    lines = [
        {"host": "a.example", "fetched_at": "2023-01-01T00:00:00Z", "text": "User-agent: *\nAllow: /\n"},
        {"url": "https://a.example/robots.txt", "fetched_at": "2024-01-01",
         "text": "User-agent: *\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /\n"},
        {"host": "b.example", "fetched_at": "2024-01-01T00:00:00Z", "status": 503},
        {"host": "c.example", "text": "User-agent: CCBot\nDisallow: /\n"},
    ]
    path = tmp_path / "robots.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n", encoding="utf-8")
    return path


def stage(tmp_path: Path, **kw: object) -> Consent:
    config = ConsentConfig(agents=AGENTS, robots=str(robots_jsonl(tmp_path)), **kw)  # type: ignore[arg-type]
    return Consent(config)


def doc(url: str, fetched_at: str | None = None, head: str = "", headers: dict | None = None) -> Document:
    d = Document(id="d", url=url, html=f"<html><head>{head}</head><body>x</body></html>", fetched_at=fetched_at)
    if headers:
        d.derived["http_headers"] = headers
    return d


def test_a_page_without_signals_gets_no_annotation(tmp_path):
    assert stage(tmp_path).evaluate(doc("https://z.example/p")) == Evaluation({}, [])
    assert stage(tmp_path).evaluate(doc("https://a.example/p", "2023-06-01T00:00:00Z")) == Evaluation({}, [])


def test_robots_verdict_is_the_snapshot_in_force_at_fetch_time(tmp_path):
    consent = stage(tmp_path)
    before = consent.evaluate(doc("https://a.example/p", "2023-12-31T23:59:59Z"))
    after = consent.evaluate(doc("https://a.example/p", "2024-03-01T00:00:00Z"))
    assert before.annotations == {}
    assert after.annotations == {"consent.robots": {
        "file": f"{tmp_path / 'robots.jsonl'}:2", "date": "2024-01-01T00:00:00Z",
        "disallow": {"GPTBot": "line 5: Disallow: /"}}}
    assert after.drops == []  # record mode


def test_as_of_latest_applies_the_newest_snapshot_retroactively(tmp_path):
    evaluation = stage(tmp_path, as_of="latest").evaluate(doc("https://a.example/private/x", "2020-01-01T00:00:00Z"))
    assert evaluation.annotations["consent.robots"]["disallow"] == {
        "GPTBot": "line 5: Disallow: /", "CCBot": "line 2: Disallow: /private"}


def test_a_5xx_snapshot_disallows_every_agent_and_an_undated_one_applies_at_any_time(tmp_path):
    consent = stage(tmp_path)
    b = consent.evaluate(doc("https://b.example/", "2024-02-01T00:00:00Z")).annotations
    assert b["consent.robots"]["disallow"] == {"GPTBot": "status 503", "CCBot": "status 503"}
    c = consent.evaluate(doc("https://C.example/x", "2001-01-01T00:00:00Z")).annotations
    assert c["consent.robots"]["disallow"] == {"CCBot": "line 2: Disallow: /"}
    assert c["consent.problems"] == [f"{tmp_path / 'robots.jsonl'}:4: fetched_at None is no date (read as undated)"]


def test_bad_snapshot_lines_are_reported_with_their_place(tmp_path):
    snapshots = RobotsSnapshots(str(robots_jsonl(tmp_path)))
    assert snapshots.problems[-1].startswith(f"{tmp_path / 'robots.jsonl'}:5: not JSON")


def test_enforce_drops_with_attribution_and_records_every_reason(tmp_path):
    consent = stage(tmp_path, mode="enforce")
    page = doc("https://a.example/p", "2024-03-01T00:00:00Z", head='<meta name="robots" content="noai">',
               headers={"tdm-reservation": "1", "tdm-policy": "https://a.example/tdm.json"})
    drops = consent.evaluate(page).drops
    assert drops == [
        Drop("consent", "robots_disallow", value="GPTBot", limit="line 5: Disallow: /",
             detail={"file": f"{tmp_path / 'robots.jsonl'}:2", "date": "2024-01-01T00:00:00Z"}),
        Drop("consent", "noai", value="meta", detail={"sources": ["meta"]}),
        Drop("consent", "tdm_reservation", value="header", detail={"policy": {"header": "https://a.example/tdm.json"}}),
    ]


def test_enforce_counts_only_the_chosen_signals(tmp_path):
    consent = stage(tmp_path, mode="enforce", signals=("tdm",))
    page = doc("https://a.example/p", "2024-03-01T00:00:00Z", head='<meta name="robots" content="noai">')
    evaluation = consent.evaluate(page)
    assert evaluation.drops == [] and "consent.noai" in evaluation.annotations
    assert consent.evaluate(doc("https://q.example/", head='<meta name="tdm-reservation" content="0">')).drops == []


def test_config_rejects_unknown_signals_and_a_missing_source(tmp_path):
    with pytest.raises(ValueError, match="unknown"):
        ConsentConfig(signals=("robots", "vibes"))
    from thresher.core.errors import ConfigError
    with pytest.raises(ConfigError, match="does not exist"):
        Consent(ConsentConfig(robots=str(tmp_path / "missing")))


def test_snapshot_folder_by_host_and_by_host_and_date(tmp_path):
    root = tmp_path / "robots"
    (root / "d.example").mkdir(parents=True)
    (root / "d.example" / "2024-05-01.txt").write_text("User-agent: GPTBot\nDisallow: /\n")
    (root / "d.example" / "2022-05-01T10-00-00.txt").write_text("User-agent: *\nAllow: /\n")
    (root / "e.example_443").write_text("User-agent: CCBot\nDisallow: /\n")
    consent = Consent(ConsentConfig(agents=AGENTS, robots=str(root)))
    assert consent.evaluate(doc("https://d.example/x", "2023-01-01T00:00:00Z")).annotations == {}
    assert consent.evaluate(doc("https://d.example/x", "2024-06-01T00:00:00Z")).annotations["consent.robots"][
        "date"] == "2024-05-01T00:00:00Z"
    assert consent.evaluate(doc("https://e.example/x")).annotations["consent.robots"]["disallow"] == {
        "CCBot": "line 2: Disallow: /"}


def test_dates_are_read_in_utc():
    assert iso_utc("2024-01-02T03:04:05+02:00") == "2024-01-02T01:04:05Z"
    assert iso_utc("20240102030405") == "2024-01-02T03:04:05Z"
    assert iso_utc("yesterday") is None and iso_utc(None) is None


def test_the_parse_cache_is_bounded(tmp_path):
    root = tmp_path / "robots"
    root.mkdir()
    for i in range(50):
        (root / f"h{i}.example").write_text("User-agent: *\nDisallow: /\n")
    consent = Consent(ConsentConfig(agents=AGENTS, robots=str(root), cache_files=4))
    for i in range(50):
        consent.evaluate(doc(f"https://h{i}.example/"))
    assert consent.snapshots is not None and len(consent.snapshots._cache) == 4


def _crawl(tmp_path: Path) -> Path:
    records = [{"url": f"https://www.x{i}.example/p{i}", "html": article_html(i)} for i in range(6)]
    records[2]["html"] = records[2]["html"].replace("<head>", '<head><meta name="robots" content="noai">')
    records[4]["html"] = records[4]["html"].replace("<head>", '<head><meta name="tdm-reservation" content="1">')
    return write_jsonl(tmp_path / "crawl.jsonl", records)


def _kept(out: Path) -> list[dict]:
    return list(read_shards(out))


def test_record_mode_changes_only_the_annotations_of_pages_with_signals(tmp_path):
    src = _crawl(tmp_path)
    build([str(src)], tmp_path / "off", local_config(consent={"mode": "off"}))
    build([str(src)], tmp_path / "rec", local_config())
    off, rec = _kept(tmp_path / "off"), _kept(tmp_path / "rec")
    assert [r["id"] for r in off] == [r["id"] for r in rec]
    for a, b in zip(off, rec, strict=True):
        extra = {k: v for k, v in b.get("annotations", {}).items() if k.startswith("consent.")}
        b = {**b, "annotations": {k: v for k, v in b.get("annotations", {}).items() if not k.startswith("consent.")}}
        if not b["annotations"]:
            del b["annotations"]
        assert a == b
        assert bool(extra) == (a["url"].endswith(("/p2", "/p4")))


def test_enforce_mode_drops_the_opted_out_pages_with_reasons(tmp_path):
    src = _crawl(tmp_path)
    build([str(src)], tmp_path / "out", local_config(consent={"mode": "enforce"}), rejects=tmp_path / "rejects")
    assert [r["url"][-2:] for r in _kept(tmp_path / "out")] == ["p0", "p1", "p3", "p5"]
    with gzip.open(next((tmp_path / "rejects").glob("*.jsonl.gz")), "rt") as f:
        rejected = sorted((r["url"][-2:], r["drop"]["stage"], r["drop"]["reason"]) for r in map(json.loads, f))
    assert rejected == [("p2", "consent", "noai"), ("p4", "consent", "tdm_reservation")]


def test_a_warc_build_reads_header_signals_and_robots_snapshots(tmp_path):
    page = article_html(1).encode()
    warc = tmp_path / "crawl.warc"
    warc.write_bytes(record(http(page, extra="X-Robots-Tag: GPTBot: noai\r\n"), uri="https://a.example/one")
                     + record(http(article_html(2).encode()), uri="https://a.example/two"))
    config = local_config(consent={"agents": list(AGENTS), "robots": str(robots_jsonl(tmp_path))})
    build([str(warc)], tmp_path / "out", config)
    kept = {r["url"]: r.get("annotations", {}) for r in _kept(tmp_path / "out")}
    assert kept["https://a.example/one"]["consent.noai"] == ["header:GPTBot"]
    # fetched 2024-01-02 (the WARC-Date): the 2024-01-01 snapshot is in force
    assert kept["https://a.example/two"]["consent.robots"]["disallow"] == {"GPTBot": "line 5: Disallow: /"}


def test_robots_responses_in_a_warc_are_snapshots_dated_by_warc_date(tmp_path):
    body = b"User-agent: CCBot\nDisallow: /\n"
    warc = tmp_path / "robots.warc.gz"
    warc.write_bytes(gzip.compress(record(http(body, ctype="text/plain"), uri="https://f.example/robots.txt")
                                   + record(http(b"", status=404), uri="https://g.example/robots.txt")
                                   + record(http(), uri="https://f.example/page"), mtime=0))
    snapshots = RobotsSnapshots(str(warc))
    assert sorted(snapshots.by_host) == ["f.example", "g.example"]
    consent = Consent(ConsentConfig(agents=AGENTS, robots=str(warc)), snapshots)
    found = consent.evaluate(doc("https://f.example/x", "2024-05-01T00:00:00Z")).annotations["consent.robots"]
    assert found["disallow"] == {"CCBot": "line 2: Disallow: /"} and found["date"] == "2024-01-02T03:04:05Z"
    assert consent.evaluate(doc("https://g.example/x", "2024-05-01T00:00:00Z")).annotations == {}


def test_the_snapshot_source_digest_enters_the_config_hash(tmp_path):
    path = robots_jsonl(tmp_path)
    first = local_config(consent={"robots": str(path)})
    assert first.consent.robots_sha256 and first.hash == local_config(consent={"robots": str(path)}).hash
    path.write_text(path.read_text() + "\n", encoding="utf-8")
    assert local_config(consent={"robots": str(path)}).hash != first.hash


def test_tdmrep_json_snapshots_reserve_by_location_and_bad_files_are_reported(tmp_path):
    rules = [{"location": "/private/*", "tdm-reservation": 1, "tdm-policy": "https://v.example/policy.json"},
             {"location": "/", "tdm-reservation": 0}, {"location": 3, "tdm-reservation": 1}]
    lines = [{"url": "https://v.example/.well-known/tdmrep.json", "fetched_at": "2024-01-01",
              "text": json.dumps(rules)},
             {"host": "w.example", "kind": "tdmrep", "fetched_at": "2024-01-01", "text": "{not json"}]
    path = tmp_path / "snapshots.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    consent = Consent(ConsentConfig(agents=AGENTS, robots=str(path), mode="enforce"))
    private = consent.evaluate(doc("https://v.example/private/a", "2024-02-01T00:00:00Z"))
    where = f"{path}:1"
    assert private.annotations == {
        "consent.tdm_reservation": {"tdmrep.json": 1},
        "consent.tdm_policy": {"tdmrep.json": "https://v.example/policy.json"},
        "consent.problems": [
            f"{where}: tdmrep.json rule 2 has no location or a tdm-reservation other than 0 or 1 (ignored)"]}
    assert private.drops[0] == Drop("consent", "tdm_reservation", value="tdmrep.json",
                                    detail={"policy": {"tdmrep.json": "https://v.example/policy.json"}})
    public = consent.evaluate(doc("https://v.example/pub", "2024-02-01T00:00:00Z"))
    assert public.annotations["consent.tdm_reservation"] == {"tdmrep.json": 0} and public.drops == []
    assert consent.evaluate(doc("https://v.example/private/a", "2023-02-01T00:00:00Z")).annotations == {}
    bad = consent.evaluate(doc("https://w.example/x", "2024-02-01T00:00:00Z")).annotations
    assert bad["consent.problems"][0].startswith(f"{path}:2: tdmrep.json is not JSON")


def test_odd_urls_and_dates_never_raise(tmp_path):
    consent = stage(tmp_path, mode="enforce")
    for url, fetched_at in (("http://[::1", None), ("https://a.example/p", "0001-01-01T00:00:00+01:00"),
                            ("https://a.example/\ud800", "9999-12-31T23:59:59-01:00"), (None, "x"), ("", "")):
        consent.evaluate(doc(url, fetched_at))  # type: ignore[arg-type]
    assert iso_utc("0001-01-01T00:00:00+01:00") is None and iso_utc("0999-01-01") == "0999-01-01T00:00:00Z"
