"""The catalogue of bad inputs: each kind is files to write and the exact outcome expected.

`expect` holds counters that must have exactly these values; `located` is a text the first
malformed record's location must contain (the file, and the line or byte offset) when given.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass, field
from typing import Any

ARTICLE = (
    "<html><head><title>T</title></head><body><article><h1>Head</h1><p>"
    + " ".join(f"Sentence {i} has words in it, and more words follow here." for i in range(12))
    + "</p></article></body></html>"
)


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def page(i: int = 0, **extra: Any) -> bytes:
    return line({"url": f"https://e.example/{i}", "html": ARTICLE.replace("Head", f"Head {i}"), **extra})


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zst(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def warc_record(block: bytes, wtype: str = "response", uri: str = "https://e.example/w", **headers: str) -> bytes:
    head = ["WARC/1.0", f"WARC-Type: {wtype}", f"WARC-Target-URI: {uri}", "WARC-Date: 2024-01-01T00:00:00Z",
            "WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000000>"]
    if wtype == "response":
        head.append("Content-Type: application/http; msgtype=response")
    head += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    head.append(f"Content-Length: {len(block)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + block + b"\r\n\r\n"


def http(body: bytes, ctype: str = "text/html; charset=utf-8", **headers: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", f"Content-Type: {ctype}"] + [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buf)
    return buf.getvalue()


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, Any]  # name -> bytes, or ("symlink", target)
    expect: dict[str, int]
    located: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    needs: str | None = None  # a module the case needs (skipped without it)


GOOD = page(1)
ARTICLE2 = ARTICLE.replace("Sentence", "Another sentence")
PAGES = b"".join(page(i) for i in range(200))  # distinct pages, two zstd blocks
CASES: list[Case] = [
    # -- JSON Lines: records ----------------------------------------------------------------------
    Case("invalid_json", {"a.jsonl": GOOD + b"{oops\n"}, {"kept": 1, "malformed/invalid_json": 1}, "a.jsonl:2"),
    Case("array_line", {"a.jsonl": b"[]\n" + GOOD}, {"kept": 1, "malformed/not_an_object": 1}, "a.jsonl:1"),
    Case("number_line", {"a.jsonl": b"42\n"}, {"malformed/not_an_object": 1}, "a.jsonl:1"),
    Case("string_line", {"a.jsonl": b'"just a string"\n'}, {"malformed/not_an_object": 1}, "a.jsonl:1"),
    Case("null_line", {"a.jsonl": b"null\n"}, {"malformed/not_an_object": 1}, "a.jsonl:1"),
    Case("missing_url", {"a.jsonl": line({"text": "x"})}, {"malformed/missing_url": 1}, "a.jsonl:1"),
    Case("url_not_string", {"a.jsonl": line({"url": 5, "text": "x"})}, {"malformed/wrong_type": 1}, "a.jsonl:1"),
    Case("html_not_string", {"a.jsonl": line({"url": "u", "html": [1]})}, {"malformed/wrong_type": 1}, "a.jsonl:1"),
    Case(
        "text_not_string", {"a.jsonl": line({"url": "u", "text": {"a": 1}})}, {"malformed/wrong_type": 1}, "a.jsonl:1"
    ),
    Case("no_content", {"a.jsonl": line({"url": "u"})}, {"malformed/missing_content": 1}, "a.jsonl:1"),
    Case("empty_lines", {"a.jsonl": b"\n\n" + GOOD + b"\n"}, {"kept": 1, "event/empty_line": 3}),
    Case("whitespace_line", {"a.jsonl": b" \t \n" + GOOD}, {"kept": 1, "event/empty_line": 1}),
    Case("empty_file", {"a.jsonl": b""}, {"seen": 0, "event/empty_file": 1}),
    Case(
        "invalid_utf8", {"a.jsonl": GOOD.replace(b"Head 1", b"Head \xff\xfe 1")}, {"kept": 1, "event/invalid_utf8": 1}
    ),
    Case("nul_in_line", {"a.jsonl": b'{"url": "u", \x00 "text": "x"}\n'}, {"malformed/invalid_json": 1}, "a.jsonl:1"),
    Case("utf8_bom", {"a.jsonl": b"\xef\xbb\xbf" + GOOD}, {"kept": 1, "event/utf8_bom": 1, "malformed": 0}),
    Case(
        "utf16le_bom",
        {"a.jsonl": "\ufeff".encode("utf-16-le") + GOOD.decode().encode("utf-16-le")},
        {"malformed/utf16_input": 1},
        "a.jsonl",
    ),
    Case("utf16be_no_bom", {"a.jsonl": GOOD.decode().encode("utf-16-be")}, {"malformed/utf16_input": 1}, "a.jsonl"),
    Case(
        "lone_surrogate",
        {"a.jsonl": GOOD.replace(b"Head 1", b"Head \\ud800 1")},
        {"kept": 1, "event/lone_surrogate": 1},
    ),
    Case(
        "lone_low_surrogate_key",
        {"a.jsonl": page(1, x=1).replace(b'"x"', b'"\\udc00"')},
        {"kept": 1, "event/lone_surrogate": 1},
    ),
    Case(
        "nan",
        {"a.jsonl": page(1, score=0).replace(b'"score": 0', b'"score": NaN')},
        {"kept": 1, "event/non_finite_number": 1},
    ),
    Case(
        "infinity",
        {"a.jsonl": page(1, s=0).replace(b'"s": 0', b'"s": Infinity')},
        {"kept": 1, "event/non_finite_number": 1},
    ),
    Case(
        "minus_infinity",
        {"a.jsonl": page(1, s=0).replace(b'"s": 0', b'"s": -Infinity')},
        {"kept": 1, "event/non_finite_number": 1},
    ),
    Case(
        "overflowing_float",
        {"a.jsonl": page(1, s=0).replace(b'"s": 0', b'"s": 1e999')},
        {"kept": 1, "event/non_finite_number": 1},
    ),
    Case(
        "nan_refused",
        {"a.jsonl": page(1, s=0).replace(b'"s": 0', b'"s": NaN')},
        {"malformed/non_finite_number": 1},
        "a.jsonl:1",
        config={"input": {"non_finite": "refuse"}},
    ),
    Case(
        "deep_nesting", {"a.jsonl": b"[" * 200_000 + b"]" * 200_000 + b"\n"}, {"malformed/invalid_json": 1}, "a.jsonl:1"
    ),
    Case(
        "too_large_line",
        {"a.jsonl": page(1, pad="x" * 5000) + GOOD},
        {"kept": 1, "malformed/too_large": 1},
        "a.jsonl:1",
        config={"input": {"max_record_bytes": 4096}},
    ),
    Case("crlf", {"a.jsonl": GOOD.replace(b"\n", b"\r\n")}, {"kept": 1}),
    Case("no_final_newline", {"a.jsonl": GOOD.rstrip(b"\n")}, {"kept": 1}),
    Case("duplicate_keys", {"a.jsonl": GOOD.replace(b"{", b'{"url": "https://x.example/", ', 1)}, {"kept": 1}),
    Case(
        "blank_line_bomb",
        {"a.jsonl": gz(b"\n" * 3_000_000)},
        {"seen": 1, "malformed/too_many_bad_lines": 1, "event/empty_line": 1000},
        "a.jsonl:1001",
        config={"input": {"max_bad_lines_per_input": 1000}},
    ),
    Case(
        "junk_line_bomb",
        {"a.jsonl": gz(b"[]\n" * 500_000)},
        {"malformed/not_an_object": 1000, "malformed/too_many_bad_lines": 1},
        "a.jsonl:1",
        config={"input": {"max_bad_lines_per_input": 1000}},
    ),
    # -- compression ---------------------------------------------------------------------------
    Case("gzip_truncated", {"a.jsonl.gz": gz(GOOD * 50)[:-40]}, {"malformed/truncated_input": 1}, "a.jsonl.gz"),
    Case(
        "gzip_garbage_after_magic",
        {"a.jsonl.gz": b"\x1f\x8b" + b"garbage" * 10},
        {"malformed/truncated_input": 1},
        "a.jsonl.gz",
    ),
    Case(
        "gzip_trailing_garbage",
        {"a.jsonl.gz": gz(GOOD) + b"\x00garbage"},
        {"kept": 1, "malformed/truncated_input": 1},
        "a.jsonl.gz",
    ),
    Case(
        "zstd_corrupt_mid_stream",
        {"a.jsonl.zst": (lambda d: d[:40] + bytes(64) + d[104:])(b"") if False else None},
        {},
        needs="zstandard",
    ),
    Case(
        "zstd_garbage_after_magic",
        {"a.jsonl.zst": b"\x28\xb5\x2f\xfd" + b"garbage" * 10},
        {"malformed/corrupt_input": 1},
        "a.jsonl.zst",
        needs="zstandard",
    ),
    Case("zstd_truncated", {"a.jsonl.zst": None}, {}, needs="zstandard"),
    Case("zstd_truncated_in_frame_header", {"a.jsonl.zst": None}, {}, needs="zstandard"),
    Case("zstd_two_frames", {"a.jsonl.zst": None}, {}, needs="zstandard"),
    Case("zstd_second_frame_cut", {"a.jsonl.zst": None}, {}, needs="zstandard"),
    Case("html_zst_truncated", {"d/a.html.zst": None}, {}, needs="zstandard"),
    # -- HTML files ----------------------------------------------------------------------------
    Case("html_empty", {"d/a.html": b""}, {"seen": 0, "event/empty_file": 1}),
    Case("html_binary", {"d/a.html": b"<" + bytes(range(256)) * 40}, {"drop/extract/binary_content": 1}),
    Case("html_nul_charset", {"d/a.html": b'<meta charset="ut\x00f-8">' + ARTICLE.encode()}, {"kept": 1}),
    Case("html_bogus_charset", {"d/a.html": b'<meta charset="no-such-codec">' + ARTICLE.encode()}, {"kept": 1}),
    Case(
        "html_gz_truncated",
        {"d/a.html.gz": gz(ARTICLE.encode() * 20)[:-30]},
        {"malformed/truncated_input": 1},
        "a.html.gz",
    ),
    Case("html_run_of_b", {"d/a.html": b"<b" * 20_000}, {"seen": 1}),
    Case("html_js_comparisons", {"d/a.html": b"<html><body><p>" + b"if(a<b&&c<d)" * 20_000}, {"seen": 1}),
    Case("html_open_quotes", {"d/a.html": b'<a "' * 20_000}, {"seen": 1}),
    Case("html_unclosed_comment", {"d/a.html": b"<p>x</p><!--" + b"<a " * 20_000}, {"seen": 1}),
    Case("html_unclosed_script", {"d/a.html": b"<p>x</p><script>" + b"var a = '<p>';" * 20_000}, {"seen": 1}),
    Case("html_deep_nesting", {"d/a.html": b"<div>" * 100_000 + ARTICLE.encode()}, {"seen": 1}),
    Case(
        "html_huge_attribute", {"d/a.html": b'<div class="' + b"x" * 2_000_000 + b'">' + ARTICLE.encode()}, {"seen": 1}
    ),
    # -- paths ---------------------------------------------------------------------------------
    Case(
        "dangling_symlink",
        {"d/a.jsonl": GOOD, "d/b.jsonl": ("symlink", "nowhere.jsonl")},
        {"kept": 1, "malformed/unreadable_file": 1},
        "b.jsonl",
    ),
    Case(
        "symlink_loop",
        {"d/a.jsonl": GOOD, "d/l1.jsonl": ("symlink", "l2.jsonl"), "d/l2.jsonl": ("symlink", "l1.jsonl")},
        {"kept": 1, "malformed/unreadable_file": 2},
        "l1.jsonl",
    ),
    Case("unknown_binary_file", {"d/a.bin": bytes(range(256)) * 4}, {"malformed/unknown_format": 1}, "a.bin"),
    # -- web archives --------------------------------------------------------------------------
    Case("warc_good", {"a.warc": warc_record(http(ARTICLE.encode()))}, {"kept": 1}),
    Case(
        "warc_nul_in_charset",
        {"a.warc": warc_record(http(ARTICLE.encode(), ctype="text/html; charset=ut\x00f-8"))},
        {"kept": 1},
    ),
    Case(
        "wet_nul_in_charset",
        {
            "a.warc": warc_record(
                b" ".join([b"plain text words"] * 30), wtype="conversion", Content_Type="text/plain; charset=\x00"
            )
        },
        {"kept": 1},
    ),
    # a Content-Length past the end of the file: the swallowed record is put back and read
    Case(
        "warc_length_too_long",
        {
            "a.warc": warc_record(http(ARTICLE.encode())).replace(b"Content-Length: ", b"Content-Length: 9")
            + warc_record(http(ARTICLE2.encode()), uri="https://e.example/2")
        },
        {"seen": 2, "kept": 1, "malformed/bad_content_length": 1},
        "a.warc@0",
    ),
    Case(
        "warc_garbage_between",
        {
            "a.warc": warc_record(http(ARTICLE.encode()))
            + b"garbage line\n" * 5
            + warc_record(http(ARTICLE2.encode()), uri="https://e.example/2")
        },
        {"kept": 2, "malformed/garbage": 1},
        "a.warc@",
    ),
    Case("warc_truncated", {"a.warc": warc_record(http(ARTICLE.encode()))[:300]}, {"kept": 0}),
    Case("warc_revisit", {"a.warc": warc_record(b"", wtype="revisit")}, {"kept": 0, "dropped": 1}),
    Case(
        "warc_image",
        {"a.warc": warc_record(http(b"\x89PNG\r\n\x1a\n" + bytes(500), ctype="image/png"))},
        {"kept": 0, "dropped": 1},
    ),
    Case(
        "warc_gzip_member_damaged",
        {
            "a.warc.gz": gz(warc_record(http(ARTICLE.encode())))[:-20]
            + gz(warc_record(http(ARTICLE.encode()), uri="https://e.example/2"))
        },
        {"seen": 2},
    ),
    Case(
        "warc_bad_chunked",
        {"a.warc": warc_record(http(b"zz\r\n" + ARTICLE.encode(), Transfer_Encoding="chunked"))},
        {"seen": 1},
    ),
    Case(
        "warc_bad_content_encoding",
        {"a.warc": warc_record(http(b"not gzip at all" * 10, Content_Encoding="gzip"))},
        {"seen": 1},
    ),
    # line bombs between records: blank lines (skipped a buffer at a time, counted past a record's
    # two) or junk lines past the cap are one burst, skipped, and the record after it is read
    Case(
        "warc_blank_line_bomb",
        {
            "a.warc.gz": gz(
                warc_record(http(ARTICLE.encode()))
                + b"\r\n" * 3_000_000
                + warc_record(http(ARTICLE2.encode()), uri="https://e.example/2")
            )
        },
        {"kept": 2, "malformed/too_many_bad_lines": 1},
        "a.warc.gz@",
        config={"input": {"max_bad_lines_per_input": 1000}},
    ),
    Case(
        "warc_blank_line_bomb_pure",
        {"a.warc.gz": gz(warc_record(http(ARTICLE.encode())) + b"\n" * 3_000_000)},
        {"kept": 1, "malformed/too_many_bad_lines": 1},
        "a.warc.gz@",
        config={"input": {"max_bad_lines_per_input": 1000, "warc": {"engine": "pure"}}},
    ),
    Case(
        "warc_junk_line_bomb",
        {"a.warc.gz": gz(warc_record(http(ARTICLE.encode())) + b"junk line\n" * 500_000)},
        {"kept": 1, "malformed/garbage": 1, "malformed/too_many_bad_lines": 1},
        "a.warc.gz@",
        config={"input": {"max_bad_lines_per_input": 1000}},
    ),
    Case(
        "warc_junk_line_bomb_then_record",
        {
            "a.warc.gz": gz(warc_record(http(ARTICLE.encode())))
            + gz(b"junk line\n" * 500_000)
            + gz(warc_record(http(ARTICLE2.encode()), uri="https://e.example/2"))
        },
        {"kept": 2, "malformed/garbage": 1, "malformed/too_many_bad_lines": 1},
        "a.warc.gz@",
        config={"input": {"max_bad_lines_per_input": 1000}},
    ),
    Case("warc_header_only", {"a.warc": b"WARC/1.0\r\nWARC-Type: response\r\n"}, {"kept": 0}),
    # -- Parquet -------------------------------------------------------------------------------
    Case("parquet_corrupt", {"a.parquet": b"PAR1" + b"garbage" * 50}, {"malformed": 1}, "a.parquet", needs="pyarrow"),
    Case("parquet_nan_metadata", {"a.parquet": None}, {"kept": 1}, needs="pyarrow"),
]


def _late_files() -> None:
    """Cases whose bytes need an optional package: built when the package is there."""
    for i, case in enumerate(CASES):
        if case.needs is None:
            continue
        try:
            __import__(case.needs)
        except ImportError:
            continue
        if case.name == "zstd_corrupt_mid_stream":
            data = zst(GOOD * 2000)
            corrupt = data[: len(data) // 2] + bytes(64) + data[len(data) // 2 + 64 :]
            CASES[i] = Case(
                case.name, {"a.jsonl.zst": corrupt}, {"malformed/corrupt_input": 1}, "a.jsonl.zst", needs="zstandard"
            )
        elif case.name == "zstd_truncated":
            # python-zstandard ends a cut frame silently; the frame walker names it, at the line where
            # the stream broke (the records decoded before the cut are kept; the second block is lost)
            data = zst(PAGES)
            CASES[i] = Case(
                case.name,
                {"a.jsonl.zst": data[: len(data) - 10]},
                {"seen": 161, "malformed/truncated_input": 1, "malformed/invalid_json": 0},
                "a.jsonl.zst:161",
                needs="zstandard",
            )
        elif case.name == "zstd_truncated_in_frame_header":
            CASES[i] = Case(case.name, {"a.jsonl.zst": zst(PAGES)[:6]}, {"seen": 1, "malformed/truncated_input": 1},
                            "a.jsonl.zst:1", needs="zstandard")
        elif case.name == "zstd_two_frames":  # `cat a.zst b.zst`: both frames read, nothing reported
            CASES[i] = Case(
                case.name,
                {"a.jsonl.zst": zst(GOOD) + zst(line({"url": "https://e.example/2", "html": ARTICLE2}))},
                {"kept": 2, "malformed": 0},
                needs="zstandard",
            )
        elif case.name == "zstd_second_frame_cut":
            CASES[i] = Case(
                case.name,
                {"a.jsonl.zst": zst(page(1)) + zst(page(2))[:-3]},
                {"kept": 1, "malformed/truncated_input": 1},
                "a.jsonl.zst:2",
                needs="zstandard",
            )
        elif case.name == "html_zst_truncated":
            CASES[i] = Case(
                case.name,
                {"d/a.html.zst": zst(ARTICLE.encode() * 20)[:-5]},
                {"seen": 1, "malformed/truncated_input": 1},
                "a.html.zst",
                needs="zstandard",
            )
        elif case.name == "parquet_nan_metadata":
            rows = [{"url": "https://e.example/p", "html": ARTICLE, "score": float("nan")}]
            CASES[i] = Case(case.name, {"a.parquet": parquet_bytes(rows)}, {"kept": 1}, needs="pyarrow")


_late_files()
