"""`thresher report`, `check` and `compare` on real builds of a small crawl."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from tests.conftest import article_html, write_jsonl

from thresher.cli import main

XSS = "<script>alert(1)</script>"


WORDS = ("the river town council voted on a plan to open the old mill as a library and a school for the children "
         "of the valley while the farmers asked about the roads and the water that the new houses would need").split()


def _page(i: int, sentences: int = 14) -> str:
    rng = random.Random(i)
    text = " ".join(
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "." for _ in range(sentences)
    )
    return (f"<html><head><title>Story {i}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>Story {i}</h1><p>{text}</p></article><footer>Privacy policy</footer></body></html>")


def _crawl(tmp_path: Path) -> Path:
    records = []
    for i in range(40):
        records.append({"url": f"https://site{i % 4}.example/a/{i}", "html": _page(i)})
    # exact and near duplicates of pages 0 and 1
    records += [{"url": f"https://copy.example/{i}", "html": _page(0)} for i in range(3)]
    records.append({"url": "https://copy.example/near", "html": _page(1).replace("Story 1", "Story one")})
    # pages too repetitive for the quality rules
    records += [{"url": f"https://spam.example/{i}", "html": article_html(i, words=150)} for i in range(3)]
    # a page too short for the quality rules, whose text carries markup that must never run
    records.append(
        {"url": "https://evil.example/x", "html": f"<html><body><p>{XSS.replace('<', '&lt;')} tiny</p></body></html>"}
    )
    # a kept page carrying the same markup as text
    body = " ".join(f"word{j} and more text here for the reader." for j in range(60))
    records.append({"url": "https://evil.example/kept", "text": f"{XSS}\n{body}"})
    return write_jsonl(tmp_path / "crawl.jsonl", records, raw_lines=["{not json"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("report")
    crawl = _crawl(tmp)
    dataset, rejects = tmp / "ds", tmp / "rejects"
    assert main(["build", str(crawl), "-o", str(dataset), "--rejects", str(rejects), "--engine", "local", "-q"]) == 0
    return crawl, dataset, rejects


def test_report_has_every_section_and_shows_crawled_markup_as_text(built, tmp_path):
    _, dataset, rejects = built
    out = tmp_path / "r.html"
    assert main(["report", str(dataset), "--rejects", str(rejects), "-o", str(out), "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    for anchor in (
        "summary",
        "funnel",
        "drops",
        "metrics",
        "languages",
        "lengths",
        "dedup",
        "hosts",
        "timings",
        "examples",
    ):
        assert f"id='{anchor}'" in page
    # no script element, no external reference of any kind, and a CSP that forbids both
    assert "<script" not in page.lower()
    assert not re.search(r"(?:src|href)\s*=\s*['\"]?(?:https?:)?//", page)
    assert "default-src 'none'" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # charts: the funnel, drops per rule and at least one metric histogram, each with bars
    charts = re.findall(r"<svg[^>]*aria-label='([^']*)'.*?</svg>", page, flags=re.S)
    assert "Documents left after each stage" in charts
    assert "Documents dropped per stage and rule" in charts
    assert any(label.startswith("quality.word_count") for label in charts)
    assert all("<rect" in svg for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S))
    stats = json.loads((dataset / "stats.json").read_text())
    assert f">{stats['seen']}<" in page.replace(",", "")
    # the dropped short page is an example under its rule, with its Drop
    assert "quality.gopher/too_few_words" in page


def test_report_without_rejects_uses_what_the_build_recorded(built, tmp_path):
    _, dataset, _ = built
    out = tmp_path / "r.html"
    assert main(["report", str(dataset), "-o", str(out), "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    # examples from the build's per-rule sample, histograms from its binned counters
    assert "samples.jsonl.gz" in page and "Dropped by quality.gopher/too_few_words" in page
    assert "counted by the build" in page
    stats = json.loads((dataset / "stats.json").read_text())
    hist = stats["histograms"]["quality.word_count"]
    # every document that reached the Gopher rules is in the word-count histogram, once
    assert sum(hist["passed"].values()) + sum(hist["dropped"].values()) == stats["seen"] - stats["malformed"]


def test_report_is_deterministic(built, tmp_path):
    _, dataset, rejects = built
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    main(["report", str(dataset), "--rejects", str(rejects), "-o", str(a), "-q"])
    main(["report", str(dataset), "--rejects", str(rejects), "-o", str(b), "-q"])
    assert a.read_bytes() == b.read_bytes()


def test_report_of_a_folder_that_is_no_dataset_is_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 1
    assert "not a thresher dataset" in capsys.readouterr().err


def test_check_passes_and_fails_on_bounds(built, capsys, tmp_path):
    _, dataset, _ = built
    assert main(["check", str(dataset), "--max-duplicate-paragraph-rate", "0.5", "--min-mean-words", "10"]) == 0
    out = capsys.readouterr().out
    assert "duplicate_paragraph_rate" in out and "result: pass" in out
    assert main(["check", str(dataset), "--min-mean-words", "100000"]) == 1
    captured = capsys.readouterr()
    assert "result: FAIL" in captured.out and "mean_words" in captured.err
    bounds = tmp_path / "b.toml"
    bounds.write_text("[check]\nmin_mean_char_entropy = 1.0\nmax_mean_char_entropy = 2.0\n")
    assert main(["check", str(dataset), "--bounds", str(bounds), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    entropy = next(m for m in result["measures"] if m["name"] == "mean_char_entropy")
    assert entropy["passed"] is False and entropy["ci95"][0] <= entropy["value"] <= entropy["ci95"][1]
    bounds.write_text("[check]\nmax_typo = 1\n")
    assert main(["check", str(dataset), "--bounds", str(bounds)]) == 1
    assert "unknown key" in capsys.readouterr().err


def test_check_language_share_needs_annotations_or_fails(built, capsys):
    _, dataset, _ = built
    code = main(["check", str(dataset), "--language", "en", "--min-language-share", "0.9", "--json"])
    result = json.loads(capsys.readouterr().out)
    share = result["measures"][0]
    assert share["name"] == "language_share[en]"
    if share["value"] is None:  # no language stage and no detector in this build: never a silent pass
        assert code == 1 and share["passed"] is False
    else:
        assert 0.0 <= share["value"] <= 1.0


def test_compare_two_builds_of_one_crawl(built, tmp_path, capsys):
    crawl, dataset, _ = built
    other = tmp_path / "other"
    assert (
        main(
            ["build", str(crawl), "-o", str(other), "--engine", "local", "-q", "--method", "none", "--quality", "none"]
        )
        == 0
    )
    assert main(["compare", str(dataset), str(other), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    urls_a = {r["url"] for r in _records(dataset)}
    urls_b = {r["url"] for r in _records(other)}
    assert result["urls"] == {"a": len(urls_a), "b": len(urls_b), "both": float(len(urls_a & urls_b)), "exact": True}
    # everything the filtered build kept is in the unfiltered one; not the other way round
    assert result["a"]["near_share"] == 1.0
    assert result["b"]["near_share"] < 1.0
    assert result["b"]["only_examples"]


def test_compare_of_a_dataset_with_itself(built, capsys):
    _, dataset, _ = built
    assert main(["compare", str(dataset), str(dataset), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["a"]["near_share"] == result["b"]["near_share"] == 1.0
    assert result["urls"]["both"] == result["urls"]["a"]


def _records(dataset: Path) -> list[dict]:
    from thresher import read_shards

    return list(read_shards(dataset))


def _chromium() -> str:
    import shutil

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("headless Chromium not installed (Debian package chromium; .ci/run installs it)")
    pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) drives Chromium")
    return path


ARTIFACTS = Path(__file__).resolve().parents[3] / "build" / "test-artifacts"


def test_report_in_a_real_browser(built, tmp_path):
    """The page as a person sees it: every chart drawn, no console message or script error, no
    request but the page itself, crawled markup shown as text. The screenshot is kept in
    build/test-artifacts/ for a person to look at."""
    from playwright.sync_api import sync_playwright

    chromium = _chromium()
    _, dataset, rejects = built
    out = tmp_path / "report.html"
    assert main(["report", str(dataset), "--rejects", str(rejects), "-o", str(out), "-q"]) == 0
    requests: list[str] = []
    console: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(out.as_uri())
            charts = page.query_selector_all("svg.chart")
            labels = [c.get_attribute("aria-label") for c in charts]
            bars = [len(c.query_selector_all("rect")) for c in charts]
            scripts = page.query_selector_all("script")
            pre_texts = [el.text_content() or "" for el in page.query_selector_all("pre.doc")]
            alerted: list[str] = []
            page.on("dialog", lambda d: (alerted.append(d.message), d.dismiss()))
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        finally:
            browser.close()
    assert requests == [out.as_uri()]
    assert console == [] and errors == [] and alerted == []
    assert scripts == []
    assert "Documents left after each stage" in labels and "Documents dropped per stage and rule" in labels
    assert len(charts) >= 5 and all(n > 0 for n in bars)
    assert any(XSS in text for text in pre_texts)
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000


def test_explain_kept_dropped_and_duplicate(built, capsys):
    _, dataset, _ = built
    from thresher import read_shards

    kept = next(iter(read_shards(dataset)))
    assert main(["explain", str(dataset), kept["id"], "--json"]) == 0
    [ex] = json.loads(capsys.readouterr().out)
    assert ex["status"] == "kept" and ex["entry"]["shard"] == 0 and ex["entry"]["row"] == 0
    assert any(r["metric"] == "quality.word_count" and r["verdict"] == "ok" for r in ex["rules"])

    # the short page: dropped by a rule; re-run from its input record shows every rule
    assert main(["explain", str(dataset), "https://evil.example/x", "--json"]) == 0
    [ex] = json.loads(capsys.readouterr().out)
    assert ex["status"] == "dropped" and ex["entry"]["drop"]["reason"] == "too_few_words"
    assert [step["stage"] for step in ex["rerun"][:2]] == ["consent", "extract"]  # consent reads the HTML first
    assert any(r["metric"] == "quality.word_count" and r["verdict"] == "too low" for r in ex["rules"])

    # an exact copy of page 0: names the kept document and where it is
    assert main(["explain", str(dataset), "https://copy.example/1", "--json"]) == 0
    [ex] = json.loads(capsys.readouterr().out)
    assert ex["entry"]["drop"]["stage"] == "dedup.exact"
    assert ex["kept_instead"]["status"] == "kept" and ex["kept_instead"]["url"] == "https://site0.example/a/0"

    assert main(["explain", str(dataset), "https://nowhere.example/"]) == 1
    assert "no document" in capsys.readouterr().err


def test_index_and_samples_are_identical_across_engines(built, tmp_path):
    """...and across processes: the pool build runs in a process of its own (a gzip header once
    carried the temporary file's name, with the driver's pid in it)."""
    import os
    import subprocess
    import sys

    crawl, _, _ = built
    a, b = tmp_path / "local", tmp_path / "pool"
    assert main(["build", str(crawl), "-o", str(a), "--engine", "local", "-q"]) == 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-m", "thresher", "build", str(crawl), "-o", str(b), "--engine", "pool",
                    "--workers", "2", "-q"], check=True, env=env, timeout=300)
    for name in sorted(p.name for p in (a / "index").iterdir()):
        assert (a / "index" / name).read_bytes() == (b / "index" / name).read_bytes(), name
    assert (a / "samples.jsonl.gz").read_bytes() == (b / "samples.jsonl.gz").read_bytes()
    sa = json.loads((a / "stats.json").read_text())
    sb = json.loads((b / "stats.json").read_text())
    assert sa["histograms"] == sb["histograms"] and sa["histograms"]
    header = json.loads((a / "index" / "index.json").read_text())
    assert header["documents"] == sa["seen"] - sa["malformed"]


def test_value_bins_are_fixed_and_cover_values():
    from thresher.run.histograms import bin_range, value_bin

    for v in (1e-6, 0.0099, 0.5, 1.0, 3.0, 50, 49.999, 1e6):
        lo, hi = bin_range(value_bin(v))
        assert lo <= v < hi
    assert value_bin(0) == "z" and bin_range("z") == (0.0, 0.0)
    lo, hi = bin_range(value_bin(-2.5))
    assert lo <= -2.5 < hi


def _shard_text_summary(dataset: Path) -> dict:
    """The card's text figures the slow way: every kept record read back from the shards."""
    import gzip
    from collections import Counter

    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    text_bytes = tokens = 0
    languages: Counter[str] = Counter()
    for shard in manifest["shards"]:
        raw = (dataset / shard["path"]).read_bytes()
        for line in (gzip.decompress(raw) if shard["path"].endswith(".gz") else raw).splitlines():
            record = json.loads(line)
            text_bytes += len(record["text"].encode("utf-8"))
            tokens += len(record["text"].split())
            code = (record.get("annotations") or {}).get("lang.code")
            if code:
                languages[code] += 1
    return {"text_bytes": text_bytes, "tokens": tokens, "languages": dict(languages)}


