"""Decompression bombs are refused under a cap; real compressed pages pass."""

from __future__ import annotations

import gzip
import zlib

import pytest

from thresher.fetch.payload import DecodeProblem, check_decoded_size

MB = 1024 * 1024


def test_a_gzip_bomb_is_refused_by_ratio() -> None:
    bomb = gzip.compress(b"\0" * (30 * MB))
    problem = check_decoded_size(bomb, "gzip", 20 * MB, 100.0)
    assert isinstance(problem, DecodeProblem) and problem.reason == "decompression_bomb"
    assert problem.limit == 100.0 and problem.value is not None and problem.value > 100


def test_a_brotli_bomb_is_refused() -> None:
    brotli = pytest.importorskip("brotli")
    problem = check_decoded_size(brotli.compress(b"a" * (8 * MB), quality=1), "br", 20 * MB, 100.0)
    assert isinstance(problem, DecodeProblem) and problem.reason == "decompression_bomb"


def test_a_large_body_under_the_ratio_is_refused_by_size() -> None:
    problem = check_decoded_size(gzip.compress(b"ab" * (4 * MB), compresslevel=1), "gzip", 2 * MB, 1000.0)
    assert isinstance(problem, DecodeProblem) and problem.reason == "decoded_too_large"


def test_pages_and_small_repetitive_bodies_pass() -> None:
    page = b"<html><body>" + b"<p>some text of a page</p>" * 2000 + b"</body></html>"
    assert check_decoded_size(gzip.compress(page), "gzip", 20 * MB, 100.0) == len(page)
    assert check_decoded_size(zlib.compress(page), "deflate", 20 * MB, 100.0) == len(page)
    raw_deflate = zlib.compressobj(wbits=-15)
    body = raw_deflate.compress(page) + raw_deflate.flush()
    assert check_decoded_size(body, "deflate", 20 * MB, 100.0) == len(page)
    assert check_decoded_size(b"x" * 10, "identity", 20 * MB, 100.0) == 10


def test_corrupt_and_unknown_encodings_are_named() -> None:
    assert check_decoded_size(b"not gzip", "gzip", MB, 100.0).reason == "bad_encoding"  # type: ignore[union-attr]
    assert check_decoded_size(b"x", "compress", MB, 100.0).reason == "unsupported_encoding"  # type: ignore[union-attr]
