"""URL hygiene: one canonical spelling per page, a counted reason for every other line."""

from __future__ import annotations

import pytest

from thresher.fetch.config import NON_PAGE_EXTENSIONS, TRACKING_PARAMS
from thresher.fetch.urls import Rejected, host_key, normalize_url


def norm(text: str) -> str | Rejected:
    return normalize_url(text, tracking_params=TRACKING_PARAMS, skip_extensions=NON_PAGE_EXTENSIONS, max_chars=2048)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("HTTP://Example.COM:80/a/./b/../c?id=1#frag", "http://example.com/a/c?id=1"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://example.com/?utm_source=x&utm_medium=y&fbclid=z&id=7&gclid=q", "http://example.com/?id=7"),
        ("http://example.com/%7euser/%2f%41 b", "http://example.com/~user/%2FA%20b"),
        ("http://example.com/caf\u00e9", "http://example.com/caf%C3%A9"),
        ("https://\u4f8b\u3048.jp/", "https://xn--r8jz45g.jp/"),
        ("http://B\u00fccher.example/", "http://xn--bcher-kva.example/"),
        ("http://example.com./", "http://example.com/"),
        ("  http://example.com/page  ", "http://example.com/page"),
    ],
)
def test_urls_are_normalised_to_one_spelling(raw: str, canonical: str) -> None:
    assert norm(raw) == canonical


@pytest.mark.parametrize(
    ("raw", "address"),
    [
        ("http://2130706433/", "127.0.0.1"),  # decimal
        ("http://017700000001/", "127.0.0.1"),  # octal
        ("http://0x7f000001/", "127.0.0.1"),  # hex
        ("http://0x7f.1/", "127.0.0.1"),  # mixed, two parts
        ("http://0177.0.0.01/", "127.0.0.1"),
        ("http://10.1/", "10.0.0.1"),
        ("http://[::FFFF:127.0.0.1]/", "[::ffff:7f00:1]"),
    ],
)
def test_numeric_host_spellings_become_the_address_they_reach(raw: str, address: str) -> None:
    url = norm(raw)
    assert isinstance(url, str) and host_key(url) == address


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "blank"),
        ("   ", "blank"),
        ("not a url at all", "no_scheme"),
        ("\x00\x01\x02garbage", "no_scheme"),
        ("www.example.com/page", "no_scheme"),
        ("javascript:alert(1)", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("ftp://example.com/x", "scheme"),
        ("mailto:someone@example.com", "scheme"),
        ("http://example.com/" + "a" * 10_000, "too_long"),
        ("http://user:pass@example.com/", "userinfo"),
        ("http://example.com:99999/", "bad_port"),
        ("http://256.1.1.1/", "bad_host"),
        ("http:///nohost", "bad_host"),
        ("http://exa mple.com/", "bad_host"),
        ("http://example.com/photo.JPG", "non_page_extension"),
        ("http://example.com/paper.pdf?download=1", "non_page_extension"),
    ],
)
def test_unfetchable_lines_are_rejected_with_a_reason(raw: str, reason: str) -> None:
    result = norm(raw)
    assert isinstance(result, Rejected) and result.reason == reason


def test_tracking_list_is_configurable_with_prefix_patterns() -> None:
    url = "http://example.com/?ref=home&refx=1&keep=2"
    assert normalize_url(url, tracking_params=("ref",)) == "http://example.com/?refx=1&keep=2"
    assert normalize_url(url, tracking_params=("ref*",)) == "http://example.com/?keep=2"
    assert normalize_url(url) == url


def test_normalisation_is_idempotent() -> None:
    for raw in ("HTTP://Example.COM:80/a/../b?utm_x=1&a=%7e", "https://\u4f8b\u3048.jp/\u30d1", "http://0x7f.1:8080/x/./y"):
        once = norm(raw)
        assert isinstance(once, str)
        assert norm(once) == once