@pytest.mark.parametrize("engine", ["local", "pool"])
def test_card_text_figures_equal_a_reread_of_the_shards(built, tmp_path, engine):
    """The card counts the kept text in the tasks (survivors of the scan minus what dedup dropped)
    instead of re-reading the shards at finalize: the figures must be those of a re-read."""
    crawl, _, _ = built
    dataset = tmp_path / "ds"
    assert main(["build", str(crawl), "-o", str(dataset), "--engine", engine, "--workers", "2", "-q"]) == 0
    stats = json.loads((dataset / "stats.json").read_text(encoding="utf-8"))
    assert sum(stats["drops"].get("dedup.exact", {}).values()) + sum(stats["drops"].get("dedup.near", {}).values()) >= 3
    assert not any(k.startswith(("card/", "card-dropped/")) for k in stats["counters"])  # bookkeeping, not stats
    truth = _shard_text_summary(dataset)
    card = (dataset / "README.md").read_text(encoding="utf-8")
    assert f"Text: {truth['text_bytes']:,} bytes (UTF-8), {truth['tokens']:,} whitespace tokens." in card
    assert truth["languages"], "the build annotates languages"
    for code, n in truth["languages"].items():
        assert re.search(rf"\| {code} \| {n:,} \|", card), (code, n)


