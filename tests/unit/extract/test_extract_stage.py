"""The `extract` transform: exact drop records, what it sets on the document, pass-through."""

from __future__ import annotations

import builtins

import pytest

from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.core.stages import Transform, apply_stage
from thresher.extract.base import Extraction, ExtractionTimeout
from thresher.extract.config import ExtractConfig
from thresher.extract.registry import get_extractor
from thresher.extract.stage import Extract

PARA = "A sentence long enough to count as the main content of this small test page, with a comma."


def doc(html: str | None, **kw) -> Document:
    return Document(id="d1", html=html, **kw)


def test_extract_is_a_transform():
    assert isinstance(Extract(), Transform)


def test_text_title_and_metadata_are_set_and_html_cleared():
    d = doc(f'<html lang="fr"><title>Titre</title><p>{PARA}</p>', metadata={"page": {"status": 200}})
    assert Extract().transform(d) is None
    assert d.text == PARA and d.title == "Titre" and d.html is None
    assert d.metadata == {"page": {"status": 200, "lang": "fr"}}


def test_existing_title_is_kept_when_the_page_has_none():
    d = doc(f"<p>{PARA}</p>", title="from input")
    Extract().transform(d)
    assert d.title == "from input"


def test_document_without_html_passes_through():
    d = doc(None, text="already text")
    assert Extract().transform(d) is None
    assert d.text == "already text"


def test_empty_text_is_dropped_with_its_length():
    d = doc("<script>only()</script>")
    assert Extract().transform(d) == Drop("extract", "empty_text", value=0, limit=1)


def test_min_text_chars_bound_is_reported():
    d = doc("<p>short</p>")
    assert Extract(ExtractConfig(min_text_chars=10)).transform(d) == Drop("extract", "empty_text", value=5, limit=10)


def test_too_large_page_is_dropped_before_parsing():
    d = doc("<p>" + "é" * 600)
    assert Extract(ExtractConfig(max_html_bytes=1000)).transform(d) == Drop(
        "extract", "too_large", value=1203, limit=1000
    )
    assert d.html is None


def test_binary_payload_is_dropped():
    d = doc("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + "\x00\x01\x02\ufffd" * 100)
    assert Extract().transform(d) == Drop("extract", "binary_content", value=0.971, limit=0.05)


def test_timeout_is_a_drop():
    class Slow:
        name = "slow"

        def version(self) -> str:
            return "0"

        def extract(self, html, url=None, deadline=None):
            raise ExtractionTimeout("too slow")

    d = doc("<p>x</p>")
    assert Extract(ExtractConfig(timeout_s=2.5), extractor=Slow()).transform(d) == Drop("extract", "timeout", limit=2.5)


def test_builtin_deadline_becomes_a_timeout_drop():
    d = doc("<div><p>x</p></div>" * 50_000)
    assert Extract(ExtractConfig(timeout_s=0.0)).transform(d) == Drop("extract", "timeout", limit=0.0)


def test_split_tables_are_annotations():
    table = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    d = doc(f"<p>{PARA}</p>{table}")
    Extract(ExtractConfig(tables="split")).transform(d)
    assert d.annotations == {"extract.tables": ["| a | b |\n|---|---|\n| 1 | 2 |"]}
    assert "| a |" not in d.text


def test_apply_stage_returns_the_drop():
    assert apply_stage(Extract(), doc("")) == [Drop("extract", "empty_text", value=0, limit=1)]


def test_registry_builds_the_builtin_with_its_options():
    ex = get_extractor(ExtractConfig(text_format="markdown", tables="drop"))
    assert ex.name == "builtin" and ex.text_format == "markdown" and ex.tables == "drop"
    assert ex.version()


@pytest.mark.parametrize("name", ["trafilatura", "resiliparse"])
def test_missing_extra_is_a_config_error_with_an_install_hint(name, monkeypatch):
    real_import = builtins.__import__

    def fake_import(mod, *args, **kwargs):
        if mod.split(".")[0] == name:
            raise ImportError(f"No module named {mod!r}")
        return real_import(mod, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ConfigError, match=rf"pip install 'thresher\[{name}\]'"):
        get_extractor(ExtractConfig(extractor=name))


def test_trafilatura_adapter_when_installed():
    pytest.importorskip("trafilatura")
    page = f"<html><head><title>T</title></head><body><article><p>{PARA}</p><p>{PARA}</p></article></body></html>"
    r = get_extractor(ExtractConfig(extractor="trafilatura")).extract(page)
    assert isinstance(r, Extraction) and PARA in r.text


def test_resiliparse_adapter_when_installed():
    pytest.importorskip("resiliparse")
    r = get_extractor(ExtractConfig(extractor="resiliparse")).extract(f"<html><body><p>{PARA}</p></body></html>")
    assert PARA in r.text


def test_extractor_info_names_the_extractor_and_its_version():
    import thresher
    from thresher.extract.registry import extractor_info

    assert extractor_info(ExtractConfig()) == {"name": "builtin", "version": thresher.__version__}


def test_builtin_extractor_info_without_import_is_the_extractors_own():
    """The built-in's record, given without importing the extraction modules, is what the
    extractor itself says."""
    from thresher.extract.registry import extractor_info

    extractor = get_extractor(ExtractConfig())
    assert extractor_info(ExtractConfig()) == {"name": extractor.name, "version": extractor.version()}
