"""A planted corpus with every signal kind — meta tags, HTTP headers, robots.txt snapshots of several
dates and statuses — built with `--consent enforce`: the expected verdict of every page is written
down here, before the run, and the build must drop exactly the planted opt-outs with the planted
reasons (precision and recall 1.0), under both `as_of` settings, identically on the pool engine;
the ledger and `thresher check --consent-policy` read the record-mode build."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config
from tests.unit.read.test_warc_bad_input import http, record

from thresher.cli import main
from thresher.run.build import build
from thresher.write.manifest import read_shards

# every page of the crawl is fetched 2024-01-02T03:04:05Z (the WARC-Date the helper writes)
# url -> (head markup, extra HTTP headers)
PAGES = {
    "https://a.example/clean": ("", ""),
    "https://a.example/meta-noai": ('<meta name="robots" content="noai, noimageai">', ""),
    "https://a.example/meta-agent": ('<meta name="GPTBot" content="noai">', ""),
    "https://a.example/meta-other-agent": ('<meta name="Googlebot" content="noai">', ""),
    "https://a.example/noindex": ('<meta name="robots" content="noindex, nofollow">', ""),
    "https://a.example/header-noai": ("", "X-Robots-Tag: noai\r\n"),
    "https://a.example/header-noimageai": ("", "X-Robots-Tag: CCBot: noimageai\r\n"),
    "https://a.example/tdm-header": ("", "tdm-reservation: 1\r\ntdm-policy: https://a.example/policy.json\r\n"),
    "https://a.example/tdm-meta-zero": ('<meta name="tdm-reservation" content="0">', ""),
    "https://r.example/private/page": ("", ""),  # disallowed for GPTBot only from 2024-06 on
    "https://s.example/page": ("", ""),  # robots.txt answered 503 in 2023
    "https://t.example/page": ("", ""),  # robots.txt answered 404
    "https://u.example/a.html": ("", ""),  # CCBot may not fetch *.html
    "https://u.example/a.htm": ("", ""),
}
SNAPSHOTS = [
    {"host": "r.example", "fetched_at": "2023-01-01T00:00:00Z", "text": "User-agent: *\nDisallow: /admin\n"},
    {"host": "r.example", "fetched_at": "2024-06-01T00:00:00Z", "text": "User-agent: GPTBot\nDisallow: /private\n"},
    {"host": "s.example", "fetched_at": "2023-05-01T00:00:00Z", "status": 503},
    {"host": "t.example", "fetched_at": "2023-05-01T00:00:00Z", "status": 404},
    {"host": "u.example", "fetched_at": "2023-05-01T00:00:00Z",
     "text": "User-agent: ccbot\nDisallow: /*.html$\n"},
]
# written before the run: url -> (reason, value) of the drop under enforce with the default signals
EXPECTED_FETCH = {
    "https://a.example/meta-noai": ("noai", "meta"),
    "https://a.example/meta-agent": ("noai", "meta:GPTBot"),
    "https://a.example/header-noai": ("noai", "header"),
    "https://a.example/tdm-header": ("tdm_reservation", "header"),
    "https://s.example/page": ("robots_disallow", "GPTBot"),
    "https://u.example/a.html": ("robots_disallow", "CCBot"),
}
EXPECTED_LATEST = {**EXPECTED_FETCH, "https://r.example/private/page": ("robots_disallow", "GPTBot")}


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    crawl = tmp_path / "crawl.warc.gz"
    with open(crawl, "wb") as f:
        for i, (url, (head, headers)) in enumerate(PAGES.items()):
            html = article_html(i).replace("<head>", "<head>" + head).encode()
            f.write(gzip.compress(record(http(html, extra=headers), uri=url), mtime=0))
    snapshots = tmp_path / "robots.jsonl"
    snapshots.write_text("".join(json.dumps(s) + "\n" for s in SNAPSHOTS), encoding="utf-8")
    return crawl, snapshots


def _dropped(rejects: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for path in rejects.glob("*.jsonl.gz"):
        with gzip.open(path, "rt") as f:
            for row in map(json.loads, f):
                assert row["drop"]["stage"] == "consent"
                out[row["url"]] = (row["drop"]["reason"], row["drop"]["value"])
    return out


@pytest.mark.parametrize(("as_of", "expected"), [("fetch", EXPECTED_FETCH), ("latest", EXPECTED_LATEST)])
def test_enforce_drops_exactly_the_planted_opt_outs(tmp_path, planted, as_of, expected):
    crawl, snapshots = planted
    config = local_config(consent={"mode": "enforce", "robots": str(snapshots), "as_of": as_of},
                          extract={"min_text_chars": 1})
    build([str(crawl)], tmp_path / "out", config, rejects=tmp_path / "rejects")
    kept = {r["url"] for r in read_shards(tmp_path / "out")}
    assert _dropped(tmp_path / "rejects") == expected  # precision and recall 1.0, reasons included
    assert kept == set(PAGES) - set(expected)


def test_the_pool_engine_gives_the_same_output(tmp_path, planted):
    crawl, snapshots = planted
    consent = {"mode": "enforce", "robots": str(snapshots)}
    local = build([str(crawl)], tmp_path / "local", local_config(consent=consent))
    pool = build([str(crawl)], tmp_path / "pool", local_config(consent=consent, exec={"engine": "pool", "workers": 2}))
    assert local.manifest["shards"] == pool.manifest["shards"]
    assert local.stats.counters == pool.stats.counters


def test_record_mode_ledger_and_check_policy(tmp_path, planted, capsys):
    crawl, snapshots = planted
    build([str(crawl)], tmp_path / "out", local_config(consent={"robots": str(snapshots)}))
    out = str(tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "## Consent" in card and "| noai | 3 | 21.4% |" in card and "| robots:CCBot | 2 | 14.3% |" in card
    assert main(["consent", out, "--json"]) == 0
    ledger = json.loads(capsys.readouterr().out)
    assert ledger["documents"] == len(PAGES)
    assert {k: v["documents"] for k, v in ledger["signals"].items()} == {
        "robots": 2, "noai": 3, "noimageai": 2, "tdm": 1}  # robots: s.example (503), u.example (as of fetch)
    assert ledger["robots_disallow_by_agent"]["CCBot"]["documents"] == 2  # s.example (503) and u.example
    assert ledger["enforce_would_remove"]["documents"] == len(EXPECTED_FETCH)
    assert main(["check", out, "--consent-policy", "robots:ClaudeBot,tdm"]) == 1
    assert "broken by 1 kept documents with robots:ClaudeBot, 1 kept documents with tdm" in capsys.readouterr().out
    assert main(["check", out, "--consent-policy", "robots:Googlebot"]) == 0
    assert main(["check", out, "--consent-policy", "vibes"]) != 0
    from thresher.report.html import write_report

    write_report(out, str(tmp_path / "report.html"))
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<section id='consent'" in html and "robots.txt disallows, by agent" in html