def test_card_counts_tokens_in_a_real_tokenizer_when_asked(built, tmp_path):
    """`--output-card-tokenizer llama2`: the card's token count equals the tokenizer run over every
    kept record (read back from the shards), and names the vocabulary file by its sha256."""
    pytest.importorskip("tokenizers", reason="the embed extra (tokenizers) is not installed")
    from thresher.write.tokens import token_counter

    try:
        counter = token_counter("llama2")
    except Exception as exc:  # noqa: BLE001 - the wordllama package (embed extra) is absent
        pytest.skip(f"the llama2 tokenizer file is not installed: {exc}")
    import gzip

    crawl, _, _ = built
    dataset = tmp_path / "ds"
    assert main(["build", str(crawl), "-o", str(dataset), "--engine", "pool", "--workers", "2", "-q",
                 "--output-card-tokenizer", "llama2"]) == 0
    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    expected = sum(
        counter.count(json.loads(line)["text"])
        for shard in manifest["shards"]
        for line in gzip.decompress((dataset / shard["path"]).read_bytes()).splitlines()
    )
    card = (dataset / "README.md").read_text(encoding="utf-8")
    assert expected > 1000
    assert f"- Tokens: {expected:,} in the `llama2` tokenizer" in card and counter.sha256[:16] in card
    # a whitespace-only card without the option
    assert "- Tokens:" not in (built[1] / "README.md").read_text(encoding="utf-8")


