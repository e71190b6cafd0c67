"""Issue 14 items 1 and 6: what a build can check before its first task fails at once, with one
line, and leaves no dataset behind."""

import sys

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.cli import main
from thresher.core.errors import ConfigError, InputError
from thresher.run.build import build
from thresher.run.preflight import ExtraNeed, check_extra, preflight


def crawl(tmp_path):
    return write_jsonl(
        tmp_path / "crawl.jsonl", [{"url": f"https://a.example/{i}", "html": article_html(i)} for i in range(3)]
    )


def test_missing_input_file_exits_1_and_writes_no_dataset(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["build", str(tmp_path / "nope.jsonl"), "-o", str(out), "--engine", "local", "-q"])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"thresher: error: {tmp_path / 'nope.jsonl'}: no such file or directory"]
    assert not out.exists()


def test_missing_input_among_good_ones_fails_the_library_build(tmp_path):
    with pytest.raises(InputError, match="missing.jsonl: no such file"):
        build([str(crawl(tmp_path)), str(tmp_path / "missing.jsonl")], tmp_path / "out", local_config())
    assert not (tmp_path / "out").exists()


def test_glob_matching_nothing_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="the pattern matches no file"):
        preflight([str(tmp_path / "*.warc.gz")], tmp_path / "out", local_config())


def test_directory_without_input_files_is_an_input_error(tmp_path):
    (tmp_path / "crawl").mkdir()
    (tmp_path / "crawl" / ".hidden.jsonl").write_text("{}\n")
    with pytest.raises(InputError, match="the directory holds no input file"):
        preflight([str(tmp_path / "crawl")], tmp_path / "out", local_config())


def test_output_below_a_file_is_refused_before_any_task(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="output .*not a directory"):
        preflight([str(crawl(tmp_path))], tmp_path / "file" / "out", local_config())
    with pytest.raises(ConfigError, match="rejects folder .*not a directory"):
        preflight([str(crawl(tmp_path))], tmp_path / "out", local_config(), rejects=tmp_path / "file")


def test_missing_extra_fails_before_the_scan_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ModuleNotFoundError
    out = tmp_path / "out"
    with pytest.raises(ConfigError) as info:
        build([str(crawl(tmp_path))], out, local_config(output={"format": "parquet"}))
    assert str(info.value) == '--format parquet needs the parquet extra: pip install "thresher[parquet]"'
    assert not out.exists()  # no work dir, no task, no retry


def test_installed_but_broken_extra_names_the_real_import_error(tmp_path, monkeypatch):
    pkg = tmp_path / "site" / "brokenextra"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "raise ImportError('lxml.html.clean module is now a separate project lxml_html_clean')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ConfigError) as info:
        check_extra(ExtraNeed("brokenextra", "trafilatura", "--extractor trafilatura"))
    message = str(info.value)
    assert "brokenextra is installed but cannot be imported" in message
    assert "lxml_html_clean" in message and "needs the" not in message


def test_extract_verb_with_a_broken_extractor_install_names_the_import_error(tmp_path, monkeypatch, capsys):
    pkg = tmp_path / "site" / "trafilatura"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "raise ImportError('lxml.html.clean module is now a separate project lxml_html_clean')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in [m for m in sys.modules if m == "trafilatura" or m.startswith("trafilatura.")]:
        monkeypatch.delitem(sys.modules, name)
    page = tmp_path / "page.html"
    page.write_text(article_html(1))
    assert main(["extract", str(page), "--extractor", "trafilatura"]) == 1
    err = capsys.readouterr().err
    assert "trafilatura is installed but cannot be imported" in err and "lxml_html_clean" in err


def _dedup_fails_fast(args, capsys):
    import time

    t0 = time.monotonic()
    code = main(["dedup", *args, "--engine", "local", "-q"])
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and err[0].startswith("thresher: "), err
    assert elapsed < 1.0, elapsed  # before any task: no scan of the inputs that are there
    return err[0].split(" error: ", 1)[1]


def test_dedup_has_the_builds_preflight(tmp_path, capsys, monkeypatch):
    good = str(crawl(tmp_path))
    assert (
        _dedup_fails_fast([good, str(tmp_path / "nope.jsonl")], capsys)
        == f"{tmp_path / 'nope.jsonl'}: no such file or directory"
    )
    assert _dedup_fails_fast([str(tmp_path / "*.warc.gz")], capsys).endswith("the pattern matches no file")
    (tmp_path / "file").write_text("x")
    assert "work dir" in _dedup_fails_fast([good, "--work-dir", str(tmp_path / "file" / "w")], capsys)
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    message = _dedup_fails_fast([good, "--extractor", "trafilatura"], capsys)
    assert message == '--extractor trafilatura needs the trafilatura extra: pip install "thresher[trafilatura]"'