def test_card_tokenizer_that_is_not_installed_fails_before_the_scan(built, tmp_path, monkeypatch, capsys):
    from thresher.write import tokens

    monkeypatch.setitem(tokens.TOKENIZER_FILES, "llama2", ("no_such_package_here", "t.json", "missing"))
    tokens.token_counter.cache_clear()
    crawl, _, _ = built
    try:
        assert main(["build", str(crawl), "-o", str(tmp_path / "ds"), "--engine", "local", "-q",
                     "--output-card-tokenizer", "llama2"]) == 1
    finally:
        tokens.token_counter.cache_clear()
    err = capsys.readouterr().err
    assert "card_tokenizer needs the no_such_package_here package" in err and "Traceback" not in err
    assert not (tmp_path / "ds" / ".work").exists()  # refused before any work


def test_explain_rerun_reads_only_the_record_at_its_offset(built, monkeypatch):
    """A rule-dropped document is re-run from its input record: in plain JSONL that record is read
    at its byte offset (ids name the place), not by reading the input from its start."""
    from thresher.read import sources
    from thresher.report import explain as explain_module

    crawl, dataset, _ = built
    read = sources.read_partition
    documents_read = []

    def counting(partition, config):
        for item in read(partition, config):
            documents_read.append(item)
            yield item

    monkeypatch.setattr(sources, "read_partition", counting)
    [ex] = explain_module.explain(dataset, "https://evil.example/x")  # the 48th record of 50
    assert ex.status == "dropped" and ex.rerun, "re-run from the input"
    assert len(documents_read) == 1, f"read {len(documents_read)} records to find one"
